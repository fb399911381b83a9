//! The connection Secret (`spec.writeConnectionSecretToRef`): the provider's connection
//! details written to a Secret in the object's namespace, owned by the object (garbage-collected
//! with it) and rewritten only when the details change. A Secret the object does not control
//! (an existing credentials Secret, another application's) is never written, so never collected.
//!
//! A digest of the last published details per Secret is kept in memory, so a steady-state poll
//! costs no API call at all; after a restart, and every [`RECHECK_AFTER`] (in case someone
//! deleted or edited the Secret), a reconcile reads the Secret once.
//!
//! A secret may exist only once. One the kind makes itself (a key pair's private key, see
//! `ExternalClient::secrets_before_create`) is written here before the create, so nothing can
//! lose it. One the cloud returns from a create is not even asked for while the Secret's name is
//! taken by a Secret the object does not control ([`ConnectionSecrets::read_for_create`]), and is
//! held in memory ([`ConnectionSecrets::hold`]) until a publish writes it: a write that fails
//! after the create (the name taken meanwhile, the API server down) is retried with it, and the
//! object is not Ready until then; only a restart of the process in that window loses it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ferroplane_apis::common::LocalSecretReference;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use sha2::{Digest, Sha256};

use crate::connection_details::ConnectionDetails;
use crate::error::ReconcileError;
use crate::field_manager::FIELD_MANAGER;
use crate::reasons::{CONNECTION_SECRET_NOT_CONTROLLED, OWNER_HAS_NO_UID};

/// How long a published digest is trusted before the Secret is read again.
pub const RECHECK_AFTER: Duration = Duration::from_secs(600);

/// Namespace and name of a Secret.
type SecretKey = (String, String);
/// Digest of what was written, and when it was last confirmed.
type Published = ([u8; 32], Instant);

/// Publishes connection Secrets for one controller.
pub struct ConnectionSecrets {
    client: Client,
    published: Mutex<HashMap<SecretKey, Published>>,
    /// Details of a create not written yet, with the UID of the object they belong to.
    held: Mutex<HashMap<SecretKey, (String, ConnectionDetails)>>,
}

impl ConnectionSecrets {
    pub fn new(client: Client) -> Self {
        Self {
            client,
            published: Mutex::new(HashMap::new()),
            held: Mutex::new(HashMap::new()),
        }
    }

    /// What the Secret holds (empty when it does not exist yet), read before a create; refused
    /// when the Secret exists and `owner` does not control it, since the create's details may
    /// exist only once and could then not be stored.
    pub async fn read_for_create<K: Resource<DynamicType = ()>>(
        &self,
        owner: &K,
        target: &LocalSecretReference,
    ) -> Result<ConnectionDetails, ReconcileError> {
        let (namespace, owner_uid) = owner_keys(owner);
        let what = format!("cannot write connection Secret {namespace}/{}", target.name);
        let api: Api<Secret> = Api::namespaced(self.client.clone(), &namespace);
        let live = api
            .get_opt(&target.name)
            .await
            .map_err(|e| ReconcileError::kube(&what, e))?;
        match live {
            Some(live) if !controls(&live, &owner_uid) => Err(not_controlled(
                &format!("{what} (nothing is created until it can be)"),
                &live,
            )),
            Some(live) => Ok(live
                .data
                .map(|data| ConnectionDetails::from(to_plain(&data)))
                .unwrap_or_default()),
            None => Ok(ConnectionDetails::new()),
        }
    }

    /// Keeps `details` (what a create returned) until a [`publish`](Self::publish) for the
    /// same object writes them.
    pub fn hold<K: Resource<DynamicType = ()>>(
        &self,
        owner: &K,
        target: &LocalSecretReference,
        details: &ConnectionDetails,
    ) {
        if details.is_empty() {
            return;
        }
        let (namespace, owner_uid) = owner_keys(owner);
        self.held.lock().unwrap_or_else(|p| p.into_inner()).insert(
            (namespace, target.name.clone()),
            (owner_uid, details.clone()),
        );
    }

