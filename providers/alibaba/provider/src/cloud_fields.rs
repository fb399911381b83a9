//! Fields every kind exchanges with the cloud the same way: the tags a create sends (the spec's,
//! plus the owner UID tag the spec may not set) and a string the cloud reports empty, which is
//! unset in `status.atProvider`, and the tag by which a security group tells rule objects how
//! its rules are kept. Pure.

/// The tag a SecurityGroup object puts on its group, valued with its `rulesPolicy` (`Exclusive`
/// or `Additive`): a SecurityGroupRule refuses an `Exclusive` group, whose object would revoke it.
pub(crate) const RULES_POLICY_TAG: &str = "ferroplane.io/rules-policy";

/// The tags to create a resource with: the spec's, and the UID tag (which the spec may not set).
pub(crate) fn uid_tagged<T>(
    tags: Option<&ferroplane_apis::alibabacloud::Tags>,
    uid: &str,
    tag: impl Fn(&str, &str) -> T,
) -> Vec<T> {
    let mut out: Vec<T> = tags
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != ferroplane_runtime::UID_TAG)
        .map(|(k, v)| tag(k, v))
        .collect();
    out.push(tag(ferroplane_runtime::UID_TAG, uid));
    out
}

/// `None` for an empty string: the cloud reports an unset field as `""`.
pub(crate) fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}
