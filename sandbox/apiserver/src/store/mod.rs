//! The store: the objects and their history behind one lock, and the apiserver semantics of
//! every operation on them. The HTTP layer calls one [`Store`] method per request; each takes
//! the lock for its whole run, so that a write, its resourceVersion and its watch event are
//! atomic.
//!
//! Inside: `state` (objects, resourceVersions, indexes, history), `ops` (write semantics),
//! `admission` (per-kind work before storage), `list` (pages), `selector`, and `views`
//! (how a stored object looks through each resource version). Nothing here knows HTTP.

pub mod admission;
pub mod list;
pub mod ops;
pub mod selector;
pub mod state;
pub mod views;

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::broadcast;

use crate::catalog::registry::{Registry, ResourceDef, StoreKey};
use crate::error::ApiResult;
use crate::store::list::{ListPage, ListRequest};
use crate::store::ops::create::{check_type, create, create_default_namespaces};
use crate::store::ops::delete::{delete, delete_collection};
use crate::store::ops::options::{DeleteOptions, Target, WriteOptions, Written};
use crate::store::ops::patch::{PatchKind, patch};
use crate::store::ops::scale::{ScaleChange, scale};
use crate::store::ops::update::{UpdateKind, update};
use crate::store::selector::Selectors;
use crate::store::state::{Change, State};

/// The store, shared by every request.
#[derive(Debug)]
pub struct Store {
    state: Mutex<State>,
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchStart {
    /// Current objects as ADDED, then live.
    Current,
    /// `sendInitialEvents=true`: current objects, then a BOOKMARK marking the end.
    InitialEvents,
    /// Everything after a resourceVersion.
    After(u64),
}

/// What a new watch sends first, and the live changes that follow it without a gap (both are
/// taken under the lock).
#[derive(Debug)]
pub enum Feed {
    /// The objects stored at resourceVersion `rv`, then the changes after it.
    Current {
        objects: Vec<Arc<Value>>,
        rv: u64,
        live: broadcast::Receiver<Arc<Change>>,
    },
    /// The changes after the requested resourceVersion (up to `rv`), then the live ones.
    Replay {
        changes: Vec<Arc<Change>>,
        rv: u64,
        live: broadcast::Receiver<Arc<Change>>,
    },
    /// The `requested` resourceVersion is older than the history; `oldest` is still in it.
    Expired { requested: u64, oldest: u64 },
}

impl Store {
    /// An empty store with the namespaces every cluster has; watches can replay the last
    /// `history_capacity` changes.
    pub fn new(history_capacity: usize) -> Self {
        let mut state = State::new(history_capacity);
        create_default_namespaces(&mut state);
        crate::store::ops::node::create_default_node(&mut state);
        Self {
            state: Mutex::new(state),
        }
    }

    /// The state, for the workload simulator, which reads and writes under one lock as a
    /// controller in the same process. Nothing panics while holding it, but a poisoned lock
    /// still holds a consistent store (every write is completed before its guard drops), so
    /// recover it.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.lock().resource_version()
    }

    /// What the registry says, e.g. for discovery and OpenAPI documents.
    pub fn read_registry<T>(&self, read: impl FnOnce(&Registry) -> T) -> T {
        read(&self.lock().registry)
    }

    /// GET of one object, in the stored form.
    pub fn get(&self, target: &Target) -> ApiResult<Arc<Value>> {
        self.lock()
            .get(
                &target.def.store_key(),
                target.stored_namespace(),
                target.name,
            )
            .cloned()
            .ok_or_else(|| target.not_found())
    }

    /// One page of a list.
    pub fn list(&self, request: &ListRequest) -> ApiResult<ListPage> {
        list::list(&self.lock(), request)
    }

    /// POST of `body` (as the client sent it, in `def`'s view).
    pub fn create(
        &self,
        def: &ResourceDef,
        namespace: &str,
        body: Value,
        options: &WriteOptions,
    ) -> ApiResult<Written> {
        check_type(def, &body)?;
        let stored_form = views::from_view(def, body);
        create(&mut self.lock(), def, namespace, stored_form, options)
    }

    /// PUT of `body` (as the client sent it, in the target's view).
    pub fn update(
        &self,
        target: &Target,
        body: Value,
        options: &WriteOptions,
    ) -> ApiResult<Written> {
        check_type(target.def, &body)?;
        let stored_form = views::from_view(target.def, body);
        update(
            &mut self.lock(),
            target,
            stored_form,
            UpdateKind::Update,
            options,
        )
    }

    /// PATCH with the decoded patch `body`.
    pub fn patch(
        &self,
        target: &Target,
        kind: PatchKind,
        body: Value,
        options: &WriteOptions,
    ) -> ApiResult<Written> {
        patch(&mut self.lock(), target, kind, body, options)
    }

    /// DELETE; the object as it is left (still there while finalizers hold it).
    pub fn delete(&self, target: &Target, options: &DeleteOptions) -> ApiResult<Arc<Value>> {
        delete(&mut self.lock(), target, options)
    }

    /// DELETE of every selected object; their views and the resourceVersion after.
    pub fn delete_collection(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        selectors: &Selectors,
        options: &DeleteOptions,
    ) -> ApiResult<(Vec<Value>, u64)> {
        delete_collection(&mut self.lock(), def, namespace, selectors, options)
    }

    /// GET, PUT or PATCH of `/scale`; `change` decodes the request once the workload exists.
    pub fn scale(
        &self,
        target: &Target,
        change: impl FnOnce() -> ApiResult<ScaleChange>,
        options: &WriteOptions,
    ) -> ApiResult<Value> {
        scale(&mut self.lock(), target, change, options)
    }

    /// Starts a watch of the objects under `key` (in `namespace`, or all).
    pub fn watch(&self, key: &StoreKey, namespace: Option<&str>, start: WatchStart) -> Feed {
        let state = self.lock();
        let rv = state.resource_version();
        match start {
            WatchStart::Current | WatchStart::InitialEvents => Feed::Current {
                objects: state.list(key, namespace).cloned().collect(),
                rv,
                live: state.subscribe(),
            },
            WatchStart::After(after) => match state.subscribe_after(after) {
                Ok((changes, live)) => Feed::Replay { changes, rv, live },
                Err(expired) => Feed::Expired {
                    requested: after,
                    oldest: expired.oldest,
                },
            },
        }
    }
}