    /// The keys of details held for `owner`'s Secret and not written yet.
    pub fn held_keys<K: Resource<DynamicType = ()>>(
        &self,
        owner: &K,
        target: &LocalSecretReference,
    ) -> Vec<String> {
        let (namespace, owner_uid) = owner_keys(owner);
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(namespace, target.name.clone()))
            .filter(|(uid, _)| *uid == owner_uid)
            .map(|(_, d)| d.as_map().keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Makes the Secret hold exactly `details`, owned by `owner`. Returns whether it wrote.
    ///
    /// A Secret that exists and is not controlled by `owner` (no controller owner reference with
    /// its UID) is never written: a credentials Secret or another application's password must not
    /// be overwritten, nor become garbage-collected with the managed object.
    pub async fn publish<K: Resource<DynamicType = ()>>(
        &self,
        owner: &K,
        target: &LocalSecretReference,
        details: &ConnectionDetails,
    ) -> Result<bool, ReconcileError> {
        let (namespace, owner_uid) = owner_keys(owner);
        let key = (namespace.clone(), target.name.clone());
        // What a create returned and no write has stored yet goes in with these details.
        let mut details = details.clone();
        let held = self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .filter(|(uid, _)| *uid == owner_uid)
            .map(|(_, held)| held.clone());
        if let Some(held) = &held {
            for (k, v) in held.as_map() {
                if details.get(k).is_none() {
                    details.insert(k.clone(), v.clone());
                }
            }
        }
        let written = self
            .write(owner, &namespace, &owner_uid, target, &details)
            .await?;
        if held.is_some() {
            self.held
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&key);
        }
        Ok(written)
    }

    async fn write<K: Resource<DynamicType = ()>>(
        &self,
        owner: &K,
        namespace: &str,
        owner_uid: &str,
        target: &LocalSecretReference,
        details: &ConnectionDetails,
    ) -> Result<bool, ReconcileError> {
        let namespace = namespace.to_owned();
        let key = (namespace.clone(), target.name.clone());
        let digest = digest(owner_uid, details);
        if self.cached(&key) == Some(digest) {
            return Ok(false);
        }
        let api: Api<Secret> = Api::namespaced(self.client.clone(), &namespace);
        let what = format!("cannot write connection Secret {namespace}/{}", target.name);
        let live = api
            .get_opt(&target.name)
            .await
            .map_err(|e| ReconcileError::kube(&what, e))?;
        let mut details = details.clone();
        if let Some(live) = &live {
            if !controls(live, owner_uid) {
                return Err(not_controlled(&what, live));
            }
            // A retained value (returned once by the cloud) stays while the details lack it.
            let kept: Vec<(String, Vec<u8>)> = details
                .retained()
                .filter(|k| details.get(k).is_none())
                .filter_map(|k| {
                    let value = live.data.as_ref()?.get(k)?;
                    Some((k.to_owned(), value.0.clone()))
                })
                .collect();
            for (key, value) in kept {
                details.insert(key, value);
            }
            if live.data.as_ref().map(to_plain) == Some(details.as_map().clone()) {
                self.remember(key, digest);
                return Ok(false);
            }
        }
        let owner_ref = owner.controller_owner_ref(&()).ok_or_else(|| {
            ReconcileError::retryable(
                OWNER_HAS_NO_UID,
                format!("{what}: the object has no uid yet"),
            )
        })?;
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(target.name.clone()),
                namespace: Some(namespace.clone()),
                owner_references: Some(vec![owner_ref]),
                // The precondition: a Secret replaced since it was read is not written.
                resource_version: live
                    .as_ref()
                    .and_then(|l| l.metadata.resource_version.clone()),
                ..ObjectMeta::default()
            },
            data: Some(
                details
                    .as_map()
                    .iter()
                    .map(|(k, v)| (k.clone(), ByteString(v.clone())))
                    .collect(),
            ),
            type_: Some("Opaque".to_owned()),
            ..Secret::default()
        };
        let written = match live {
            // Create, never apply: a Secret someone makes meanwhile is a conflict, not ours.
            None => {
                let params = PostParams {
                    field_manager: Some(FIELD_MANAGER.to_owned()),
                    ..PostParams::default()
                };
                api.create(&params, &secret).await.map(drop)
            }
            Some(_) => {
                let params = PatchParams::apply(FIELD_MANAGER).force();
                api.patch(&target.name, &params, &Patch::Apply(&secret))
                    .await
                    .map(drop)
            }
        };
        written.map_err(|e| ReconcileError::kube(&what, e))?;
        self.remember(key, digest);
        Ok(true)
    }

    fn cached(&self, key: &(String, String)) -> Option<[u8; 32]> {
        self.published
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .filter(|(_, at)| at.elapsed() < RECHECK_AFTER)
            .map(|(digest, _)| *digest)
    }

    fn remember(&self, key: (String, String), digest: [u8; 32]) {
        self.published
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, (digest, Instant::now()));
    }

    /// Forgets what was published and held for an object's Secret (the object is gone).
    pub fn forget(&self, namespace: &str, name: &str) {
        let key = (namespace.to_owned(), name.to_owned());
        self.published
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
    }
}

