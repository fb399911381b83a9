//! The Application the render and status tests start from.

use ferroplane_apis::application::Application;

/// An Application `web` in namespace `shop` with `spec`.
pub fn app(spec: serde_json::Value) -> Application {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apps.ferroplane.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u-1"},
        "spec": spec,
    }))
    .expect("valid Application")
}
