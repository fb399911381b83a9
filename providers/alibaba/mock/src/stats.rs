//! Counters of calls by action and errors by code, for `GET /_mock/stats` and
//! [`crate::MockServer::stats`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A snapshot of the mock's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MockStats {
    /// API calls by action (`Unknown` for actions the mock does not serve), failed ones included.
    pub calls: BTreeMap<String, u64>,
    /// Error answers by code.
    pub errors: BTreeMap<String, u64>,
    /// Instances ever created.
    pub instances_created: u64,
    /// Instances not deleted.
    pub instances_live: u64,
    /// Responses dropped by the `dropRate` fault (the calls were processed).
    pub dropped_responses: u64,
    /// Instance IDs named in `DescribeInstances` calls (`InstanceIds`), all calls together:
    /// with `calls`, how full the batched reads were.
    #[serde(default)]
    pub instance_ids_described: u64,
    /// Of those, IDs of instances that existed but were not listed yet (`visibility_lag`):
    /// looks that could only find nothing.
    #[serde(default)]
    pub unlisted_ids_described: u64,
}

impl MockStats {
    /// Calls of one action.
    pub fn calls_of(&self, action: &str) -> u64 {
        self.calls.get(action).copied().unwrap_or(0)
    }

    /// Errors with one code.
    pub fn errors_of(&self, code: &str) -> u64 {
        self.errors.get(code).copied().unwrap_or(0)
    }
}

/// The live counters. Keys come from fixed sets (served actions, the mock's own error codes),
/// so their number is bounded whatever clients send.
#[derive(Debug, Default)]
pub struct Counters {
    calls: BTreeMap<&'static str, u64>,
    errors: BTreeMap<String, u64>,
    dropped: u64,
    described: u64,
    described_unlisted: u64,
}

impl Counters {
    /// Counts one call.
    pub fn call(&mut self, action: &'static str) {
        *self.calls.entry(action).or_default() += 1;
    }

    /// Counts one error.
    pub fn error(&mut self, code: &str) {
        match self.errors.get_mut(code) {
            Some(n) => *n += 1,
            None => {
                self.errors.insert(code.to_owned(), 1);
            }
        }
    }

    /// Counts the instance IDs one `DescribeInstances` call names, `unlisted` of them not
    /// listed yet.
    pub fn described(&mut self, ids: u64, unlisted: u64) {
        self.described += ids;
        self.described_unlisted += unlisted;
    }

    /// Counts one dropped response.
    pub fn dropped(&mut self) {
        self.dropped += 1;
    }

    /// A snapshot without the instance figures.
    pub fn snapshot(&self) -> MockStats {
        MockStats {
            calls: self
                .calls
                .iter()
                .map(|(k, v)| ((*k).to_owned(), *v))
                .collect(),
            errors: self.errors.clone(),
            dropped_responses: self.dropped,
            instance_ids_described: self.described,
            unlisted_ids_described: self.described_unlisted,
            ..MockStats::default()
        }
    }
}
