//! Network API failures → [`ReconcileError`]: the ECSInstance's mapping, except that a RAM denial
//! names the product's own permission (`vpc:CreateVSwitch`, `ecs:CreateSecurityGroup`).

use alibaba_sdk::Error;
use ferroplane_runtime::{ReconcileError, RetryClass};

use crate::ecs_instance::reconcile_error;

/// `product` is the RAM service prefix of the API the kind calls (`vpc` or `ecs`).
pub(crate) fn network_error(err: &Error, config: &str, product: &str) -> ReconcileError {
    if err.is_forbidden() && !err.is_bad_credentials() {
        let action = err.api().map_or("", |api| api.action.as_str());
        return ReconcileError::new(
            "Forbidden",
            format!(
                "the RAM user or role of {config} is not allowed to call {action}: grant it the RAM permission {product}:{action} [{err}]"
            ),
            RetryClass::UntilSpecChanges,
        );
    }
    reconcile_error(err, config)
}
