//! kube-controller-manager's serviceaccount controller: every namespace has a ServiceAccount
//! named `default` (created after the namespace, re-created if deleted).

use serde_json::json;

use crate::catalog::registry::keys;
use crate::meta;
use crate::store::ops::create::create;
use crate::store::ops::options::WriteOptions;
use crate::store::state::State;

/// The account every namespace gets.
pub const DEFAULT_ACCOUNT: &str = "default";

/// Creates the namespace's `default` ServiceAccount when it is missing.
pub fn ensure_default(state: &mut State, namespace: &str) {
    let Some(ns) = state.get(&keys::namespaces(), "", namespace) else {
        return;
    };
    if meta::is_terminating(ns)
        || state
            .get(&keys::service_accounts(), namespace, DEFAULT_ACCOUNT)
            .is_some()
    {
        return;
    }
    let Some(def) = state.registry.find_key(&keys::service_accounts()) else {
        return;
    };
    let account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": DEFAULT_ACCOUNT}});
    let options = WriteOptions {
        manager: "kube-controller-manager".into(),
        ..WriteOptions::default()
    };
    if let Err(error) = create(state, &def, namespace, account, &options) {
        tracing::warn!(%error, %namespace, "cannot create the default ServiceAccount");
    }
}
