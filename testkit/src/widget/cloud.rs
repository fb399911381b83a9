//! An in-memory external system for widgets, with fault injection: it records every call,
//! fails the calls it is told to fail (before or after their effect), hangs at a chosen call,
//! keeps new resources Pending and deleted ones Deleting for a number of observes, and can be
//! blind to searches by UID tag. Its connector connects when a ConfigMap named after the
//! widget's `providerConfigRef` exists in the widget's namespace.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use ferroplane_runtime::{
    ConnectionDetails, Connector, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, RetryClass, Update,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::Api;
use serde_json::json;

use super::kind::{Widget, WidgetObservation, WidgetStatus};

#[derive(Clone, Debug, PartialEq)]
pub struct Res {
    pub uid: String,
    pub size: i64,
    pub label: Option<String>,
    pub zone: String,
    pub state: String,
    pub pending_observes: u32,
    pub deleting_observes: Option<u32>,
}

/// An injected failure: the call fails with this reason and retry class.
#[derive(Clone, Debug)]
pub struct Fault {
    pub reason: &'static str,
    pub retry: RetryClass,
    /// Apply the call's effect before failing (the response was lost).
    pub after_effect: bool,
}

#[derive(Default)]
pub struct CloudState {
    pub resources: BTreeMap<String, Res>,
    pub tokens: HashMap<String, String>,
    pub next_id: u32,
    pub calls: Vec<String>,
    pub faults: HashMap<&'static str, VecDeque<Fault>>,
    /// After the call's effect, never return (the reconcile is killed there).
    pub hang_after: Option<&'static str>,
    /// Before the call's effect, never return.
    pub hang_before: Option<&'static str>,
    /// Searching by UID tag finds nothing (an eventually consistent list API).
    pub blind_search: bool,
    /// New resources stay Pending for this many observes.
    pub pending_observes: u32,
    /// Deleted resources stay visible (Deleting) for this many observes.
    pub deleting_observes: u32,
    /// The client says the cloud assigns external names (as ECS assigns instance IDs), so a
    /// named resource that is not found is never created again.
    pub assigns_names: bool,
}

#[derive(Clone, Default)]
pub struct FakeCloud {
    pub state: Arc<Mutex<CloudState>>,
}

impl FakeCloud {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, CloudState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn count(&self) -> usize {
        self.lock().resources.len()
    }

    pub fn calls(&self, action: &str) -> usize {
        self.lock().calls.iter().filter(|c| *c == action).count()
    }

    pub fn fail_next(&self, action: &'static str, fault: Fault) {
        self.lock()
            .faults
            .entry(action)
            .or_default()
            .push_back(fault);
    }

    /// Inserts a resource made outside ferroplane (for imports).
    pub fn insert(&self, id: &str, size: i64) {
        self.lock().resources.insert(
            id.to_owned(),
            Res {
                uid: String::new(),
                size,
                label: None,
                zone: "zone-b".into(),
                state: "Running".into(),
                pending_observes: 0,
                deleting_observes: None,
            },
        );
    }

    pub fn only_resource(&self) -> (String, Res) {
        let st = self.lock();
        assert_eq!(
            st.resources.len(),
            1,
            "exactly one resource: {:?}",
            st.resources.keys().collect::<Vec<_>>()
        );
        let (k, v) = st.resources.iter().next().expect("one");
        (k.clone(), v.clone())
    }
}

/// Connects when ConfigMap `<providerConfigRef.name>` exists in the object's namespace.
#[derive(Clone)]
pub struct FakeConnector {
    pub cloud: FakeCloud,
    pub client: kube::Client,
    pub connects: Arc<AtomicU32>,
    /// Runs during observe (e.g. to change the object under the reconcile).
    pub on_observe: Arc<Mutex<Option<Hook>>>,
}

pub type Hook = Box<dyn FnMut() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

impl FakeConnector {
    pub fn new(cloud: FakeCloud, client: kube::Client) -> Self {
        Self {
            cloud,
            client,
            connects: Arc::default(),
            on_observe: Arc::default(),
        }
    }
}

pub struct FakeClient {
    cloud: FakeCloud,
    on_observe: Arc<Mutex<Option<Hook>>>,
}

impl Connector<Widget> for FakeConnector {
    type Client = FakeClient;

