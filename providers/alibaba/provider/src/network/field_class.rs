//! The class of a `spec.forProvider` property of a network kind (how a change to it reaches
//! the cloud), and the tests every kind's table shares: each CRD property has exactly one row,
//! each immutable one is refused at admission by a transition rule naming it, and README's
//! table of the kind lists the rows in order. The kinds' tables are `eip_fields`, `nat_fields`
//! and `rule_fields`. The tables are read by tests only: the kinds' `diff` functions compare the
//! in-place rows.

/// How a change to a property reaches the resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldClass {
    /// Applied in place by `action`, compared with the cloud at every poll, so a change made
    /// elsewhere is reverted.
    InPlace { action: &'static str },
    /// Refused at admission by a CEL transition rule whose message names it.
    Immutable,
    /// Tells ferroplane where to find a value (a reference or selector).
    Management { what: &'static str },
}

/// One property of `spec.forProvider`.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub path: &'static str,
    pub class: FieldClass,
}

pub const fn in_place(path: &'static str, action: &'static str) -> Field {
    Field {
        path,
        class: FieldClass::InPlace { action },
    }
}

pub const fn immutable(path: &'static str) -> Field {
    Field {
        path,
        class: FieldClass::Immutable,
    }
}

pub const fn management(path: &'static str, what: &'static str) -> Field {
    Field {
        path,
        class: FieldClass::Management { what },
    }
}

pub mod checks {
    //! The checks of a kind's table against its CRD and README.

    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::{Field, FieldClass};

    fn for_provider(crd: &Value) -> &Value {
        &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["forProvider"]
    }

    fn rules(schema: &Value) -> Vec<(String, String)> {
        schema["x-kubernetes-validations"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                let text = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
                (text("rule"), text("message"))
            })
            .collect()
    }

    /// Every property has one row, every row a property, and every immutable property a
    /// transition rule (its own, or its parent's naming it) whose message names it.
    pub fn classes_match_the_crd(crd: &Value, fields: &[Field]) {
        let schema = for_provider(crd);
        let props: BTreeSet<&str> = schema["properties"]
            .as_object()
            .expect("forProvider has properties")
            .keys()
            .map(String::as_str)
            .collect();
        let rows: Vec<&str> = fields.iter().map(|f| f.path).collect();
        let unique: BTreeSet<&str> = rows.iter().copied().collect();
        assert_eq!(
            unique.len(),
            rows.len(),
            "a property is listed twice: {rows:?}"
        );
        assert_eq!(
            props, unique,
            "forProvider properties and the class table differ (a property without a class would be silently ignored)"
        );
        let parent_rules = rules(schema);
        for f in fields.iter().filter(|f| f.class == FieldClass::Immutable) {
            let own = rules(&schema["properties"][f.path]);
            let needle = format!("oldSelf.{}", f.path);
            let refused = own
                .iter()
                .any(|(rule, message)| rule.contains("oldSelf") && message.contains(f.path))
                || parent_rules
                    .iter()
                    .any(|(rule, message)| rule.contains(&needle) && message.contains(f.path));
            assert!(
                refused,
                "immutable {} has no transition rule whose message names it",
                f.path
            );
        }
    }

    /// README's rows between `<!-- {marker}:start -->` and `<!-- {marker}:end -->`:
    /// `| `path` | class | action |`, in the table's order.
    pub fn readme_lists_the_table(marker: &str, fields: &[Field]) {
        let readme = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../README.md"),
        )
        .expect("README.md readable");
        let start = readme
            .find(&format!("<!-- {marker}:start -->"))
            .unwrap_or_else(|| panic!("README has no {marker} table"));
        let end = readme
            .find(&format!("<!-- {marker}:end -->"))
            .unwrap_or_else(|| panic!("README has no end of the {marker} table"));
        let rows: Vec<Vec<String>> = readme[start..end]
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| {
                l.trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().replace('`', ""))
                    .collect()
            })
            .collect();
        let expected: Vec<Vec<String>> = fields
            .iter()
            .map(|f| {
                let (class, action) = match f.class {
                    FieldClass::InPlace { action } => ("in place", action),
                    FieldClass::Immutable => ("immutable", "set at creation"),
                    FieldClass::Management { what } => ("management", what),
                };
                vec![f.path.to_owned(), class.to_owned(), action.to_owned()]
            })
            .collect();
        assert_eq!(
            rows, expected,
            "README's {marker} table, in the table's order"
        );
    }
}
