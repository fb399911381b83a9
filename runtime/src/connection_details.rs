//! The connection details a provider reports (endpoints, credentials), which the framework
//! publishes in the connection Secret (`spec.writeConnectionSecretToRef`).

use std::collections::BTreeMap;
use std::fmt;

/// Credentials and endpoints for the connection Secret (`writeConnectionSecretToRef`).
///
/// `Debug` prints only the keys: values are often passwords or tokens.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ConnectionDetails(BTreeMap<String, Vec<u8>>);

impl ConnectionDetails {
    /// No details.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets one entry.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) {
        self.0.insert(key.into(), value.into());
    }

    /// Builder form of [`insert`](Self::insert).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.insert(key, value);
        self
    }

    /// Adds every entry of `other`, replacing entries with the same key.
    pub fn merge(&mut self, other: &ConnectionDetails) {
        for (k, v) in &other.0 {
            self.0.insert(k.clone(), v.clone());
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.0.get(key).map(Vec::as_slice)
    }

    /// The entries, sorted by key.
    pub fn as_map(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.0
    }
}

impl From<BTreeMap<String, Vec<u8>>> for ConnectionDetails {
    fn from(map: BTreeMap<String, Vec<u8>>) -> Self {
        Self(map)
    }
}

impl fmt::Debug for ConnectionDetails {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
