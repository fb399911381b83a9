//! The ledger: every resource a successful call created, changed or deleted, in order, with
//! the caller's account, the action, and the resource's tags right after the call (right
//! before it, for a deletion), so a test can tell from the cloud's side who touched what and
//! under which owner tag. A created key pair's private key is kept only as a digest
//! ([`secret_digest`]), to check that it reached its owner.
//!
//! A call's resources are found without knowing the action: every value of its parameters
//! and every string of its answer that names a resource of the caller's account is looked up
//! before and after the call, and what appeared, vanished or changed is recorded. Reads
//! (`Describe…`, `List…`) are not recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::received_params::ReceivedParams;
use crate::resource_records::{ResourceKind, ResourceState, association_of, rules_of, state_of};
use crate::store::Store;

/// IDs and names are short; longer values (user data, public keys) are never handles.
const MAX_HANDLE_LEN: usize = 128;

/// What a call did to a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Change {
    Created,
    Modified,
    Deleted,
}

/// One resource touched by one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    /// Order of the entry, from 0.
    pub seq: u64,
    pub action: String,
    /// The caller's account.
    pub account_id: String,
    pub kind: ResourceKind,
    pub resource_id: String,
    pub name: String,
    pub change: Change,
    /// After the call; before it, for a deletion.
    pub tags: BTreeMap<String, String>,
    /// For a created key pair whose private key the cloud generated: the digest
    /// ([`secret_digest`]) of the key it answered with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_digest: Option<String>,
}

/// A digest of a one-time secret as the ledger keeps it (hex MD5: identifies it, does not
/// reveal it).
pub fn secret_digest(secret: &str) -> String {
    crate::md5::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether calls of `action` may change resources.
pub fn records(action: &str) -> bool {
    !(action.starts_with("Describe") || action.starts_with("List"))
}

/// The strings of a call that may name a resource: its parameter values (and the elements of
/// JSON arrays among them).
pub fn handles_of(params: &ReceivedParams) -> BTreeSet<String> {
    let mut handles = BTreeSet::new();
    for value in params.values() {
        match serde_json::from_str::<Value>(value) {
            Ok(Value::Array(items)) => {
                handles.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            _ => {
                handles.insert(value.to_owned());
            }
        }
    }
    handles.retain(|h| h.len() <= MAX_HANDLE_LEN);
    handles
}

fn strings_of(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::String(s) if s.len() <= MAX_HANDLE_LEN => {
            out.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings_of(v, out)),
        _ => {}
    }
}

/// The states of the resources among `handles`.
pub(crate) fn snapshot(
    store: &mut Store,
    account_id: &Arc<str>,
    region_id: Option<&'static str>,
    handles: &BTreeSet<String>,
    now: Timestamp,
) -> BTreeMap<(ResourceKind, String), ResourceState> {
    let mut states: BTreeMap<(ResourceKind, String), ResourceState> = handles
        .iter()
        .filter_map(|h| state_of(store, account_id, region_id, h, now))
        .map(|s| ((s.record.kind, s.record.id.clone()), s))
        .collect();
    // An EIP's association is a record of its own, found through the EIP.
    for h in handles {
        if let Some(s) = association_of(store, account_id, h, now) {
            states.insert((s.record.kind, s.record.id.clone()), s);
        }
        // So is each rule of a security group, found through the group or its own ID.
        for s in rules_of(store, account_id, h) {
            states.insert((s.record.kind, s.record.id.clone()), s);
        }
    }
    states
}

/// The ledger of one mock.
#[derive(Debug, Default)]
pub struct Ledger {
    entries: Vec<LedgerEntry>,
}

impl Ledger {
    /// Every entry, oldest first.
    pub fn entries(&self) -> &[LedgerEntry] {
        &self.entries
    }

    /// Records what call `action` of `account_id` did: `before` is the snapshot of its
    /// parameters' handles before it ran; `answer` its successful answer.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record_call(
        &mut self,
        store: &mut Store,
        action: &str,
        account_id: &Arc<str>,
        region_id: Option<&'static str>,
        mut handles: BTreeSet<String>,
        before: BTreeMap<(ResourceKind, String), ResourceState>,
        answer: &str,
        now: Timestamp,
    ) {
        let answer: Value = serde_json::from_str(answer).unwrap_or(Value::Null);
        strings_of(&answer, &mut handles);
        let after = snapshot(store, account_id, region_id, &handles, now);
        let secret = answer
            .get("PrivateKeyBody")
            .and_then(Value::as_str)
            .map(secret_digest);
        let mut entry = |state: &ResourceState, change: Change| {
            let record = &state.record;
            let secret_digest = (change == Change::Created && record.kind == ResourceKind::KeyPair)
                .then(|| secret.clone())
                .flatten();
            self.entries.push(LedgerEntry {
                seq: self.entries.len() as u64,
                action: action.to_owned(),
                account_id: account_id.to_string(),
                kind: record.kind,
                resource_id: record.id.clone(),
                name: record.name.clone(),
                change,
                tags: record.tags.clone(),
                secret_digest,
            });
        };
        for (key, state) in &after {
            match before.get(key) {
                None => entry(state, Change::Created),
                Some(old) if old.digest != state.digest => entry(state, Change::Modified),
                Some(_) => {}
            }
        }
        for (key, state) in &before {
            if !after.contains_key(key) {
                entry(state, Change::Deleted);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_include_json_array_elements_and_skip_long_values() {
        let long = "x".repeat(MAX_HANDLE_LEN + 1);
        let params = ReceivedParams::from_pairs([
            ("InstanceIds", r#"["i-1","i-2"]"#),
            ("VpcId", "vpc-1"),
            ("UserData", long.as_str()),
        ]);
        let handles = handles_of(&params);
        for h in ["i-1", "i-2", "vpc-1"] {
            assert!(handles.contains(h), "{h}");
        }
        assert!(!handles.contains(&long));
    }

    #[test]
    fn reads_are_not_recorded() {
        assert!(!records("DescribeVpcs"));
        assert!(!records("ListTagResources"));
        assert!(records("CreateKeyPair"));
        assert!(records("TagResources"));
    }

    #[test]
    fn the_secret_digest_is_stable_and_not_the_secret() {
        let d = secret_digest("-----BEGIN RSA PRIVATE KEY-----");
        assert_eq!(d, secret_digest("-----BEGIN RSA PRIVATE KEY-----"));
        assert_eq!(d.len(), 32);
        assert!(!d.contains("PRIVATE"));
    }
}
