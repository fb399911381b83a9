//! The `KeyPair` kind's external client: `ImportKeyPair` from `publicKey`, else from a private
//! key made here and stored in the connection Secret before any cloud call (see
//! `generated_key`; retained there afterwards), `DescribeKeyPairs` by name, `DeleteKeyPairs`. The
//! external name is the key pair's name.

use alibaba_sdk::ecs::{KeyPair as CloudKeyPair, Tag};
use ferroplane_apis::alibabacloud::{KeyPair, KeyPairObservation};
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, UID_TAG, Update,
};
use kube::ResourceExt;

use super::generated_key::{self, generate};
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::{non_empty, uid_tagged};
use crate::reasons::{KEY_NOT_GENERATED, STORED_KEY_UNREADABLE};

/// Connection Secret keys.
const CONN_NAME: &str = "keyPairName";
const CONN_FINGERPRINT: &str = "fingerPrint";
/// The generated private key (PEM), written once.
pub(crate) const CONN_PRIVATE_KEY: &str = "privateKey";

/// The key pair's name in ECS: `keyPairName`, else the object's name.
pub(crate) fn key_pair_name(mr: &KeyPair) -> String {
    mr.spec
        .for_provider
        .key_pair_name
        .clone()
        .unwrap_or_else(|| mr.name_any())
}

fn details(name: &str, fingerprint: &str) -> ConnectionDetails {
    ConnectionDetails::new()
        .with(CONN_NAME, name.as_bytes())
        .with(CONN_FINGERPRINT, fingerprint.as_bytes())
        .retaining(CONN_PRIVATE_KEY)
}

fn tag<'a>(pair: &'a CloudKeyPair, key: &str) -> Option<&'a str> {
    pair.tags
        .items
        .iter()
        .find(|t| t.key == key)
        .map(|t| t.value.as_str())
}

impl ExternalClient<KeyPair> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    async fn observe(
        &self,
        mr: &KeyPair,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        let name = ext.name().map_or_else(|| key_pair_name(mr), str::to_owned);
        let found = self
            .call("DescribeKeyPairs", self.region.ecs.describe_key_pair(&name))
            .await?;
        let Some(pair) = found else {
            return Ok(Observation::missing());
        };
        let status = serde_json::json!({
            "atProvider": KeyPairObservation {
                key_pair_name: non_empty(&pair.key_pair_name),
                finger_print: non_empty(&pair.key_pair_finger_print),
                creation_time: non_empty(&pair.creation_time),
            }
        });
        Ok(Observation::found(&pair.key_pair_name)
            .with_owner_tag(tag(&pair, UID_TAG))
            .with_status(status)?
            .with_readiness(Readiness::Available)
            .with_connection_details(details(&pair.key_pair_name, &pair.key_pair_finger_print)))
    }

    /// A generated key pair's private key, made here once: the framework stores it in the
    /// connection Secret before [`Self::create_with_secrets`] imports its public half.
    fn secrets_before_create(
        &self,
        mr: &KeyPair,
        stored: &ConnectionDetails,
    ) -> Option<ConnectionDetails> {
        if mr.spec.for_provider.public_key.is_some() || stored.get(CONN_PRIVATE_KEY).is_some() {
            return None;
        }
        // A failure here leaves the details without the key; create refuses then.
        let pem = generate().ok()?;
        Some(ConnectionDetails::new().with(CONN_PRIVATE_KEY, pem.into_bytes()))
    }

    async fn create(&self, mr: &KeyPair, key: &IdempotencyKey) -> Result<Creation, ReconcileError> {
        self.create_with_secrets(mr, key, &ConnectionDetails::new())
            .await
    }

    async fn create_with_secrets(
        &self,
        mr: &KeyPair,
        key: &IdempotencyKey,
        stored: &ConnectionDetails,
    ) -> Result<Creation, ReconcileError> {
        let p = &mr.spec.for_provider;
        let name = key_pair_name(mr);
        let tags = uid_tagged(p.tags.as_ref(), key.uid(), |k, v| Tag::new(k, v));
        let public_key = match (&p.public_key, stored.get(CONN_PRIVATE_KEY)) {
            (Some(public_key), _) => public_key.clone(),
            (None, Some(private_key)) => {
                generated_key::public_key_of(private_key).map_err(|e| {
                    ReconcileError::terminal(
                        STORED_KEY_UNREADABLE,
                        format!(
                            "the privateKey in the connection Secret cannot be used: {e}; delete that entry (or the Secret) to have a new key made"
                        ),
                    )
                })?
            }
            (None, None) => {
                return Err(ReconcileError::retryable(
                    KEY_NOT_GENERATED,
                    "no private key could be made and stored for this key pair yet; it is tried again",
                ));
            }
        };
        let created = self
            .call(
                "ImportKeyPair",
                self.region.ecs.import_key_pair(&name, &public_key, &tags),
            )
            .await?;
        Ok(
            Creation::new(&created.key_pair_name).with_connection_details(details(
                &created.key_pair_name,
                &created.key_pair_finger_print,
            )),
        )
    }

    async fn update(&self, _mr: &KeyPair, _ext: &ExternalRef) -> Result<Update, ReconcileError> {
        // Every field is fixed at creation (CEL refuses changes).
        Ok(Update::done())
    }

    async fn claim(&self, _mr: &KeyPair, ext: &ExternalRef) -> Result<(), ReconcileError> {
        let name = ext.name().unwrap_or_default();
        self.call(
            "TagResources",
            self.region
                .ecs
                .tag_key_pair(name, &[Tag::new(UID_TAG, &ext.uid)]),
        )
        .await
    }

    async fn delete(&self, _mr: &KeyPair, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        let Some(name) = ext.name() else {
            return Ok(Deletion::Gone);
        };
        let exists = self
            .call("DescribeKeyPairs", self.region.ecs.describe_key_pair(name))
            .await?
            .is_some();
        if !exists {
            return Ok(Deletion::Gone);
        }
        match self
            .raw(
                "DeleteKeyPairs",
                self.region.ecs.delete_key_pairs(&[name.to_owned()]),
            )
            .await
        {
            Ok(()) => Ok(Deletion::InProgress),
            Err(e) if e.code() == Some("InvalidParameter.KeypairAlreadyAttachedInstance") => {
                Ok(Deletion::Waiting(format!(
                    "key pair {name} is still attached to instances; it is deleted once they are gone or use another key pair"
                )))
            }
            Err(e) => Err(self.error(&e)),
        }
    }
}
