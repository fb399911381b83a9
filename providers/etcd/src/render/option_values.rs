//! Each entry of `spec.options` checked against the type etcd reads it into (the table
//! `ferroplane_apis::etcd::ETCD_OPTIONS`) and turned into what etcd's configuration file holds:
//! a boolean for `"true"`, nanoseconds for `"20s"`, text for a number given to a text option.
//! Admission refuses most bad values already; this is the whole check, for objects stored before
//! the rules and for what CEL cannot tell (durations written as text, the format of a few text
//! options, options that contradict each other).

use std::collections::BTreeMap;

use ferroplane_apis::etcd::{
    ETCD_OPTIONS, EtcdOptionType, MAX_ELECTION_TIMEOUT_MS, etcd_option, is_reserved_option,
};
use serde_json::Value;

use super::go_duration;
use crate::error::{OptionProblem, SpecError};

/// The value etcd's file gets for the entry `name: given` of `spec.options`.
pub(crate) fn file_value(name: &str, given: &Value) -> Result<Value, OptionProblem> {
    if is_reserved_option(name) {
        return Err(OptionProblem::Reserved);
    }
    match given {
        Value::Null => return Err(OptionProblem::NotScalar("null")),
        Value::Array(_) => return Err(OptionProblem::NotScalar("a list")),
        Value::Object(_) => return Err(OptionProblem::NotScalar("a map")),
        _ => {}
    }
    let option = etcd_option(name).ok_or_else(|| OptionProblem::Unknown {
        suggestion: closest_known(name),
    })?;
    let shown = || shown(name, given);
    let value = match (option.kind, given) {
        (EtcdOptionType::Integer { min, max }, Value::Number(n)) => match n.as_i64() {
            Some(i) if (min..=max).contains(&i) => Value::from(i),
            Some(_) => {
                return Err(OptionProblem::OutOfRange {
                    given: shown(),
                    range: range(min, max),
                });
            }
            None => {
                return Err(OptionProblem::NotInteger {
                    given: shown(),
                    range: within(min, max),
                });
            }
        },
        (EtcdOptionType::Integer { min, max }, _) => {
            return Err(OptionProblem::NotInteger {
                given: shown(),
                range: within(min, max),
            });
        }
        (EtcdOptionType::Boolean, Value::Bool(b)) => Value::Bool(*b),
        (EtcdOptionType::Boolean, Value::String(s)) if s == "true" || s == "false" => {
            Value::Bool(s == "true")
        }
        (EtcdOptionType::Boolean, _) => return Err(OptionProblem::NotBoolean { given: shown() }),
        (EtcdOptionType::Duration, Value::Number(n)) => match n.as_i64() {
            Some(ns) if ns >= 0 => Value::from(ns),
            _ => return Err(OptionProblem::NotDuration { given: shown() }),
        },
        (EtcdOptionType::Duration, Value::String(s)) => match go_duration::nanoseconds(s) {
            Some(ns) => Value::from(ns),
            None => return Err(OptionProblem::NotDuration { given: shown() }),
        },
        (EtcdOptionType::Duration, _) => return Err(OptionProblem::NotDuration { given: shown() }),
        (EtcdOptionType::Text, Value::String(s)) => Value::String(s.clone()),
        (EtcdOptionType::Text, Value::Number(n)) => Value::String(n.to_string()),
        (EtcdOptionType::Text, _) => {
            return Err(OptionProblem::Malformed {
                given: shown(),
                expected: "text",
            });
        }
        (EtcdOptionType::OneOf(words), Value::String(s)) if words.contains(&s.as_str()) => {
            Value::String(s.clone())
        }
        (EtcdOptionType::OneOf(allowed), _) => {
            return Err(OptionProblem::NotOneOf {
                given: shown(),
                allowed,
            });
        }
    };
    check_text_format(name, &value).map_err(|expected| OptionProblem::Malformed {
        given: shown(),
        expected,
    })?;
    Ok(value)
}

/// The formats etcd parses at start in a few text options: what it expects, when `value` is not
/// of it.
fn check_text_format(name: &str, value: &Value) -> Result<(), &'static str> {
    let Value::String(text) = value else {
        return Ok(());
    };
    let fine = match name {
        "auth-token" => text == "simple" || text == "jwt" || text.starts_with("jwt,"),
        "feature-gates" => text.is_empty() || text.split(',').all(is_gate_setting),
        "log-rotation-config-json" => {
            serde_json::from_str::<serde_json::Map<String, Value>>(text).is_ok()
        }
        _ => true,
    };
    if fine {
        return Ok(());
    }
    Err(match name {
        "auth-token" => "simple, or jwt followed by its comma-separated settings",
        "feature-gates" => "comma-separated Name=true or Name=false settings",
        _ => "a JSON object",
    })
}

fn is_gate_setting(setting: &str) -> bool {
    setting
        .split_once('=')
        .is_some_and(|(gate, on)| !gate.trim().is_empty() && matches!(on.trim(), "true" | "false"))
}