/// The Secret's namespace (the owner's) and the owner's UID.
fn owner_keys<K: Resource<DynamicType = ()>>(owner: &K) -> (String, String) {
    (
        owner.namespace().unwrap_or_else(|| "default".to_owned()),
        owner.meta().uid.clone().unwrap_or_default(),
    )
}

/// Whether `owner_uid` is the controller of `secret`.
fn controls(secret: &Secret, owner_uid: &str) -> bool {
    secret
        .owner_references()
        .iter()
        .any(|o| o.controller == Some(true) && o.uid == owner_uid)
}

/// The refusal to write `secret`; names its controller when it has one (owner references are
/// namespace-local, so that object is in the same namespace).
fn not_controlled(what: &str, secret: &Secret) -> ReconcileError {
    let controller = secret
        .owner_references()
        .iter()
        .find(|o| o.controller == Some(true));
    let whose = match controller {
        Some(other) => format!("it is controlled by {} {}", other.kind, other.name),
        None => "it exists and was not created for this object".to_owned(),
    };
    ReconcileError::terminal(
        CONNECTION_SECRET_NOT_CONTROLLED,
        format!(
            "{what}: {whose}, and ferroplane writes only connection Secrets it controls; it is left unchanged. \
             Choose another spec.writeConnectionSecretToRef.name, or delete that Secret if it is not needed"
        ),
    )
}

fn to_plain(data: &BTreeMap<String, ByteString>) -> BTreeMap<String, Vec<u8>> {
    data.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect()
}

/// Digest of owner and details; lengths are included so that no two maps collide by
/// concatenation.
fn digest(owner_uid: &str, details: &ConnectionDetails) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(owner_uid.as_bytes());
    for (k, v) in details.as_map() {
        h.update((k.len() as u64).to_le_bytes());
        h.update(k.as_bytes());
        h.update((v.len() as u64).to_le_bytes());
        h.update(v);
    }
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn secret_owned_by(uid: &str, controller: Option<bool>) -> Secret {
        Secret {
            metadata: ObjectMeta {
                owner_references: Some(vec![OwnerReference {
                    api_version: "x/v1".into(),
                    kind: "Widget".into(),
                    name: "w".into(),
                    uid: uid.into(),
                    controller,
                    block_owner_deletion: None,
                }]),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        }
    }

    #[test]
    fn only_a_controller_reference_with_the_uid_controls() {
        assert!(controls(&secret_owned_by("u", Some(true)), "u"));
        assert!(!controls(&secret_owned_by("u", None), "u"));
        assert!(!controls(&secret_owned_by("v", Some(true)), "u"));
        assert!(!controls(&Secret::default(), "u"));
    }

    #[test]
    fn the_refusal_says_what_to_do() {
        let err = not_controlled("cannot write connection Secret ns/s", &Secret::default());
        assert_eq!(err.reason(), CONNECTION_SECRET_NOT_CONTROLLED);
        assert!(
            err.message().contains("not created for this object"),
            "{err}"
        );
        let err = not_controlled("w", &secret_owned_by("v", Some(true)));
        assert!(err.message().contains("controlled by Widget w"), "{err}");
    }

    #[test]
    fn digest_distinguishes_boundaries_and_owners() {
        let a = ConnectionDetails::new().with("ab", "c");
        let b = ConnectionDetails::new().with("a", "bc");
        assert_ne!(digest("u", &a), digest("u", &b));
        assert_ne!(digest("u1", &a), digest("u2", &a));
        assert_eq!(digest("u", &a), digest("u", &a.clone()));
    }
}
