//! Cloud values as the CRD schemas take them: a value a schema would refuse is left unset
//! (unset fields are not managed, so the import still matches the cloud), and tags lose the
//! keys that are ferroplane's own or the cloud's. Pure.

use std::collections::BTreeMap;

use ferroplane_runtime::UID_TAG;

/// The tag that carries a SecurityGroup's rules policy (ferroplane's own).
const RULES_POLICY_TAG: &str = "ferroplane.io/rules-policy";

/// `value` when its length in characters is within `min..=max`.
pub fn text(value: &str, min: usize, max: usize) -> Option<String> {
    let n = value.chars().count();
    ((min..=max).contains(&n)).then(|| value.to_owned())
}

/// A name that must not start with `http://` or `https://`.
pub fn plain_name(value: &str, min: usize, max: usize) -> Option<String> {
    text(value, min, max).filter(|v| !v.starts_with("http://") && !v.starts_with("https://"))
}

/// A name that must start with a letter.
pub fn letter_name(value: &str, min: usize, max: usize) -> Option<String> {
    plain_name(value, min, max).filter(|v| v.starts_with(|c: char| c.is_alphabetic()))
}

/// Whether ferroplane or the cloud owns this tag key.
pub fn is_reserved_tag(key: &str) -> bool {
    key == UID_TAG
        || key == RULES_POLICY_TAG
        || key.starts_with("acs:")
        || key.starts_with("aliyun")
}

/// The user's tags of a resource, or `None` (not managed) when there are more than `max`.
pub fn user_tags<'a>(
    pairs: impl Iterator<Item = (&'a str, &'a str)>,
    max: usize,
) -> Option<BTreeMap<String, String>> {
    let tags: BTreeMap<String, String> = pairs
        .filter(|(k, _)| !is_reserved_tag(k))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    (tags.len() <= max).then_some(tags)
}

/// Whether ferroplane's owner tag marks the resource as another object's.
pub fn owned<'a>(mut pairs: impl Iterator<Item = (&'a str, &'a str)>) -> bool {
    pairs.any(|(k, v)| k == UID_TAG && !v.is_empty())
}
