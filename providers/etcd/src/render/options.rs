//! The etcd options every member runs with: ferroplane's defaults overlaid by `spec.options`.
//!
//! Options are entries of etcd's configuration file, not command-line flags: a member started
//! with `--config-file` ignores its other flags and `ETCD_*` variables, so the only place an
//! extra setting takes effect is the file (see [`super::bootstrap`]). etcd decodes the file into
//! typed fields and does not start on a value that does not fit, so each entry is checked and
//! converted by [`super::option_values`] first; one that fails stops the whole rendering, so
//! nothing rolls.
//!
//! Defaults, each overridable:
//! - `auto-compaction-mode: periodic`, `auto-compaction-retention: "1h"`: without compaction the
//!   keyspace history grows until the space quota raises NOSPACE.
//! - `quota-backend-bytes`: half the member volume (the database needs room to be rewritten by a
//!   defragmentation, and the WAL and snapshots share the volume), at most 8 GiB (etcd's
//!   suggested maximum); etcd's own 2 GiB without `storage`.

use std::collections::BTreeMap;

use ferroplane_apis::etcd::EtcdCluster;
use serde_json::{Value, json};

use super::option_values::{check_together, file_value};
use crate::error::SpecError;

const GIB: u64 = 1 << 30;
/// etcd's suggested largest space quota.
const MAX_QUOTA: u64 = 8 * GIB;
/// etcd's default space quota.
const DEFAULT_QUOTA: u64 = 2 * GIB;

/// The options of `cluster`'s members as their configuration file holds them, defaults
/// included, or the first entry etcd would refuse (admission refuses most of them too; this
/// covers objects written before the rules and what CEL cannot tell).
pub fn effective(cluster: &EtcdCluster) -> Result<BTreeMap<String, Value>, SpecError> {
    let mut options = defaults(cluster);
    for (name, given) in &cluster.spec.options {
        let value = file_value(name, given).map_err(|problem| SpecError::Option {
            name: name.clone(),
            problem,
        })?;
        options.insert(name.clone(), value);
    }
    check_together(&options)?;
    Ok(options)
}

fn defaults(cluster: &EtcdCluster) -> BTreeMap<String, Value> {
    let quota = cluster
        .spec
        .storage
        .as_ref()
        .and_then(|s| quantity_bytes(&s.size))
        .map_or(DEFAULT_QUOTA, |bytes| (bytes / 2).min(MAX_QUOTA));
    BTreeMap::from([
        ("auto-compaction-mode".to_owned(), json!("periodic")),
        ("auto-compaction-retention".to_owned(), json!("1h")),
        ("quota-backend-bytes".to_owned(), json!(quota)),
    ])
}

/// Bytes of a quantity of the form the storage size admits (`^[0-9]+(\.[0-9]+)?(suffix)?$`).
fn quantity_bytes(quantity: &str) -> Option<u64> {
    let split = quantity
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(quantity.len());
    let (number, suffix) = quantity.split_at(split);
    let multiplier: u64 = match suffix {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        "Pi" => 1 << 50,
        "Ei" => 1 << 60,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        "P" => 1_000_000_000_000_000,
        "E" => 1_000_000_000_000_000_000,
        _ => return None,
    };
    let number: f64 = number.parse().ok()?;
    // Volume sizes are far below f64's exact integer range in practice; truncation is fine.
    Some((number * multiplier as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::OptionProblem;

    fn cluster(spec: Value) -> EtcdCluster {
        serde_json::from_value(json!({
            "apiVersion": "etcd.ferroplane.io/v1alpha1",
            "kind": "EtcdCluster",
            "metadata": {"name": "e", "namespace": "ns"},
            "spec": spec,
        }))
        .expect("valid EtcdCluster")
    }

    #[test]
    fn defaults_compact_periodically_and_quota_half_the_volume() {
        let o = effective(&cluster(json!({"storage": {"size": "1Gi"}}))).expect("valid");
        assert_eq!(o["auto-compaction-mode"], "periodic");
        assert_eq!(o["auto-compaction-retention"], "1h");
        assert_eq!(o["quota-backend-bytes"], 512 * 1024 * 1024);
        let big = effective(&cluster(json!({"storage": {"size": "100Gi"}}))).expect("valid");
        assert_eq!(big["quota-backend-bytes"], 8 * GIB);
        let none = effective(&cluster(json!({}))).expect("valid");
        assert_eq!(none["quota-backend-bytes"], 2 * GIB);
    }

    #[test]
    fn user_options_override_defaults_and_keep_their_type() {
        let o = effective(&cluster(json!({"options": {
            "quota-backend-bytes": 104857600,
            "auto-compaction-retention": "30m",
            "enable-pprof": "true",
            "strict-reconfig-check": "false",
            "grpc-keepalive-timeout": "20s",
        }})))
        .expect("valid");
        assert_eq!(
            o["grpc-keepalive-timeout"],
            json!(20_000_000_000_i64),
            "the file takes nanoseconds"
        );
        assert_eq!(o["quota-backend-bytes"], json!(104857600));
        assert_eq!(o["auto-compaction-retention"], json!("30m"));
        assert_eq!(o["enable-pprof"], json!(true), "booleans arrive as strings");
        assert_eq!(o["strict-reconfig-check"], json!(false));
        assert_eq!(o["auto-compaction-mode"], json!("periodic"));
    }

    #[test]
    fn reserved_and_structured_options_are_refused() {
        for name in [
            "data-dir",
            "initial-cluster",
            "peer-cert-file",
            "discovery-srv",
        ] {
            let err = effective(&cluster(json!({"options": {name: "x"}}))).expect_err(name);
            assert_eq!(
                err,
                SpecError::Option {
                    name: name.to_owned(),
                    problem: OptionProblem::Reserved
                }
            );
        }
        let err = effective(&cluster(json!({"options": {"log-outputs": ["stderr"]}})))
            .expect_err("a list");
        assert!(err.to_string().contains("a list"), "{err}");
    }

    // Issue 32, defect 10: `quota-backend-bytes: "lots"` was written to the file and rolled.
    #[test]
    fn a_value_etcd_cannot_read_stops_the_rendering() {
        let err = effective(&cluster(
            json!({"options": {"quota-backend-bytes": "lots"}}),
        ))
        .expect_err("not a number");
        assert_eq!(err.reason(), crate::reasons::INVALID_ETCD_OPTION);
        assert!(matches!(
            err,
            SpecError::Option { ref name, problem: OptionProblem::NotInteger { .. } }
                if name == "quota-backend-bytes"
        ));
        let err = effective(&cluster(json!({"options": {"heartbeat-interval": 500}})))
            .expect_err("the default election timeout is too short for it");
        assert!(err.to_string().contains("election-timeout"), "{err}");
    }

    #[test]
    fn quantities_parse_as_the_storage_pattern_admits() {
        assert_eq!(quantity_bytes("8Gi"), Some(8 * GIB));
        assert_eq!(quantity_bytes("1.5Gi"), Some(GIB + GIB / 2));
        assert_eq!(quantity_bytes("500M"), Some(500_000_000));
        assert_eq!(quantity_bytes("1024"), Some(1024));
        assert_eq!(quantity_bytes("1Xi"), None);
    }
}
