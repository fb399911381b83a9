//! The Secrets and ConfigMaps an Application's pod cannot start without, and what to tell the
//! user when one is missing. Pure: the controller reads the objects and hands their key names
//! here (never their values).
//!
//! On a cluster, a pod whose `env` names a missing Secret or key stays in
//! `CreateContainerConfigError`, and one whose volume names a missing Secret or ConfigMap stays
//! in `ContainerCreating`; a reference marked `optional: true` is skipped by the kubelet, and so
//! here. Image pull Secrets and the Ingress's TLS Secret are left out: a pod starts without
//! the first when the image is public, and the second is the ingress controller's business.

use std::collections::BTreeSet;
use std::fmt;

use ferroplane_apis::application::{Application, KeyRef, NameRef};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

/// The kind of object a reference names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    Secret,
    ConfigMap,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Secret => "Secret",
            Source::ConfigMap => "ConfigMap",
        })
    }
}

/// One reference the pod needs: the object, the key it reads (for `valueFrom`), and which
/// part of the spec makes it (`env DB_PASSWORD`, `envFrom`, `volume certs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Needed {
    pub source: Source,
    pub name: String,
    pub key: Option<String>,
    pub used_by: String,
}

/// A needed reference the cluster cannot satisfy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// The Secret or ConfigMap does not exist.
    Object(Needed),
    /// It exists without the key.
    Key(Needed),
}

impl Missing {
    fn needed(&self) -> &Needed {
        match self {
            Missing::Object(n) | Missing::Key(n) => n,
        }
    }

    fn describe(&self) -> String {
        let n = self.needed();
        match (self, &n.key) {
            (Missing::Object(_), Some(key)) => format!(
                "{} {} does not exist ({} reads its key {key})",
                n.source, n.name, n.used_by
            ),
            (Missing::Object(_), None) => {
                format!("{} {} does not exist ({})", n.source, n.name, n.used_by)
            }
            (Missing::Key(_), key) => format!(
                "{} {} has no key {} ({})",
                n.source,
                n.name,
                key.as_deref().unwrap_or_default(),
                n.used_by
            ),
        }
    }
}

fn required(optional: Option<bool>) -> bool {
    optional != Some(true)
}

fn key_ref(source: Source, r: &KeyRef, used_by: String) -> Option<Needed> {
    required(r.optional).then(|| Needed {
        source,
        name: r.name.clone(),
        key: Some(r.key.clone()),
        used_by,
    })
}

fn name_ref(source: Source, r: &NameRef, used_by: String) -> Option<Needed> {
    required(r.optional).then(|| Needed {
        source,
        name: r.name.clone(),
        key: None,
        used_by,
    })
}

/// Every non-optional Secret and ConfigMap reference of `app`'s pod, in spec order.
pub fn needed(app: &Application) -> Vec<Needed> {
    let spec = &app.spec;
    let env = spec.env.iter().filter_map(|e| {
        let from = e.value_from.as_ref()?;
        let used_by = format!("env {}", e.name);
        match (&from.secret_key_ref, &from.config_map_key_ref) {
            (Some(r), _) => key_ref(Source::Secret, r, used_by),
            (None, Some(r)) => key_ref(Source::ConfigMap, r, used_by),
            (None, None) => None,
        }
    });
    let env_from = spec
        .env_from
        .iter()
        .filter_map(|e| match (&e.secret_ref, &e.config_map_ref) {
            (Some(r), _) => name_ref(Source::Secret, r, "envFrom".into()),
            (None, Some(r)) => name_ref(Source::ConfigMap, r, "envFrom".into()),
            (None, None) => None,
        });
    let volumes = spec.volumes.iter().filter_map(|v| {
        let used_by = format!("volume {}", v.name);
        match (&v.secret, &v.config_map) {
            (Some(s), _) => required(s.optional).then(|| Needed {
                source: Source::Secret,
                name: s.secret_name.clone(),
                key: None,
                used_by,
            }),
            (None, Some(r)) => name_ref(Source::ConfigMap, r, used_by),
            (None, None) => None,
        }
    });
    env.chain(env_from).chain(volumes).collect()
}

/// Whether `app`'s pod needs the `source` named `name` (what a change of that object may
/// change in the Application's status).
pub fn needs(app: &Application, source: Source, name: &str) -> bool {
    needed(app)
        .iter()
        .any(|n| n.source == source && n.name == name)
}

