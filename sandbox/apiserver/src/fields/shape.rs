//! Where a value sits in its kind's OpenAPI schema, and what that says about its lists: the
//! list type server-side apply merges by (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`)
//! and the strategy strategic merge patch follows (`x-kubernetes-patch-strategy`,
//! `x-kubernetes-patch-merge-key`). Built-in kinds are walked through the real apiserver's
//! schemas (with `$ref`s), custom kinds through their CRD's `openAPIV3Schema`; where the schema
//! says nothing (an unknown field, preserved unknown fields) a list is atomic, as in
//! kube-apiserver.

use serde_json::{Map, Value};

/// The schema name of ObjectMeta: every kind's `metadata`, custom ones included.
pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The prefix of `$ref`s in OpenAPI v3 documents.
pub const REF_PREFIX: &str = "#/components/schemas/";

/// How server-side apply merges a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType<'a> {
    /// Replaced as a whole, owned as a whole.
    Atomic,
    /// Scalars merged as a set (`v:` entries).
    Set,
    /// Objects identified by these key fields (`k:` entries).
    Map(Vec<&'a str>),
}

/// How strategic merge patch treats a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchStrategy<'a> {
    /// The patch's list replaces the live one.
    Replace,
    /// Objects merged by this key.
    MergeByKey(&'a str),
    /// Scalars merged as a set.
    MergeScalars,
}

/// A position in a schema; `Shape::unknown()` where there is none.
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    /// The schema here, `$ref`s followed.
    node: Option<&'a Value>,
    /// The property as its parent declares it: list extensions sit beside a `$ref`.
    declared: Option<&'a Value>,
    /// The named schemas `$ref`s point into; `None` for a CRD's self-contained schema.
    defs: Option<&'a Map<String, Value>>,
    /// Named schemas to fall back to for `metadata` at the root of a custom kind.
    meta_defs: Option<&'a Map<String, Value>>,
    root: bool,
}

impl<'a> Shape<'a> {
    /// No schema: every list atomic.
    pub fn unknown() -> Self {
        Self {
            node: None,
            declared: None,
            defs: None,
            meta_defs: None,
            root: false,
        }
    }

    /// The root of a built-in kind's schema among the named `defs`.
    pub fn builtin(root: &'a Value, defs: &'a Map<String, Value>) -> Self {
        Self {
            node: resolve(Some(root), Some(defs)),
            declared: Some(root),
            defs: Some(defs),
            meta_defs: Some(defs),
            root: true,
        }
    }

    /// The root of a custom kind's `openAPIV3Schema`; its `metadata` is ObjectMeta of `defs`.
    pub fn custom(root: Option<&'a Value>, meta_defs: &'a Map<String, Value>) -> Self {
        Self {
            node: root,
            declared: root,
            defs: None,
            meta_defs: Some(meta_defs),
            root: true,
        }
    }

    fn at(self, node: Option<&'a Value>) -> Self {
        Self {
            node: resolve(node, self.defs),
            declared: node,
            root: false,
            ..self
        }
    }

    /// The schema of the field `name` of an object here.
    pub fn field(self, name: &str) -> Self {
        if self.root
            && name == "metadata"
            && let Some(defs) = self.meta_defs
        {
            return Self {
                node: defs.get(OBJECT_META),
                declared: None,
                defs: Some(defs),
                meta_defs: None,
                root: false,
            };
        }
        let Some(node) = self.node else {
            return self;
        };
        let child = node
            .get("properties")
            .and_then(|p| p.get(name))
            .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()));
        self.at(child)
    }

    /// The schema of the items of a list here.
    pub fn items(self) -> Self {
        self.at(self.node.and_then(|n| n.get("items")))
    }

    fn extension(&self, name: &str) -> Option<&'a Value> {
        self.declared
            .and_then(|n| n.get(name))
            .or_else(|| self.node.and_then(|n| n.get(name)))
    }

    /// How server-side apply merges the list here. Without `x-kubernetes-list-type` a list
    /// that strategic merge patch merges is associative by its merge key (scalars: a set), as
    /// kube-apiserver converts the patch tags; otherwise atomic.
    pub fn list_type(&self) -> ListType<'a> {
        match self
            .extension("x-kubernetes-list-type")
            .and_then(Value::as_str)
        {
            Some("set") => ListType::Set,
            Some("map") => ListType::Map(
                self.extension("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|keys| keys.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default(),
            ),
            Some(_) => ListType::Atomic,
            None => match self.patch_strategy() {
                PatchStrategy::MergeByKey(key) => ListType::Map(vec![key]),
                PatchStrategy::MergeScalars => ListType::Set,
                PatchStrategy::Replace => ListType::Atomic,
            },
        }
    }

    /// Whether the object here is owned and applied whole (`x-kubernetes-map-type: atomic`,
    /// as label selectors are).
    pub fn is_atomic_map(&self) -> bool {
        self.extension("x-kubernetes-map-type")
            .and_then(Value::as_str)
            == Some("atomic")
    }

    /// How strategic merge patch treats the list here.
    pub fn patch_strategy(&self) -> PatchStrategy<'a> {
        let merges = self
            .extension("x-kubernetes-patch-strategy")
            .and_then(Value::as_str)
            .is_some_and(|s| s.split(',').any(|part| part == "merge"));
        if !merges {
            return PatchStrategy::Replace;
        }
        match self
            .extension("x-kubernetes-patch-merge-key")
            .and_then(Value::as_str)
        {
            Some(key) => PatchStrategy::MergeByKey(key),
            None => PatchStrategy::MergeScalars,
        }
    }
}

