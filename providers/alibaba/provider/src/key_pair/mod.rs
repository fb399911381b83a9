//! The `KeyPair` kind (entry: [`key_pair_controller`]): an SSH key pair imported from
//! `publicKey`, or from an RSA 2048 key made by ferroplane (`generated_key`) whose private key is
//! stored in the connection Secret, and nowhere else, before the pair is made (ImportKeyPair in
//! both cases), deleted with the object. ECSInstances name it
//! through `keyPairNameRef` / `keyPairNameSelector`.
//!
//! It uses the shared connector (`crate::cloud_connector`, errors mapped by `crate::cloud_error`)
//! and the framework's guarantees (`ferroplane.io/uid` tag, ownership verdicts).

mod external;
mod generated_key;

use ferroplane_apis::alibabacloud::KeyPair;
use ferroplane_runtime::{ControllerConfig, ManagedController, Runtime};

use crate::cloud_connector::{CloudConnector, CloudKind};
use crate::config_watches::watch_provider_configs;
use crate::options::Options;

/// Name of the managed kind in metrics and logs.
pub const KIND: &str = "KeyPair";

/// The KeyPair controller.
pub(crate) fn key_pair_controller(
    runtime: &Runtime,
    options: &Options,
) -> ManagedController<KeyPair, CloudConnector> {
    let client = runtime.client().clone();
    let connector = CloudConnector::new(client.clone(), options, runtime.external_calls(KIND));
    let resolved = connector.configs();
    let controller = ManagedController::new(runtime, options.api(&client), connector).with_config(
        ControllerConfig {
            concurrency: options.max_concurrent_reconciles,
            requeue: options.requeue_policy(),
        },
    );
    watch_provider_configs(controller, &client, options, resolved, None)
}

impl CloudKind for KeyPair {
    const PRODUCT: &'static str = "ecs";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}