/// A mapper for watching the `source` kind: a change of one of its objects reconciles the
/// Applications of its namespace that need it, so one that appears turns them Ready at once.
pub fn applications_needing<R: Resource>(
    source: Source,
) -> impl Fn(&R, &Store<Application>) -> Vec<ObjectRef<Application>> + Send + Sync + 'static {
    move |object: &R, store: &Store<Application>| {
        let name = object.meta().name.as_deref().unwrap_or_default();
        store
            .state()
            .iter()
            .filter(|app| app.namespace() == object.meta().namespace && needs(app, source, name))
            .map(|app| ObjectRef::from_obj(app.as_ref()))
            .collect()
    }
}

/// The objects `needed` names, once each.
pub fn objects(needed: &[Needed]) -> BTreeSet<(Source, String)> {
    needed.iter().map(|n| (n.source, n.name.clone())).collect()
}

/// What is missing, given the key names of each object that exists (`keys` returns `None`
/// for an object that does not).
pub fn missing<'a>(
    needed: &[Needed],
    keys: impl Fn(Source, &str) -> Option<&'a BTreeSet<String>>,
) -> Vec<Missing> {
    needed
        .iter()
        .filter_map(|n| match (keys(n.source, &n.name), &n.key) {
            (None, _) => Some(Missing::Object(n.clone())),
            (Some(present), Some(key)) if !present.contains(key) => Some(Missing::Key(n.clone())),
            _ => None,
        })
        .collect()
}

/// The source whose reason the condition shows: a missing Secret before a ConfigMap.
pub fn first_source(missing: &[Missing]) -> Option<Source> {
    missing.iter().map(|m| m.needed().source).min()
}

/// The `Ready=False` message: each missing object or key, and what to do.
pub fn message(app: &Application, missing: &[Missing]) -> String {
    let namespace = app.metadata.namespace.as_deref().unwrap_or_default();
    let each: Vec<String> = missing.iter().map(Missing::describe).collect();
    format!(
        "the pods cannot start until every Secret and ConfigMap they need exists in namespace \
         {namespace}: {}. Create them (or add the key), or mark the reference optional: true; \
         the Application turns Ready by itself once they exist",
        each.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixture::app;

    fn spec() -> Application {
        app(serde_json::json!({"image": "x",
            "env": [{"name": "MODE", "value": "prod"},
                    {"name": "DB", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
                    {"name": "THEME", "valueFrom": {"configMapKeyRef": {"name": "ui", "key": "theme", "optional": true}}},
                    {"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "ui", "key": "level"}}}],
            "envFrom": [{"secretRef": {"name": "api-keys", "optional": true}}, {"configMapRef": {"name": "cfg"}}],
            "volumes": [{"name": "certs", "mountPath": "/certs", "secret": {"secretName": "tls"}},
                        {"name": "cache", "mountPath": "/cache", "emptyDir": {}}]}))
    }

    #[test]
    fn only_references_that_are_not_optional_are_needed() {
        let needed = needed(&spec());
        let named: Vec<(Source, &str, Option<&str>, &str)> = needed
            .iter()
            .map(|n| {
                (
                    n.source,
                    n.name.as_str(),
                    n.key.as_deref(),
                    n.used_by.as_str(),
                )
            })
            .collect();
        assert_eq!(
            named,
            vec![
                (Source::Secret, "db", Some("password"), "env DB"),
                (Source::ConfigMap, "ui", Some("level"), "env LEVEL"),
                (Source::ConfigMap, "cfg", None, "envFrom"),
                (Source::Secret, "tls", None, "volume certs"),
            ]
        );
        assert!(needs(&spec(), Source::ConfigMap, "ui"));
        assert!(!needs(&spec(), Source::Secret, "api-keys"));
        assert!(!needs(&spec(), Source::Secret, "ui"));
    }

    #[test]
    fn a_missing_object_or_key_is_named_with_what_to_do() {
        let app = spec();
        let ui: BTreeSet<String> = ["theme".to_owned()].into();
        let db: BTreeSet<String> = ["password".to_owned()].into();
        let missing = missing(&needed(&app), |source, name| match (source, name) {
            (Source::ConfigMap, "ui") => Some(&ui),
            (Source::Secret, "db") => Some(&db),
            _ => None,
        });
        assert_eq!(missing.len(), 3, "{missing:?}");
        assert_eq!(first_source(&missing), Some(Source::Secret));
        let text = message(&app, &missing);
        for part in [
            "namespace shop",
            "ConfigMap ui has no key level (env LEVEL)",
            "ConfigMap cfg does not exist (envFrom)",
            "Secret tls does not exist (volume certs)",
            "optional: true",
        ] {
            assert!(text.contains(part), "{part:?} in {text}");
        }
        let all: BTreeSet<String> = ["password".to_owned(), "level".to_owned()].into();
        assert!(super::missing(&needed(&app), |_, _| Some(&all)).is_empty());
    }
}