    async fn connect(&self, mr: &Widget) -> Result<FakeClient, ReconcileError> {
        self.connects.fetch_add(1, Ordering::SeqCst);
        let name = &mr.spec.provider_config_ref.name;
        let api: Api<ConfigMap> =
            Api::namespaced(self.client.clone(), &mr.namespace().unwrap_or_default());
        let found = api.get_opt(name).await.map_err(|e| {
            ReconcileError::retryable(
                "ProviderConfigUnreadable",
                format!("cannot read ProviderConfig {name}: {e}"),
            )
        })?;
        if found.is_none() {
            return Err(ReconcileError::dependency(
                "ProviderConfigNotFound",
                format!("ProviderConfig {name} not found; create it or fix spec.providerConfigRef"),
            ));
        }
        Ok(FakeClient {
            cloud: self.cloud.clone(),
            on_observe: self.on_observe.clone(),
        })
    }
}

impl FakeClient {
    /// Records the call and returns the injected fault (if any) and the hang settings.
    fn enter(&self, action: &'static str) -> (Option<Fault>, bool, bool) {
        let mut st = self.cloud.lock();
        st.calls.push(action.to_owned());
        let fault = st.faults.get_mut(action).and_then(VecDeque::pop_front);
        (
            fault,
            st.hang_before == Some(action),
            st.hang_after == Some(action),
        )
    }
}

fn fault_error(action: &str, f: &Fault) -> ReconcileError {
    ReconcileError::new(f.reason, format!("injected {action} failure"), f.retry)
}

async fn hang() {
    std::future::pending::<()>().await;
}

fn observation(id: &str, r: &Res) -> Observation {
    let at_provider = WidgetObservation {
        id: Some(id.to_owned()),
        size: Some(r.size),
        state: Some(r.state.clone()),
        // A resource that lost its zone (a test's doing) observes without one.
        zone: (!r.zone.is_empty()).then(|| r.zone.clone()),
    };
    // An empty `uid` is a resource without an ownership tag (made outside ferroplane).
    let mut obs = Observation::found(id)
        .with_owner_tag(Some(r.uid.as_str()))
        .with_status(WidgetStatus {
            at_provider: Some(at_provider),
            ..WidgetStatus::default()
        })
        .expect("a widget's status serializes");
    obs = obs.with_connection_details(
        ConnectionDetails::new().with("endpoint", format!("{id}.widgets.test:{}", r.size)),
    );
    if r.state == "Pending" {
        obs = obs.with_readiness(Readiness::Creating).in_transition();
    } else if r.state == "Deleting" {
        obs = obs
            .with_readiness(Readiness::Unavailable("deleting".into()))
            .in_transition();
    }
    obs
}

impl ExternalClient<Widget> for FakeClient {
    fn assigns_names(&self) -> bool {
        self.cloud.lock().assigns_names
    }

    async fn observe(&self, mr: &Widget, ext: &ExternalRef) -> Result<Observation, ReconcileError> {
        let hook = self
            .on_observe
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .map(|h| h());
        if let Some(h) = hook {
            h.await;
        }
        let (fault, _, _) = self.enter("observe");
        if let Some(f) = fault {
            return Err(fault_error("observe", &f));
        }
        let mut st = self.cloud.lock();
        let id = match ext.name() {
            Some(id) => Some(id.to_owned()),
            None if st.blind_search => None,
            None => st
                .resources
                .iter()
                .find(|(_, r)| r.uid == ext.uid)
                .map(|(k, _)| k.clone()),
        };
        let Some(id) = id else {
            return Ok(Observation::missing());
        };
        let mut gone = false;
        let obs = match st.resources.get_mut(&id) {
            None => return Ok(Observation::missing()),
            Some(r) => {
                if let Some(left) = r.deleting_observes.as_mut() {
                    if *left == 0 {
                        gone = true;
                    } else {
                        *left -= 1;
                        r.state = "Deleting".into();
                    }
                } else if r.pending_observes > 0 {
                    r.pending_observes -= 1;
                } else if r.state == "Pending" {
                    r.state = "Running".into();
                }
                let mut obs = observation(&id, r);
                let spec = &mr.spec.for_provider;
                let mut diff = Vec::new();
                if spec.size != r.size {
                    diff.push(format!("size: {} → {}", r.size, spec.size));
                }
                if spec.label.is_some() && spec.label != r.label {
                    diff.push(format!("label: {:?} → {:?}", r.label, spec.label));
                }
                if !diff.is_empty() {
                    obs = obs.with_diff(diff.join(", "));
                }
                if spec.zone.is_none() {
                    obs = obs
                        .with_late_init(json!({"zone": r.zone}))
                        .expect("an object");
                }
                obs
            }
        };
        if gone {
            st.resources.remove(&id);
            return Ok(Observation::missing());
        }
        Ok(obs)
    }