/// What etcd refuses in the options taken together (`options` as the file will hold them,
/// defaults included).
pub(crate) fn check_together(options: &BTreeMap<String, Value>) -> Result<(), SpecError> {
    let int =
        |name: &str, default: i64| options.get(name).and_then(Value::as_i64).unwrap_or(default);
    let heartbeat = int("heartbeat-interval", 100);
    let election = int("election-timeout", 1000);
    if heartbeat.saturating_mul(5) > election {
        return Err(conflict(
            "election-timeout",
            format!(
                "is {election} ms, less than 5 times heartbeat-interval ({heartbeat} ms), which etcd refuses; set election-timeout to at least {} (at most {MAX_ELECTION_TIMEOUT_MS}) or lower heartbeat-interval",
                heartbeat.saturating_mul(5)
            ),
        ));
    }
    let mode = options.get("auto-compaction-mode").and_then(Value::as_str);
    if let Some(Value::String(retention)) = options.get("auto-compaction-retention") {
        let hours = retention.parse::<u64>().is_ok();
        match mode {
            Some("revision") if !hours => {
                return Err(conflict(
                    "auto-compaction-retention",
                    format!(
                        "is {}; with auto-compaction-mode revision it is the number of revisions to keep, e.g. \"10000\"",
                        shown(
                            "auto-compaction-retention",
                            &Value::String(retention.clone())
                        )
                    ),
                ));
            }
            _ if !hours && go_duration::nanoseconds(retention).is_none() => {
                return Err(conflict(
                    "auto-compaction-retention",
                    format!(
                        "is {}; with periodic compaction etcd expects a Go duration such as \"30m\" or a whole number of hours",
                        shown(
                            "auto-compaction-retention",
                            &Value::String(retention.clone())
                        )
                    ),
                ));
            }
            _ => {}
        }
    }
    if let (Some("TLS1.3"), Some("TLS1.2")) = (
        options.get("tls-min-version").and_then(Value::as_str),
        options.get("tls-max-version").and_then(Value::as_str),
    ) {
        return Err(conflict(
            "tls-min-version",
            "is TLS1.3, above tls-max-version TLS1.2, which etcd refuses; lower one or raise the other".to_owned(),
        ));
    }
    Ok(())
}

fn conflict(name: &str, why: String) -> SpecError {
    SpecError::Option {
        name: name.to_owned(),
        problem: OptionProblem::Conflict(why),
    }
}

/// `value` as a message may show it: as written, cut short when long, and never for an option
/// whose name suggests a credential.
fn shown(name: &str, value: &Value) -> String {
    const SECRET_LIKE: &[&str] = &["password", "token", "secret", "key"];
    if SECRET_LIKE.iter().any(|s| name.contains(s)) {
        return "a value (not shown)".to_owned();
    }
    let text = value.to_string();
    if text.chars().count() > 64 {
        format!("{}…", text.chars().take(64).collect::<String>())
    } else {
        text
    }
}

/// [`range`] as a clause after "a whole number", empty when any will do.
fn within(min: i64, max: i64) -> String {
    match (min, max) {
        (i64::MIN, i64::MAX) => String::new(),
        _ => format!(" ({})", range(min, max)),
    }
}

fn range(min: i64, max: i64) -> String {
    match (min, max) {
        (i64::MIN, i64::MAX) => "any whole number".to_owned(),
        (min, i64::MAX) => format!("{min} or more"),
        (min, max) => format!("from {min} to {max}"),
    }
}

