//! The in-place settings the network kinds share: name, description and tags, compared with
//! what the cloud reports. Unset spec fields are not managed; tags the cloud has beyond the
//! spec's are removed, except ferroplane's own (UID, rules policy) and the cloud's. Pure.

use std::collections::BTreeMap;

use ferroplane_apis::alibabacloud::Tags;
use ferroplane_runtime::UID_TAG;

use crate::cloud_fields::RULES_POLICY_TAG;

/// Tags the spec never changes: ferroplane's own (UID, rules policy) and the cloud's (`acs:`,
/// `aliyun`).
fn is_reserved(key: &str) -> bool {
    key == UID_TAG
        || key == RULES_POLICY_TAG
        || key.starts_with("acs:")
        || key.starts_with("aliyun")
}

/// What differs between the spec and the cloud.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AttributeDiff {
    pub name: Option<String>,
    pub description: Option<String>,
    /// Tags to add or overwrite.
    pub set: Vec<(String, String)>,
    /// Tag keys to remove.
    pub remove: Vec<String>,
    /// One line per change, for events and conditions.
    pub lines: Vec<String>,
}

impl AttributeDiff {
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Whether the kind's Modify*Attribute call has something to do.
    pub fn has_attributes(&self) -> bool {
        self.name.is_some() || self.description.is_some()
    }
}

/// The spec's side and the cloud's side of one kind.
pub(crate) struct Compared<'a> {
    /// The spec property of the name (`vpcName`, `vSwitchName`, `securityGroupName`).
    pub name_field: &'static str,
    pub want_name: Option<&'a str>,
    pub have_name: &'a str,
    pub want_description: Option<&'a str>,
    pub have_description: &'a str,
    pub want_tags: Option<&'a Tags>,
    pub have_tags: Vec<(&'a str, &'a str)>,
}

pub(crate) fn diff(c: &Compared<'_>) -> AttributeDiff {
    let mut d = AttributeDiff::default();
    if let Some(want) = c.want_name.filter(|w| *w != c.have_name) {
        d.lines
            .push(format!("{}: {:?} → {want:?}", c.name_field, c.have_name));
        d.name = Some(want.to_owned());
    }
    if let Some(want) = c.want_description.filter(|w| *w != c.have_description) {
        d.lines
            .push(format!("description: {:?} → {want:?}", c.have_description));
        d.description = Some(want.to_owned());
    }
    if let Some(want) = c.want_tags {
        let have: BTreeMap<&str, &str> = c
            .have_tags
            .iter()
            .copied()
            .filter(|(k, _)| !is_reserved(k))
            .collect();
        d.set = want
            .iter()
            .filter(|(k, _)| !is_reserved(k))
            .filter(|(k, v)| have.get(k.as_str()) != Some(&v.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        d.remove = have
            .keys()
            .filter(|k| !want.contains_key(**k))
            .map(|k| (*k).to_owned())
            .collect();
        if !d.set.is_empty() || !d.remove.is_empty() {
            let keys: Vec<&str> = d.set.iter().map(|(k, _)| k.as_str()).collect();
            d.lines
                .push(format!("tags: set {keys:?}, remove {:?}", d.remove));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compared<'a>(tags: &'a Tags, have: Vec<(&'a str, &'a str)>) -> Compared<'a> {
        Compared {
            name_field: "vpcName",
            want_name: Some("web"),
            have_name: "old",
            want_description: None,
            have_description: "anything",
            want_tags: Some(tags),
            have_tags: have,
        }
    }

    #[test]
    fn names_tags_and_removals_differ_reserved_tags_never() {
        let tags: Tags = [("team".to_owned(), "a".to_owned())].into();
        let d = diff(&compared(
            &tags,
            vec![
                ("team", "b"),
                ("extra", "x"),
                (UID_TAG, "u"),
                ("acs:x", "y"),
            ],
        ));
        assert_eq!(d.name.as_deref(), Some("web"));
        assert_eq!(d.description, None);
        assert_eq!(d.set, vec![("team".to_owned(), "a".to_owned())]);
        assert_eq!(d.remove, vec!["extra".to_owned()]);
        assert_eq!(d.lines.len(), 2);
        let same = diff(&Compared {
            want_name: Some("old"),
            ..compared(&tags, vec![("team", "a"), (UID_TAG, "u")])
        });
        assert!(same.is_empty());
    }
}