    async fn create(&self, mr: &Widget, key: &IdempotencyKey) -> Result<Creation, ReconcileError> {
        let (fault, hang_before, hang_after) = self.enter("create");
        if hang_before {
            hang().await;
        }
        if let Some(f) = &fault
            && !f.after_effect
        {
            return Err(fault_error("create", f));
        }
        assert!(key.token().len() <= 64 && key.token().is_ascii());
        let id = {
            let mut st = self.cloud.lock();
            if let Some(id) = st.tokens.get(key.token()) {
                id.clone()
            } else {
                st.next_id += 1;
                let id = format!("w-{:04}", st.next_id);
                let pending = st.pending_observes;
                st.resources.insert(
                    id.clone(),
                    Res {
                        uid: key.uid().to_owned(),
                        size: mr.spec.for_provider.size,
                        label: mr.spec.for_provider.label.clone(),
                        zone: mr
                            .spec
                            .for_provider
                            .zone
                            .clone()
                            .unwrap_or_else(|| "zone-a".into()),
                        state: if pending > 0 {
                            "Pending".into()
                        } else {
                            "Running".into()
                        },
                        pending_observes: pending,
                        deleting_observes: None,
                    },
                );
                st.tokens.insert(key.token().to_owned(), id.clone());
                id
            }
        };
        if hang_after {
            hang().await;
        }
        if let Some(f) = &fault {
            return Err(fault_error("create", f));
        }
        Ok(Creation::new(id)
            .with_connection_details(ConnectionDetails::new().with("password", "s3cret")))
    }

    async fn update(&self, mr: &Widget, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let (fault, _, _) = self.enter("update");
        if let Some(f) = fault {
            return Err(fault_error("update", &f));
        }
        let id = ext
            .name()
            .ok_or_else(|| ReconcileError::terminal("NoExternalName", "no external name"))?;
        let mut st = self.cloud.lock();
        let r = st
            .resources
            .get_mut(id)
            .ok_or_else(|| ReconcileError::retryable("NotFound", format!("{id} not found")))?;
        r.size = mr.spec.for_provider.size;
        if mr.spec.for_provider.label.is_some() {
            r.label = mr.spec.for_provider.label.clone();
        }
        Ok(Update::done())
    }

    async fn claim(&self, _mr: &Widget, ext: &ExternalRef) -> Result<(), ReconcileError> {
        let (fault, _, _) = self.enter("claim");
        if let Some(f) = fault {
            return Err(fault_error("claim", &f));
        }
        let id = ext
            .name()
            .ok_or_else(|| ReconcileError::terminal("NoExternalName", "no external name"))?;
        let mut st = self.cloud.lock();
        let r = st
            .resources
            .get_mut(id)
            .ok_or_else(|| ReconcileError::retryable("NotFound", format!("{id} not found")))?;
        r.uid = ext.uid.clone();
        Ok(())
    }

    async fn delete(&self, _mr: &Widget, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        let (fault, hang_before, hang_after) = self.enter("delete");
        if hang_before {
            hang().await;
        }
        if let Some(f) = &fault
            && !f.after_effect
        {
            return Err(fault_error("delete", f));
        }
        let Some(id) = ext.name() else {
            return Ok(Deletion::Gone);
        };
        let outcome = {
            let mut st = self.cloud.lock();
            let slow = st.deleting_observes;
            match st.resources.get_mut(id) {
                None => Deletion::Gone,
                Some(r) if slow > 0 => {
                    if r.deleting_observes.is_none() {
                        r.deleting_observes = Some(slow);
                    }
                    Deletion::InProgress
                }
                Some(_) => {
                    st.resources.remove(id);
                    Deletion::Gone
                }
            }
        };
        if hang_after {
            hang().await;
        }
        if let Some(f) = &fault {
            return Err(fault_error("delete", f));
        }
        Ok(outcome)
    }
}
