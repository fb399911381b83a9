//! The `ferroplane.io/paused` annotation (or its alias `crossplane.io/paused`, see
//! `annotations`) read as Kubernetes annotations spell booleans: exactly
//! `"true"` or `"false"`. Any other value (`"True"`, `"yes"`, `""`) is not guessed at: the object
//! stays paused (nothing reaches the cloud) and the reconciler says which values are accepted.

/// What the annotation asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Paused<'a> {
    /// Absent or `"false"`: reconcile.
    No,
    /// `"true"`: leave the object and its resource alone.
    Yes,
    /// Another value, kept for the message.
    NotUnderstood(&'a str),
}

/// Reads the annotation's value.
pub(crate) fn paused(value: Option<&str>) -> Paused<'_> {
    match value {
        None | Some("false") => Paused::No,
        Some("true") => Paused::Yes,
        Some(other) => Paused::NotUnderstood(other),
    }
}

/// The annotation key that keeps `annotations`' object from being reconciled (`"true"`, or a
/// value not understood, which is read as paused), or `None`: what `ferroplane plan` says of
/// an object the reconciler would leave alone.
pub fn paused_by(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
) -> Option<&'static str> {
    let set = crate::annotations::PAUSED.read(annotations)?;
    match paused(Some(set.value)) {
        Paused::No => None,
        Paused::Yes | Paused::NotUnderstood(_) => Some(set.key),
    }
}

/// The status message and Warning event for a value not understood (cut to 63 characters, the
/// length of a label value, so a huge value cannot flood the status).
pub(crate) fn not_understood(key: &str, value: &str) -> String {
    let shown: String = value.chars().take(63).collect();
    format!(
        "the value {shown:?} of annotation {key} is not understood: it must be \"true\" (pause) or \"false\" (reconcile), exactly so; the object is left alone as if paused until it is one of them"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_true_and_false_are_understood() {
        assert_eq!(paused(None), Paused::No);
        assert_eq!(paused(Some("false")), Paused::No);
        assert_eq!(paused(Some("true")), Paused::Yes);
        for other in ["True", "TRUE", "1", "yes", "", " true"] {
            assert_eq!(paused(Some(other)), Paused::NotUnderstood(other));
        }
    }

    #[test]
    fn an_object_is_left_alone_under_either_key_unless_false() {
        let map = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        assert_eq!(paused_by(None), None);
        assert_eq!(
            paused_by(Some(&map(&[("ferroplane.io/paused", "false")]))),
            None
        );
        assert_eq!(
            paused_by(Some(&map(&[("ferroplane.io/paused", "true")]))),
            Some("ferroplane.io/paused")
        );
        assert_eq!(
            paused_by(Some(&map(&[("crossplane.io/paused", "yes")]))),
            Some("crossplane.io/paused")
        );
        // Ours overrules Crossplane's.
        assert_eq!(
            paused_by(Some(&map(&[
                ("ferroplane.io/paused", "false"),
                ("crossplane.io/paused", "true")
            ]))),
            None
        );
    }
}
