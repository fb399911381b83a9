//! A stand-in ingress controller: a real cluster's ingress controller (ingress-nginx, Traefik,
//! a cloud's load balancer controller) writes the address it serves an Ingress on into
//! `status.loadBalancer.ingress`; without one, an Ingress never gets an address. The sandbox
//! has no traffic to route, so this stand-in gives every Ingress, whatever its class, the
//! documentation address [`ADDRESS`] (RFC 5737: nothing answers there), so that what waits for
//! an address (`kubectl get ingress`'s ADDRESS, an Application's Ready) behaves as in a cluster
//! with a controller.

use serde_json::{Value, json};

use crate::catalog::registry::keys;
use crate::store::ops::options::{Target, WriteOptions};
use crate::store::ops::update::{UpdateKind, update};
use crate::store::state::State;

/// The address every Ingress gets.
pub const ADDRESS: &str = "192.0.2.1";

/// The status the stand-in controller writes.
pub fn status() -> Value {
    json!({"loadBalancer": {"ingress": [{"ip": ADDRESS}]}})
}

/// Gives the Ingress `namespace/name` its address, once.
pub fn reconcile(state: &mut State, namespace: &str, name: &str) {
    let Some(def) = state.registry.find_key(&keys::ingresses()) else {
        return;
    };
    let Some(ingress) = state.get(&keys::ingresses(), namespace, name).cloned() else {
        return;
    };
    if ingress.get("status") == Some(&status()) {
        return;
    }
    let mut next = (*ingress).clone();
    next["status"] = status();
    let options = WriteOptions {
        manager: "sandbox-ingress-controller".into(),
        ..WriteOptions::default()
    };
    let target = Target {
        def: &def,
        namespace,
        name,
        subresource: "status",
    };
    if let Err(error) = update(state, &target, next, UpdateKind::Update, &options) {
        tracing::warn!(%error, %name, "the stand-in ingress controller could not write status");
    }
}