/// The known option nearest to a misspelled `name`, if one is near (at most two edits, or the
/// name with or without `experimental-`).
fn closest_known(name: &str) -> Option<&'static str> {
    let bare = name.strip_prefix("experimental-").unwrap_or(name);
    ETCD_OPTIONS
        .iter()
        .map(|o| o.name)
        .map(|known| {
            let other = known.strip_prefix("experimental-").unwrap_or(known);
            let d = edit_distance(name, known).min(edit_distance(bare, other) + 1);
            (d, known)
        })
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, known)| known)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problem(name: &str, value: Value) -> OptionProblem {
        file_value(name, &value).expect_err(name)
    }

    #[test]
    fn values_become_what_etcds_file_holds() {
        let ok = |name: &str, value: Value| file_value(name, &value).expect(name);
        assert_eq!(
            ok("quota-backend-bytes", json!(4294967296_u64)),
            json!(4294967296_u64)
        );
        assert_eq!(
            ok("quota-backend-bytes", json!(-1)),
            json!(-1),
            "int64: disables the quota"
        );
        assert_eq!(ok("enable-pprof", json!("true")), json!(true));
        assert_eq!(ok("strict-reconfig-check", json!("false")), json!(false));
        assert_eq!(
            ok("grpc-keepalive-timeout", json!("20s")),
            json!(20_000_000_000_i64)
        );
        assert_eq!(
            ok("grpc-keepalive-timeout", json!(5)),
            json!(5),
            "nanoseconds"
        );
        assert_eq!(
            ok("auto-compaction-retention", json!(5)),
            json!("5"),
            "hours, as text"
        );
        assert_eq!(ok("log-level", json!("warn")), json!("warn"));
        assert_eq!(
            ok("feature-gates", json!("InitialCorruptCheck=true")),
            json!("InitialCorruptCheck=true")
        );
        assert_eq!(ok("election-timeout", json!(50000)), json!(50000));
    }

    #[test]
    fn a_value_etcd_would_refuse_is_named_with_what_etcd_takes() {
        let p = problem("quota-backend-bytes", json!("lots"));
        assert_eq!(
            p,
            OptionProblem::NotInteger {
                given: "\"lots\"".into(),
                range: String::new()
            }
        );
        let message = SpecError::Option {
            name: "quota-backend-bytes".into(),
            problem: p,
        }
        .to_string();
        assert!(
            message.contains("spec.options.quota-backend-bytes is \"lots\""),
            "{message}"
        );
        assert!(message.contains("whole number"), "{message}");
        assert!(
            matches!(
                problem("quota-backend-bytes", json!("4294967296")),
                OptionProblem::NotInteger { .. }
            ),
            "quoted"
        );
        assert!(matches!(
            problem("quota-backend-bytes", json!(1.5)),
            OptionProblem::NotInteger { .. }
        ));
        assert_eq!(
            problem("snapshot-count", json!(-1)),
            OptionProblem::OutOfRange {
                given: "-1".into(),
                range: "0 or more".into()
            }
        );
        assert_eq!(
            problem("election-timeout", json!(60000)),
            OptionProblem::OutOfRange {
                given: "60000".into(),
                range: "from 0 to 50000".into()
            }
        );
        assert!(matches!(
            problem("max-concurrent-streams", json!(4294967296_u64)),
            OptionProblem::OutOfRange { .. }
        ));
        assert_eq!(
            problem("enable-pprof", json!("yes")),
            OptionProblem::NotBoolean {
                given: "\"yes\"".into()
            }
        );
        assert_eq!(
            problem("enable-pprof", json!(1)),
            OptionProblem::NotBoolean { given: "1".into() }
        );
        assert_eq!(
            problem("grpc-keepalive-timeout", json!("20 seconds")),
            OptionProblem::NotDuration {
                given: "\"20 seconds\"".into()
            }
        );
        assert_eq!(
            problem("grpc-keepalive-timeout", json!(-5)),
            OptionProblem::NotDuration { given: "-5".into() }
        );
        assert!(
            matches!(problem("log-level", json!("verbose")), OptionProblem::NotOneOf { allowed, .. } if allowed.contains(&"debug"))
        );
        assert!(matches!(
            problem("log-level", json!(3)),
            OptionProblem::NotOneOf { .. }
        ));
        assert!(matches!(
            problem("feature-gates", json!("Foo")),
            OptionProblem::Malformed { .. }
        ));
        assert!(matches!(
            problem("log-rotation-config-json", json!("{")),
            OptionProblem::Malformed { .. }
        ));
        assert_eq!(
            problem("log-outputs", json!(["stderr"])),
            OptionProblem::NotScalar("a list")
        );
        assert_eq!(problem("data-dir", json!("/x")), OptionProblem::Reserved);
    }

    #[test]
    fn unknown_names_are_refused_with_the_nearest_known_one() {
        assert_eq!(
            problem("quota-backend-byte", json!(1)),
            OptionProblem::Unknown {
                suggestion: Some("quota-backend-bytes")
            }
        );
        assert_eq!(
            problem("experimental-pre-vote", json!("true")),
            OptionProblem::Unknown {
                suggestion: Some("pre-vote")
            }
        );
        assert_eq!(
            problem("frobnicate", json!(1)),
            OptionProblem::Unknown { suggestion: None }
        );
    }

    #[test]
    fn a_credential_like_value_is_never_shown() {
        let p = problem("auth-token", json!("jwt-with-my-secret"));
        assert!(!p.to_string().contains("my-secret"), "{p}");
    }

    #[test]
    fn options_that_contradict_each_other_are_refused() {
        let together = |pairs: Value| {
            let map: BTreeMap<String, Value> = serde_json::from_value(pairs).expect("a map");
            check_together(&map)
        };
        assert_eq!(
            together(json!({"heartbeat-interval": 100, "election-timeout": 1000})),
            Ok(())
        );
        let err = together(json!({"heartbeat-interval": 300})).expect_err("1000 < 1500");
        assert!(err.to_string().contains("at least 1500"), "{err}");
        assert_eq!(
            together(
                json!({"auto-compaction-mode": "periodic", "auto-compaction-retention": "30m"})
            ),
            Ok(())
        );
        assert_eq!(
            together(json!({"auto-compaction-mode": "periodic", "auto-compaction-retention": "5"})),
            Ok(())
        );
        assert!(
            together(
                json!({"auto-compaction-mode": "periodic", "auto-compaction-retention": "soon"})
            )
            .is_err()
        );
        assert!(
            together(
                json!({"auto-compaction-mode": "revision", "auto-compaction-retention": "1h"})
            )
            .is_err()
        );
        assert_eq!(
            together(
                json!({"auto-compaction-mode": "revision", "auto-compaction-retention": "10000"})
            ),
            Ok(())
        );
        assert!(
            together(json!({"tls-min-version": "TLS1.3", "tls-max-version": "TLS1.2"})).is_err()
        );
    }
}
