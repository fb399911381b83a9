//! The connection details a provider reports (endpoints, credentials), which the framework
//! publishes in the connection Secret (`spec.writeConnectionSecretToRef`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Credentials and endpoints for the connection Secret (`writeConnectionSecretToRef`).
///
/// `Debug` prints only the keys: values are often passwords or tokens.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ConnectionDetails {
    entries: BTreeMap<String, Vec<u8>>,
    /// Keys whose value already in the Secret is kept when these details do not carry them.
    retained: BTreeSet<String>,
}

impl ConnectionDetails {
    /// No details.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets one entry.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) {
        self.entries.insert(key.into(), value.into());
    }

    /// Builder form of [`insert`](Self::insert).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.insert(key, value);
        self
    }

    /// Adds every entry of `other`, replacing entries with the same key.
    pub fn merge(&mut self, other: &ConnectionDetails) {
        for (k, v) in &other.entries {
            self.entries.insert(k.clone(), v.clone());
        }
        self.retained.extend(other.retained.iter().cloned());
    }

    /// Keeps the value of `key` that the Secret already holds whenever these details do not
    /// carry it: for a value the cloud returns only once (a generated private key), which later
    /// observations cannot report again.
    pub fn retaining(mut self, key: impl Into<String>) -> Self {
        self.retained.insert(key.into());
        self
    }

    /// The keys kept from the Secret when absent here.
    pub fn retained(&self) -> impl Iterator<Item = &str> {
        self.retained.iter().map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.entries.get(key).map(Vec::as_slice)
    }

    /// The entries, sorted by key.
    pub fn as_map(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.entries
    }
}

impl From<BTreeMap<String, Vec<u8>>> for ConnectionDetails {
    fn from(map: BTreeMap<String, Vec<u8>>) -> Self {
        Self {
            entries: map,
            retained: BTreeSet::new(),
        }
    }
}

impl fmt::Debug for ConnectionDetails {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.entries.keys()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retained_keys_survive_a_merge() {
        let mut d = ConnectionDetails::new()
            .with("name", "k")
            .retaining("privateKey");
        d.merge(&ConnectionDetails::new().retaining("other"));
        assert_eq!(d.retained().collect::<Vec<_>>(), ["other", "privateKey"]);
        assert_eq!(d.get("privateKey"), None);
    }

    #[test]
    fn connection_details_debug_hides_values() {
        let d = ConnectionDetails::new()
            .with("password", "hunter2")
            .with("host", "10.0.0.1");
        let printed = format!("{d:?}");
        assert!(printed.contains("password"));
        assert!(!printed.contains("hunter2"));
        assert!(!printed.contains("10.0.0.1"));
    }
}
