//! Request parameters: the query string and the form body merged into one sorted map, with typed
//! accessors that turn bad input into the ECS error for it.
//!
//! An empty value counts as absent for every accessor: SDKs send empty optional parameters (the
//! core SDK's `SignatureType=`), and ECS treats them as not given.

use std::collections::BTreeMap;
use std::str::FromStr;

use crate::error::ErrorResponse;

/// The parameters of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReceivedParams {
    all: BTreeMap<String, String>,
}

/// Decodes an `application/x-www-form-urlencoded` string (a query string or a form body).
pub fn decode_form(input: &[u8]) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(input)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

impl ReceivedParams {
    /// Merges query and body parameters; a body parameter overrides a query one of the same name.
    pub fn merge(query: &BTreeMap<String, String>, body: &BTreeMap<String, String>) -> Self {
        let mut all = query.clone();
        all.extend(body.iter().map(|(k, v)| (k.clone(), v.clone())));
        Self { all }
    }

    /// Parameters from explicit pairs (tests).
    #[cfg(test)]
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            all: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// Every parameter, sorted by name (what V1 signs).
    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.all
    }

    /// Every non-empty value.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.all
            .values()
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// The value, `None` when absent or empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.all
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// The value, or `MissingParameter` naming it.
    pub fn required(&self, name: &str) -> Result<&str, ErrorResponse> {
        self.get(name).ok_or_else(|| ErrorResponse::missing(name))
    }

    /// A boolean (`true`/`false`, any case), or `InvalidParameter`.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, ErrorResponse> {
        match self.get(name) {
            None => Ok(None),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(_) => Err(ErrorResponse::invalid(name)),
        }
    }

    /// A number, or `InvalidParameter`.
    pub fn number<T: FromStr>(&self, name: &str) -> Result<Option<T>, ErrorResponse> {
        self.get(name)
            .map(|v| {
                v.trim()
                    .parse::<T>()
                    .map_err(|_| ErrorResponse::invalid(name))
            })
            .transpose()
    }

    /// A number within `min..=max`, or the given error.
    pub fn number_in<T: FromStr + PartialOrd>(
        &self,
        name: &str,
        min: T,
        max: T,
    ) -> Result<Option<T>, ErrorResponse> {
        match self.number::<T>(name)? {
            Some(n) if n < min || n > max => Err(ErrorResponse::invalid(name)),
            other => Ok(other),
        }
    }

    /// The indices `N` present as `prefix.N` or `prefix.N.<field>`, sorted; a non-numeric or zero
    /// index is `InvalidParameter` naming the offending key.
    pub fn indices(&self, prefix: &str) -> Result<Vec<u32>, ErrorResponse> {
        let dotted = format!("{prefix}.");
        let mut out = Vec::new();
        for (key, value) in self.all.range(dotted.clone()..) {
            let Some(rest) = key.strip_prefix(&dotted) else {
                break;
            };
            if value.is_empty() {
                continue;
            }
            let index = rest.split('.').next().unwrap_or_default();
            match index.parse::<u32>() {
                Ok(n) if n >= 1 => out.push(n),
                _ => return Err(ErrorResponse::invalid(key)),
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// A flat 1-based list `prefix.1`, `prefix.2`, … in index order; at most `max` entries.
    pub fn list(&self, prefix: &str, max: usize) -> Result<Vec<String>, ErrorResponse> {
        let indices = self.indices(prefix)?;
        if indices.len() > max {
            return Err(ErrorResponse::invalid(prefix));
        }
        Ok(indices
            .into_iter()
            .filter_map(|n| self.get(&format!("{prefix}.{n}")).map(str::to_owned))
            .collect())
    }

    /// `prefix.N.Key` / `prefix.N.Value` pairs in index order; a value may be absent.
    pub fn key_values(
        &self,
        prefix: &str,
        max: usize,
    ) -> Result<Vec<(String, Option<String>)>, ErrorResponse> {
        let indices = self.indices(prefix)?;
        if indices.len() > max {
            return Err(ErrorResponse::invalid(prefix));
        }
        let mut out = Vec::with_capacity(indices.len());
        for n in indices {
            let key = format!("{prefix}.{n}.Key");
            let value = self.get(&format!("{prefix}.{n}.Value")).map(str::to_owned);
            match self.get(&key) {
                Some(k) => out.push((k.to_owned(), value)),
                None if value.is_some() => return Err(ErrorResponse::missing(&key)),
                None => {}
            }
        }
        Ok(out)
    }

    /// A JSON array of strings in one parameter (`InstanceIds=["i-1","i-2"]`).
    pub fn json_string_array(&self, name: &str) -> Result<Option<Vec<String>>, ErrorResponse> {
        self.get(name)
            .map(|raw| {
                serde_json::from_str::<Vec<String>>(raw).map_err(|_| ErrorResponse::invalid(name))
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_overrides_query_and_empty_means_absent() {
        let q = decode_form(b"A=1&B=2&SignatureType=");
        let b = decode_form(b"B=3&C=x+y%2Bz");
        let p = ReceivedParams::merge(&q, &b);
        assert_eq!(p.get("A"), Some("1"));
        assert_eq!(p.get("B"), Some("3"));
        assert_eq!(p.get("C"), Some("x y+z"));
        assert_eq!(p.get("SignatureType"), None);
        assert_eq!(
            p.as_map().get("SignatureType").map(String::as_str),
            Some("")
        );
        assert_eq!(p.required("Z").unwrap_err().code, "MissingParameter");
    }

    #[test]
    fn typed_accessors_reject_garbage() {
        let p = ReceivedParams::from_pairs([("F", "TRUE"), ("G", "yes"), ("N", "42"), ("M", "x")]);
        assert_eq!(p.bool("F").unwrap(), Some(true));
        assert_eq!(p.bool("G").unwrap_err().code, "InvalidParameter");
        assert_eq!(p.number::<u32>("N").unwrap(), Some(42));
        assert!(p.number::<u32>("M").is_err());
        assert!(p.number_in::<u32>("N", 1, 10).is_err());
        assert_eq!(p.number::<u32>("absent").unwrap(), None);
    }

    #[test]
    fn lists_are_ordered_by_numeric_index() {
        let p = ReceivedParams::from_pairs([
            ("InstanceId.10", "j"),
            ("InstanceId.2", "b"),
            ("InstanceId.1", "a"),
            ("InstanceIdX", "ignored"),
        ]);
        assert_eq!(p.list("InstanceId", 100).unwrap(), vec!["a", "b", "j"]);
        assert!(p.list("InstanceId", 2).is_err());
        let bad = ReceivedParams::from_pairs([("InstanceId.x", "a")]);
        assert!(bad.list("InstanceId", 100).is_err());
        let zero = ReceivedParams::from_pairs([("InstanceId.0", "a")]);
        assert!(zero.list("InstanceId", 100).is_err());
    }

    #[test]
    fn key_values_allow_missing_values_but_not_missing_keys() {
        let p = ReceivedParams::from_pairs([
            ("Tag.1.Key", "env"),
            ("Tag.1.Value", "dev"),
            ("Tag.2.Key", "k"),
        ]);
        assert_eq!(
            p.key_values("Tag", 20).unwrap(),
            vec![("env".into(), Some("dev".into())), ("k".into(), None)]
        );
        let bad = ReceivedParams::from_pairs([("Tag.1.Value", "v")]);
        assert_eq!(
            bad.key_values("Tag", 20).unwrap_err().code,
            "MissingParameter"
        );
    }

    #[test]
    fn json_arrays() {
        let p = ReceivedParams::from_pairs([
            ("InstanceIds", "[\"i-1\", \"i-2\"]"),
            ("Bad", "[1"),
            ("Timestamp", "t"),
            ("ClientToken", "c"),
        ]);
        assert_eq!(
            p.json_string_array("InstanceIds").unwrap().unwrap(),
            vec!["i-1", "i-2"]
        );
        assert!(p.json_string_array("Bad").is_err());
    }
}
