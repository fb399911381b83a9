//! Tags as the APIs take them (`Tag.N.Key/Value` on creates and `TagResources`, for instances too)
//! and, for VPCs, vSwitches and security groups, as they keep, report (the VPC API as
//! `Key`/`Value`, ECS as `TagKey`/`TagValue`) and filter them.

use serde_json::{Value, json};

use crate::error::{ErrorResponse, truncate};
use crate::received_params::ReceivedParams;

/// Most tags a resource may carry.
pub const MAX_TAGS: usize = 20;

/// Tags of one resource, in the order given.
pub type Tags = Vec<(String, String)>;

/// The `Tag.N` of a create or `TagResources` call.
pub fn parse(p: &ReceivedParams) -> Result<Tags, ErrorResponse> {
    let tags = given(p)?;
    check_tags(&tags)?;
    Ok(tags)
}

/// The `Tag.N` of a call as given (at most [`MAX_TAGS`]), each tag not yet checked.
pub fn given(p: &ReceivedParams) -> Result<Tags, ErrorResponse> {
    Ok(p.key_values("Tag", MAX_TAGS)
        .map_err(|e| {
            if e.code == "InvalidParameter" {
                too_many_tags()
            } else {
                e
            }
        })?
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or_default()))
        .collect())
}

/// The `ResourceId.N` (at most 50) and `Tag.N` of a `TagResources` call, both required.
pub fn tag_request(p: &ReceivedParams) -> Result<(Vec<String>, Tags), ErrorResponse> {
    let ids = p.list("ResourceId", 50)?;
    if ids.is_empty() {
        return Err(ErrorResponse::missing("ResourceId.1"));
    }
    let tags = parse(p)?;
    if tags.is_empty() {
        return Err(ErrorResponse::missing("Tag.1.Key"));
    }
    Ok((ids, tags))
}

/// What an `UntagResources` call removes: from the resources `ResourceId.N` (at most 50,
/// required), the keys `TagKey.N`, or every tag with `All=true`.
pub struct UntagRequest {
    pub ids: Vec<String>,
    pub keys: Vec<String>,
    pub all: bool,
}

impl UntagRequest {
    /// The request's parameters, read in ECS's order.
    pub fn parse(p: &ReceivedParams) -> Result<Self, ErrorResponse> {
        let ids = p.list("ResourceId", 50)?;
        if ids.is_empty() {
            return Err(ErrorResponse::missing("ResourceId.1"));
        }
        let keys = p.list("TagKey", MAX_TAGS)?;
        let all = p.bool("All")?.unwrap_or(false);
        Ok(Self { ids, keys, all })
    }

    /// Removes from `tags` what the call names.
    pub fn remove_from(&self, tags: &mut Tags) {
        tags.retain(|(k, _)| !self.all && !self.keys.contains(k));
    }
}

/// The `Tag.N` filter of a describe: every key given must be present, with the value when one
/// is given.
pub fn filter(p: &ReceivedParams) -> Result<Vec<(String, Option<String>)>, ErrorResponse> {
    p.key_values("Tag", MAX_TAGS)
}

/// Whether `tags` pass `filter`.
pub fn matches(tags: &Tags, filter: &[(String, Option<String>)]) -> bool {
    filter.iter().all(|(key, value)| {
        tags.iter()
            .any(|(k, v)| k == key && value.as_ref().is_none_or(|want| want == v))
    })
}

/// Adds `new` to `tags`, overwriting the values of keys already there; refuses to go over the
/// limit.
pub fn merge(tags: &mut Tags, new: &Tags) -> Result<(), ErrorResponse> {
    let added = new
        .iter()
        .filter(|(k, _)| !tags.iter().any(|(existing, _)| existing == k))
        .count();
    if tags.len() + added > MAX_TAGS {
        return Err(too_many_tags());
    }
    for (key, value) in new {
        match tags.iter_mut().find(|(k, _)| k == key) {
            Some(existing) => existing.1.clone_from(value),
            None => tags.push((key.clone(), value.clone())),
        }
    }
    Ok(())
}

