//! [`Params`]: the business parameters of one call, with the flattening rules of the RPC API
//! (`Tag.1.Key`, `InstanceId.1`, JSON arrays in one string).

use std::collections::BTreeMap;
use std::fmt;

/// Parameters whose values are secret: `Debug` hides them and error messages that echo them are
/// redacted.
pub(crate) const SENSITIVE_PARAMS: &[&str] = &["Password", "OIDCToken", "SecurityToken"];

/// Request parameters by name; sorted, as signing needs them. `Debug` hides secret values.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Params(BTreeMap<String, String>);

impl fmt::Debug for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(name, value)| {
                let shown = if SENSITIVE_PARAMS.contains(&name.as_str()) {
                    "<redacted>"
                } else {
                    value.as_str()
                };
                (name, shown)
            }))
            .finish()
    }
}

impl Params {
    /// No parameters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a parameter.
    pub fn set(&mut self, name: impl Into<String>, value: impl ToString) -> &mut Self {
        self.0.insert(name.into(), value.to_string());
        self
    }

    /// Sets a parameter when a value is given.
    pub fn opt<V: ToString>(&mut self, name: &str, value: Option<V>) -> &mut Self {
        if let Some(value) = value {
            self.set(name, value);
        }
        self
    }

    /// `Name.1`, `Name.2`, ... (1-based) for each value.
    pub fn list<V: ToString>(
        &mut self,
        name: &str,
        values: impl IntoIterator<Item = V>,
    ) -> &mut Self {
        for (i, value) in values.into_iter().enumerate() {
            self.set(format!("{name}.{}", i + 1), value);
        }
        self
    }

    /// One parameter holding a JSON array of strings, e.g. `InstanceIds=["i-1","i-2"]`.
    pub fn json_list<V: AsRef<str>>(
        &mut self,
        name: &str,
        values: impl IntoIterator<Item = V>,
    ) -> &mut Self {
        let array: Vec<serde_json::Value> = values
            .into_iter()
            .map(|v| serde_json::Value::from(v.as_ref()))
            .collect();
        self.set(name, serde_json::Value::Array(array))
    }

    /// Whether a parameter is set.
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// A parameter's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The parameters as a sorted map.
    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    /// The parameters as a sorted map, by value.
    pub fn into_map(self) -> BTreeMap<String, String> {
        self.0
    }
}

impl FromIterator<(String, String)> for Params {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl From<BTreeMap<String, String>> for Params {
    fn from(map: BTreeMap<String, String>) -> Self {
        Self(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattening_rules() {
        let mut p = Params::new();
        p.set("RegionId", "cn-beijing")
            .opt("ZoneId", None::<&str>)
            .opt("Amount", Some(2))
            .list("InstanceId", ["i-1", "i-2"])
            .json_list("InstanceIds", ["i-\"a", "i-b"]);
        let map = p.as_map();
        assert_eq!(map.get("InstanceId.1").unwrap(), "i-1");
        assert_eq!(map.get("InstanceId.2").unwrap(), "i-2");
        assert_eq!(map.get("Amount").unwrap(), "2");
        assert!(!p.contains("ZoneId"));
        assert_eq!(map.get("InstanceIds").unwrap(), r#"["i-\"a","i-b"]"#);
    }
}
