//! Lenient decoding of the managed kind's watch. One object that does not fit the Rust type
//! (version skew between the CRD and the binary, a hand-loosened schema) would otherwise fail
//! every list of the kind and stop all its objects. Instead the watch decodes each object on
//! its own: objects that fit flow on to the controller, an object that does not is left out and
//! told why (`Synced=False` with the decoding error, and a Warning event), once per generation.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use ferroplane_apis::common::{Condition, ConditionStatus, names};
use futures::{Stream, StreamExt};
use jiff::Timestamp;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Resource;
use kube::api::{Api, Patch, PatchParams};
use kube::core::{DeserializeGuard, error_boundary::InvalidObject};
use kube::runtime::events::{Event, EventType};
use kube::runtime::watcher;
use serde::de::DeserializeOwned;
use serde_json::json;
use tracing::warn;

use crate::events::EventRecorder;
use crate::field_manager::FIELD_MANAGER;
use crate::reasons::{CANNOT_DECODE, RECONCILE_ERROR};

/// Watches `api` like [`watcher`], leaving out (and reporting) objects that do not decode as `K`.
pub fn lenient_watcher<K>(
    api: Api<K>,
    config: watcher::Config,
    recorder: EventRecorder,
) -> impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    let namespace = api.namespace().map(str::to_owned);
    let client = api.into_client();
    let guarded: Api<DeserializeGuard<K>> = match &namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    let reporter = Arc::new(Reporter {
        api: guarded.clone(),
        recorder,
        reported: Mutex::default(),
    });
    watcher(guarded, config).filter_map(move |event| {
        let reporter = reporter.clone();
        async move {
            let decoded = match event {
                Ok(event) => event,
                Err(e) => return Some(Err(e)),
            };
            let mapped = match decoded {
                watcher::Event::Apply(g) => reporter.keep(g).map(watcher::Event::Apply),
                watcher::Event::InitApply(g) => reporter.keep(g).map(watcher::Event::InitApply),
                // An undecodable object was never handed on, so its deletion is not either.
                watcher::Event::Delete(g) => g.0.ok().map(watcher::Event::Delete),
                watcher::Event::Init => Some(watcher::Event::Init),
                watcher::Event::InitDone => Some(watcher::Event::InitDone),
            };
            mapped.map(Ok)
        }
    })
}

struct Reporter<K>
where
    K: Resource<DynamicType = ()>,
{
    api: Api<DeserializeGuard<K>>,
    recorder: EventRecorder,
    /// Generation last reported per UID: our own status write must not report again.
    reported: Mutex<HashMap<String, Option<i64>>>,
}

impl<K> Reporter<K>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    fn keep(&self, guard: DeserializeGuard<K>) -> Option<K> {
        match guard.0 {
            Ok(obj) => Some(obj),
            Err(invalid) => {
                self.report(invalid);
                None
            }
        }
    }

    fn report(&self, invalid: InvalidObject) {
        let uid = invalid.metadata.uid.clone().unwrap_or_default();
        {
            let mut seen = self.reported.lock().unwrap_or_else(|p| p.into_inner());
            if seen.get(&uid) == Some(&invalid.metadata.generation) {
                return;
            }
            seen.insert(uid, invalid.metadata.generation);
        }
        let name = invalid.metadata.name.clone().unwrap_or_default();
        let message = format!(
            "cannot decode this {}: {}; fix the object (its spec does not match what this ferroplane version understands)",
            K::kind(&()),
            invalid.error
        );
        warn!(object = %name, error = %invalid.error, "object does not decode; left out of reconciliation");
        let api = self.api.clone();
        let recorder = self.recorder.clone();
        let reference = ObjectReference {
            api_version: Some(K::api_version(&()).into_owned()),
            kind: Some(K::kind(&()).into_owned()),
            name: Some(name.clone()),
            namespace: invalid.metadata.namespace.clone(),
            uid: invalid.metadata.uid.clone(),
            ..ObjectReference::default()
        };
        let condition = Condition {
            type_: names::SYNCED.to_owned(),
            status: ConditionStatus::False,
            reason: RECONCILE_ERROR.to_owned(),
            message: message.clone(),
            last_transition_time: Time(Timestamp::now()),
            observed_generation: invalid.metadata.generation,
        };
        tokio::spawn(async move {
            let body = json!({"status": {"conditions": [condition]}});
            let params = PatchParams {
                field_manager: Some(FIELD_MANAGER.to_owned()),
                ..PatchParams::default()
            };
            if let Err(e) = api.patch_status(&name, &params, &Patch::Merge(body)).await {
                warn!(object = %name, error = %e, "cannot report the decoding error in status");
            }
            let event = Event {
                type_: EventType::Warning,
                reason: CANNOT_DECODE.to_owned(),
                note: Some(message.chars().take(1000).collect()),
                action: "Decode".to_owned(),
                secondary: None,
            };
            if let Err(e) = recorder.publish(&event, &reference).await {
                warn!(object = %name, error = %e, "cannot publish event");
            }
        });
    }
}