/// `{"Tag": [{"Key", "Value"}]}`, as the VPC API reports tags.
pub fn vpc_view(tags: &Tags) -> Value {
    json!({"Tag": tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()})
}

/// `{"Tag": [{"TagKey", "TagValue"}]}`, as ECS reports tags.
pub fn ecs_view(tags: &Tags) -> Value {
    json!({"Tag": tags.iter().map(|(k, v)| json!({"TagKey": k, "TagValue": v})).collect::<Vec<_>>()})
}

/// Validates one tag as ECS does.
pub fn check_tag(key: &str, value: &str) -> Result<(), ErrorResponse> {
    let lower = key.to_ascii_lowercase();
    if key.is_empty()
        || key.chars().count() > 128
        || lower.starts_with("aliyun")
        || lower.starts_with("acs:")
        || key.contains("http://")
        || key.contains("https://")
    {
        return Err(ErrorResponse::bad_request(
            "InvalidTagKey.Malformed",
            format!(
                "The specified tag key \"{}\" is invalid: 1 to 128 characters, not starting with aliyun or acs:, no http:// or https://.",
                truncate(key, 128)
            ),
        ));
    }
    if value.chars().count() > 128
        || value.starts_with("acs:")
        || value.contains("http://")
        || value.contains("https://")
    {
        return Err(ErrorResponse::bad_request(
            "InvalidTagValue.Malformed",
            "The specified tag value is invalid: at most 128 characters, not starting with acs:, no http:// or https://.",
        ));
    }
    Ok(())
}

/// Validates a set of tags for one request: each tag, unique keys, at most [`MAX_TAGS`].
pub fn check_tags(tags: &[(String, String)]) -> Result<(), ErrorResponse> {
    if tags.len() > MAX_TAGS {
        return Err(too_many_tags());
    }
    for (i, (key, value)) in tags.iter().enumerate() {
        check_tag(key, value)?;
        if tags[..i].iter().any(|(k, _)| k == key) {
            return Err(ErrorResponse::bad_request(
                "InvalidTagKey.Duplicated",
                "The specified tag keys are duplicated.",
            ));
        }
    }
    Ok(())
}

/// `InvalidTagCount` (400): a resource would carry more than [`MAX_TAGS`] tags.
pub fn too_many_tags() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidTagCount",
        format!("A resource can carry at most {MAX_TAGS} tags."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_ecs_refuses_in_a_tag() {
        let refused = [
            ("", "v"),
            ("Aliyun-team", "v"),
            ("ACS:team", "v"),
            ("see-https://x", "v"),
            ("team", "acs:web"),
            ("team", "see http://x"),
        ];
        for (key, value) in refused {
            assert!(check_tag(key, value).is_err(), "{key:?}={value:?}");
        }
        assert!(check_tag("team", "").is_ok());
        assert!(check_tag("team", "aliyun-web").is_ok());
    }

    #[test]
    fn filters_and_merges() {
        let mut tags: Tags = vec![("a".into(), "1".into())];
        assert!(matches(&tags, &[("a".into(), None)]));
        assert!(matches(&tags, &[("a".into(), Some("1".into()))]));
        assert!(!matches(&tags, &[("a".into(), Some("2".into()))]));
        assert!(!matches(&tags, &[("b".into(), None)]));
        merge(
            &mut tags,
            &vec![("a".into(), "2".into()), ("b".into(), "3".into())],
        )
        .unwrap();
        assert_eq!(
            tags,
            vec![("a".into(), "2".into()), ("b".into(), "3".into())]
        );
        let many: Tags = (0..MAX_TAGS)
            .map(|i| (format!("k{i}"), String::new()))
            .collect();
        assert!(merge(&mut tags, &many).is_err());
    }
}