impl Shape<'_> {
    /// The identity of an item of a map list (this shape is the items'): its key fields, a key
    /// the item leaves out taking its schema default (`protocol: TCP` of ports), as
    /// server-side apply keys items.
    pub fn identity(&self, item: &Value, keys: &[&str]) -> Map<String, Value> {
        keys.iter()
            .filter_map(|key| {
                let value = item
                    .get(*key)
                    .or_else(|| self.field(key).node.and_then(|n| n.get("default")))?;
                Some(((*key).to_owned(), value.clone()))
            })
            .collect()
    }
}

/// Follows `$ref` (and the `allOf: [{$ref}]` form v3 uses beside a description).
fn resolve<'a>(node: Option<&'a Value>, defs: Option<&'a Map<String, Value>>) -> Option<&'a Value> {
    let mut node = node?;
    for _ in 0..8 {
        let reference = node.get("$ref").or_else(|| {
            node.get("allOf")
                .and_then(Value::as_array)
                .and_then(|all| all.first())
                .and_then(|first| first.get("$ref"))
        });
        let Some(name) = reference
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix(REF_PREFIX))
        else {
            return Some(node);
        };
        node = defs?.get(name)?;
    }
    Some(node)
}

/// The shape of a built-in kind in the bundled schemas, for tests of the field operations.
#[cfg(test)]
pub fn builtin_kind(group: &str, kind: &str) -> Shape<'static> {
    let openapi = crate::catalog::builtin_openapi::BuiltinOpenApi::get();
    Shape::builtin(
        openapi
            .kind_schema(group, "v1", kind)
            .expect("a built-in kind"),
        openapi.schemas(),
    )
}

/// The shape of a custom kind without a schema, for tests of the field operations.
#[cfg(test)]
pub fn schemaless_custom_kind() -> Shape<'static> {
    Shape::custom(
        None,
        crate::catalog::builtin_openapi::BuiltinOpenApi::get().schemas(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::builtin_openapi::BuiltinOpenApi;

    fn kind(group: &str, name: &str) -> Shape<'static> {
        builtin_kind(group, name)
    }

    #[test]
    fn list_semantics_come_from_the_real_schemas() {
        let sts = kind("apps", "StatefulSet").field("spec");
        assert_eq!(
            sts.field("volumeClaimTemplates").list_type(),
            ListType::Atomic
        );
        assert_eq!(
            sts.field("volumeClaimTemplates").patch_strategy(),
            PatchStrategy::Replace
        );
        let pod = sts.field("template").field("spec");
        assert_eq!(
            pod.field("containers").list_type(),
            ListType::Map(vec!["name"])
        );
        assert_eq!(
            pod.field("containers").patch_strategy(),
            PatchStrategy::MergeByKey("name")
        );
        let ports = pod.field("containers").items().field("ports");
        assert_eq!(
            ports.list_type(),
            ListType::Map(vec!["containerPort", "protocol"])
        );
        assert_eq!(
            ports.patch_strategy(),
            PatchStrategy::MergeByKey("containerPort")
        );
        assert_eq!(
            Value::Object(ports.items().identity(
                &serde_json::json!({"containerPort": 80}),
                &["containerPort", "protocol"]
            )),
            serde_json::json!({"containerPort": 80, "protocol": "TCP"})
        );
        let meta = kind("", "ConfigMap").field("metadata");
        assert_eq!(meta.field("finalizers").list_type(), ListType::Set);
        assert_eq!(
            meta.field("finalizers").patch_strategy(),
            PatchStrategy::MergeScalars
        );
        assert_eq!(
            meta.field("ownerReferences").list_type(),
            ListType::Map(vec!["uid"])
        );
        assert_eq!(
            kind("", "ConfigMap").field("data").field("any").list_type(),
            ListType::Atomic
        );
    }

    #[test]
    fn custom_kinds_read_their_schema_and_share_object_meta() {
        let schema = serde_json::json!({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {
            "rules": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["id"], "items": {"type": "object"}},
            "args": {"type": "array", "items": {"type": "string"}},
        }}}});
        let shape = Shape::custom(Some(&schema), BuiltinOpenApi::get().schemas());
        assert_eq!(
            shape.field("spec").field("rules").list_type(),
            ListType::Map(vec!["id"])
        );
        assert_eq!(
            shape.field("spec").field("args").list_type(),
            ListType::Atomic
        );
        assert_eq!(
            shape.field("metadata").field("ownerReferences").list_type(),
            ListType::Map(vec!["uid"])
        );
        assert_eq!(
            Shape::unknown().field("x").items().list_type(),
            ListType::Atomic
        );
    }
}
