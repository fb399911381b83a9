//! The object annotations ferroplane reads that Crossplane spells differently:
//! `ferroplane.io/external-name`, `ferroplane.io/paused` and
//! `ferroplane.io/reconcile-requested-at`, each also read as `crossplane.io/…`, so that
//! Crossplane's tools and compositions work on ferroplane's objects unchanged.
//!
//! One precedence for all three: **the `ferroplane.io/` annotation wins** when both are set and
//! differ, and the disagreement is reported (a note in `Synced` and one Warning event,
//! [`reasons::CONFLICTING_ANNOTATIONS`](crate::reasons::CONFLICTING_ANNOTATIONS)). Why that way
//! round: ferroplane writes the external name under both keys itself, so a `ferroplane.io/` name
//! is the record of what it created or adopted (and tagged); letting a later `crossplane.io/`
//! value win would move the object to another resource and leak the one it made. The same rule
//! for `paused` keeps it one rule: an explicit `ferroplane.io/paused: "false"` is a person's
//! answer. Ground floor: imports nothing of this crate.

use std::collections::BTreeMap;

use ferroplane_apis::common::names;
use kube::Resource;

/// One annotation and its Crossplane spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aliased {
    /// The `ferroplane.io/` key, which wins.
    pub ours: &'static str,
    /// The `crossplane.io/` key.
    pub crossplane: &'static str,
}

/// The external resource's identifier.
pub const EXTERNAL_NAME: Aliased = Aliased {
    ours: names::EXTERNAL_NAME,
    crossplane: names::CROSSPLANE_EXTERNAL_NAME,
};
/// Stop reconciling.
pub const PAUSED: Aliased = Aliased {
    ours: names::PAUSED,
    crossplane: names::CROSSPLANE_PAUSED,
};
/// Reconcile now; echoed in `status.lastHandledReconcileAt`.
pub const RECONCILE_REQUESTED_AT: Aliased = Aliased {
    ours: names::RECONCILE_REQUESTED_AT,
    crossplane: names::CROSSPLANE_RECONCILE_REQUESTED_AT,
};

/// Every aliased annotation, in the order disagreements are reported.
pub const ALL: [Aliased; 3] = [EXTERNAL_NAME, PAUSED, RECONCILE_REQUESTED_AT];

/// The value in effect and the key it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InEffect<'a> {
    pub value: &'a str,
    pub key: &'static str,
}

impl Aliased {
    /// The value in effect: the `ferroplane.io/` one when set, else the `crossplane.io/` one.
    pub fn read<'a>(
        &self,
        annotations: Option<&'a BTreeMap<String, String>>,
    ) -> Option<InEffect<'a>> {
        let get = |key: &'static str| {
            annotations
                .and_then(|a| a.get(key))
                .map(|v| InEffect { value: v, key })
        };
        get(self.ours).or_else(|| get(self.crossplane))
    }

    /// Both keys set to different values: `(ours, crossplane)`.
    pub fn disagreement<'a>(
        &self,
        annotations: Option<&'a BTreeMap<String, String>>,
    ) -> Option<(&'a str, &'a str)> {
        let a = annotations?;
        match (a.get(self.ours), a.get(self.crossplane)) {
            // An empty external name is no name (see `external_name_in`): nothing to disagree.
            (Some(ours), _) if ours.is_empty() && *self == EXTERNAL_NAME => None,
            (Some(ours), Some(theirs)) if ours != theirs => Some((ours, theirs)),
            _ => None,
        }
    }
}

/// The external name recorded on `obj` under either key (empty counts as unset).
pub fn external_name<K: Resource>(obj: &K) -> Option<&str> {
    external_name_in(obj.meta().annotations.as_ref())
}

/// [`external_name`] of an annotation map.
pub fn external_name_in(annotations: Option<&BTreeMap<String, String>>) -> Option<&str> {
    // An empty `ferroplane.io/` value is "no name", not a name that hides Crossplane's.
    let nonempty = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    };
    match annotations.and_then(|a| a.get(EXTERNAL_NAME.ours)) {
        Some(v) if !v.is_empty() => Some(v),
        _ => nonempty(EXTERNAL_NAME.crossplane),
    }
}

/// Every disagreement on `annotations`, as one sentence for `Synced` and the Warning event, or
/// `None` when the aliases agree. Values are cut to 63 characters (a label value's length).
pub fn disagreements(annotations: Option<&BTreeMap<String, String>>) -> Option<String> {
    let cut = |v: &str| v.chars().take(63).collect::<String>();
    let parts: Vec<String> = ALL
        .iter()
        .filter_map(|alias| {
            alias.disagreement(annotations).map(|(ours, theirs)| {
                format!(
                    "{} is {:?} but {} is {:?}",
                    alias.ours,
                    cut(ours),
                    alias.crossplane,
                    cut(theirs)
                )
            })
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "conflicting annotations: {}; the ferroplane.io/ value is used (set both alike, or remove one)",
            parts.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn crossplane_key_is_read_when_ours_is_absent() {
        let a = map(&[("crossplane.io/paused", "true")]);
        assert_eq!(
            PAUSED.read(Some(&a)),
            Some(InEffect {
                value: "true",
                key: "crossplane.io/paused"
            })
        );
        assert_eq!(PAUSED.disagreement(Some(&a)), None);
        assert_eq!(RECONCILE_REQUESTED_AT.read(Some(&a)), None);
        assert_eq!(PAUSED.read(None), None);
    }

    #[test]
    fn ours_wins_and_a_disagreement_is_named() {
        let a = map(&[
            ("ferroplane.io/external-name", "i-ours"),
            ("crossplane.io/external-name", "i-theirs"),
            ("ferroplane.io/paused", "false"),
            ("crossplane.io/paused", "false"),
        ]);
        assert_eq!(EXTERNAL_NAME.read(Some(&a)).unwrap().value, "i-ours");
        assert_eq!(external_name_in(Some(&a)), Some("i-ours"));
        assert_eq!(PAUSED.disagreement(Some(&a)), None);
        let note = disagreements(Some(&a)).unwrap();
        assert!(
            note.contains(r#"ferroplane.io/external-name is "i-ours" but crossplane.io/external-name is "i-theirs""#),
            "{note}"
        );
        assert!(!note.contains("paused"), "{note}");
        assert_eq!(
            disagreements(Some(&map(&[("crossplane.io/paused", "true")]))),
            None
        );
    }

    #[test]
    fn an_empty_external_name_does_not_hide_crossplanes() {
        let a = map(&[
            ("ferroplane.io/external-name", ""),
            ("crossplane.io/external-name", "vpc-1"),
        ]);
        assert_eq!(external_name_in(Some(&a)), Some("vpc-1"));
        assert_eq!(disagreements(Some(&a)), None);
        assert_eq!(
            external_name_in(Some(&map(&[("crossplane.io/external-name", "")]))),
            None
        );
    }
}
