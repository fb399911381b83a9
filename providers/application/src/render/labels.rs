//! Labels of an Application's children: the pod selector every child that points at the pods
//! uses, and the labels every child carries. Pure; the ground floor of `render`.

use std::collections::BTreeMap;

use ferroplane_apis::application::Application;
use ferroplane_runtime::children::{MANAGED_BY, MANAGED_BY_LABEL};
use kube::ResourceExt;

/// Labels that select the Application's pods.
pub fn selector(app: &Application) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), app.name_any()),
        ("app.kubernetes.io/instance".to_owned(), app.name_any()),
    ])
}

/// Labels of every child: the selector's and ferroplane's managed-by label.
pub fn labels(app: &Application) -> BTreeMap<String, String> {
    let mut labels = selector(app);
    labels.insert(MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned());
    labels
}
