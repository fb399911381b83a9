//! The entries of etcd's configuration file that `spec.options` may set, each with the type etcd
//! decodes it into, and the admission rules of `spec.options` generated from that table.
//!
//! etcd reads its file with Go's JSON decoder into typed fields (`server/embed/config.go`,
//! etcd 3.4 to 3.6): a field of an integer type refuses a quoted value and a negative one when
//! unsigned, a `bool` field refuses a string, a `time.Duration` field takes integer nanoseconds
//! (a string such as `"10s"` is refused), and `log-level`, `auto-compaction-mode` and the other
//! words etcd checks at start refuse anything else. A member whose file does not decode does not
//! start, so ferroplane checks every value against this table before it writes a file: here at
//! admission where CEL can tell (types, ranges, words), and in the controller for all of it
//! (durations given as text, values that depend on each other).
//!
//! A ground-floor module: it imports nothing of this crate.

/// What an etcd option holds, as `spec.options` takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtcdOptionType {
    /// A whole number from `min` to `max`, written unquoted (etcd's `int`, `int64`, `uint`,
    /// `uint32` and `uint64` fields).
    Integer { min: i64, max: i64 },
    /// The string `"true"` or `"false"` (the schema has no booleans); written as a boolean.
    Boolean,
    /// A Go duration (`"500ms"`, `"1m30s"`) or whole nanoseconds; written as nanoseconds, the
    /// only form etcd's file takes.
    Duration,
    /// Text; a number is written as its digits.
    Text,
    /// One of these words.
    OneOf(&'static [&'static str]),
}

/// One entry of etcd's configuration file that `spec.options` may set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EtcdOption {
    pub name: &'static str,
    pub kind: EtcdOptionType,
}

const fn integer(name: &'static str, min: i64, max: i64) -> EtcdOption {
    EtcdOption {
        name,
        kind: EtcdOptionType::Integer { min, max },
    }
}
const fn unsigned(name: &'static str) -> EtcdOption {
    integer(name, 0, i64::MAX)
}
const fn signed(name: &'static str) -> EtcdOption {
    integer(name, i64::MIN, i64::MAX)
}
const fn boolean(name: &'static str) -> EtcdOption {
    EtcdOption {
        name,
        kind: EtcdOptionType::Boolean,
    }
}
const fn duration(name: &'static str) -> EtcdOption {
    EtcdOption {
        name,
        kind: EtcdOptionType::Duration,
    }
}
const fn text(name: &'static str) -> EtcdOption {
    EtcdOption {
        name,
        kind: EtcdOptionType::Text,
    }
}
const fn one_of(name: &'static str, words: &'static [&'static str]) -> EtcdOption {
    EtcdOption {
        name,
        kind: EtcdOptionType::OneOf(words),
    }
}

/// The longest election timeout etcd accepts, in milliseconds (`maxElectionMs`).
pub const MAX_ELECTION_TIMEOUT_MS: i64 = 50_000;

/// Every option `spec.options` may set, sorted by name: etcd 3.6's names and the
/// `experimental-` names 3.5 uses (3.6 still reads them). Options that take a list or a map
/// (`log-outputs`, `cipher-suites`, `socket-options`) are not here: the schema admits numbers
/// and strings only.
pub const ETCD_OPTIONS: &[EtcdOption] = &[
    text("auth-token"),
    unsigned("auth-token-ttl"),
    one_of("auto-compaction-mode", &["periodic", "revision"]),
    text("auto-compaction-retention"),
    duration("backend-batch-interval"),
    signed("backend-batch-limit"),
    one_of("backend-bbolt-freelist-type", &["array", "map"]),
    unsigned("bcrypt-cost"),
    unsigned("bootstrap-defrag-threshold-megabytes"),
    duration("compact-hash-check-time"),
    signed("compaction-batch-limit"),
    duration("compaction-sleep-interval"),
    duration("corrupt-check-time"),
    text("cors"),
    text("distributed-tracing-address"),
    text("distributed-tracing-instance-id"),
    signed("distributed-tracing-sampling-rate"),
    text("distributed-tracing-service-name"),
    duration("downgrade-check-time"),
    integer("election-timeout", 0, MAX_ELECTION_TIMEOUT_MS),
    boolean("enable-distributed-tracing"),
    boolean("enable-log-rotation"),
    boolean("enable-pprof"),
    boolean("enable-v2"),
    unsigned("experimental-bootstrap-defrag-threshold-megabytes"),
    boolean("experimental-compact-hash-check-enabled"),
    duration("experimental-compact-hash-check-time"),
    signed("experimental-compaction-batch-limit"),
    duration("experimental-compaction-sleep-interval"),
    duration("experimental-corrupt-check-time"),
    text("experimental-distributed-tracing-address"),
    text("experimental-distributed-tracing-instance-id"),
    signed("experimental-distributed-tracing-sampling-rate"),
    text("experimental-distributed-tracing-service-name"),
    duration("experimental-downgrade-check-time"),
    boolean("experimental-enable-distributed-tracing"),
    boolean("experimental-enable-lease-checkpoint"),
    boolean("experimental-enable-lease-checkpoint-persist"),
    text("experimental-enable-v2v3"),
    boolean("experimental-initial-corrupt-check"),
    signed("experimental-max-learners"),
    boolean("experimental-memory-mlock"),
    boolean("experimental-peer-skip-client-san-verification"),
    unsigned("experimental-snapshot-catch-up-entries"),
    boolean("experimental-stop-grpc-service-on-defrag"),
    boolean("experimental-txn-mode-write-with-shared-buffer"),
    duration("experimental-warning-apply-duration"),
    duration("experimental-warning-unary-request-duration"),
    duration("experimental-watch-progress-notify-interval"),
    text("feature-gates"),
    duration("grpc-keepalive-interval"),
    duration("grpc-keepalive-min-time"),
    duration("grpc-keepalive-timeout"),
    unsigned("heartbeat-interval"),
    text("host-whitelist"),
    boolean("initial-election-tick-advance"),
    one_of("log-format", &["json", "console"]),
    one_of(
        "log-level",
        &["debug", "info", "warn", "error", "panic", "fatal"],
    ),
    text("log-rotation-config-json"),
    one_of("logger", &["zap"]),
    integer("max-concurrent-streams", 0, u32::MAX as i64),
    signed("max-learners"),
    unsigned("max-request-bytes"),
    unsigned("max-snapshots"),
    unsigned("max-txn-ops"),
    unsigned("max-wals"),
    boolean("memory-mlock"),
    one_of("metrics", &["basic", "extensive"]),
    boolean("pre-vote"),
    signed("quota-backend-bytes"),
    unsigned("self-signed-cert-validity"),
    unsigned("snapshot-catchup-entries"),
    unsigned("snapshot-count"),
    boolean("strict-reconfig-check"),
    one_of("tls-max-version", &["TLS1.2", "TLS1.3"]),
    one_of("tls-min-version", &["TLS1.2", "TLS1.3"]),
    boolean("unsafe-no-fsync"),
    one_of(
        "v2-deprecation",
        &["not-yet", "write-only", "write-only-drop-data", "gone"],
    ),
    duration("warning-apply-duration"),
    duration("warning-unary-request-duration"),
    duration("watch-progress-notify-interval"),
];

/// The option `name`, if `spec.options` may set it.
pub fn etcd_option(name: &str) -> Option<&'static EtcdOption> {
    ETCD_OPTIONS
        .binary_search_by(|o| o.name.cmp(name))
        .ok()
        .map(|at| &ETCD_OPTIONS[at])
}

/// Option names ferroplane renders itself; overriding one would break bootstrap, membership
/// or the URLs the controller uses.
pub const RESERVED_OPTIONS: &[&str] = &[
    "name",
    "data-dir",
    "wal-dir",
    "listen-peer-urls",
    "listen-client-urls",
    "listen-client-http-urls",
    "listen-metrics-urls",
    "initial-advertise-peer-urls",
    "advertise-client-urls",
    "initial-cluster",
    "initial-cluster-state",
    "initial-cluster-token",
    "enable-grpc-gateway",
    "force-new-cluster",
    "config-file",
];

/// Whether `name` is an option ferroplane sets itself (the same test as the admission rule):
/// the names above and the families `discovery*`, TLS files and switches.
pub fn is_reserved_option(name: &str) -> bool {
    RESERVED_OPTIONS.contains(&name)
        || name.starts_with("discovery")
        || name.ends_with("cert-file")
        || name.ends_with("key-file")
        || name.ends_with("trusted-ca-file")
        || name.ends_with("client-cert-auth")
        || name.ends_with("auto-tls")
        || name.starts_with("client-transport")
        || name.starts_with("peer-transport")
}

/// [`is_reserved_option`] of the key `k`, in CEL.
fn reserved_cel() -> String {
    format!(
        "(k in {}) || k.startsWith('discovery') || k.endsWith('cert-file') || k.endsWith('key-file') || k.endsWith('trusted-ca-file') || k.endsWith('client-cert-auth') || k.endsWith('auto-tls') || k.startsWith('client-transport') || k.startsWith('peer-transport')",
        cel_list(RESERVED_OPTIONS.iter().copied())
    )
}

fn cel_list<'a>(words: impl Iterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = words.map(|w| format!("'{w}'")).collect();
    format!("[{}]", quoted.join(", "))
}

fn known_names() -> String {
    cel_list(ETCD_OPTIONS.iter().map(|o| o.name))
}

/// The rule of one option: absent, or a value of its type. Per option, so that the message names
/// it (a `messageExpression` naming the offending keys costs more than the API server allows).
fn option_rule(option: &EtcdOption) -> Option<serde_json::Value> {
    let name = option.name;
    let value = format!("self['{name}']");
    let (test, message) = match option.kind {
        EtcdOptionType::Integer { min, max } => {
            let mut test = format!("type({value}) == int");
            let mut range = String::new();
            if min != i64::MIN {
                test.push_str(&format!(" && {value} >= {min}"));
            }
            if max != i64::MAX {
                test.push_str(&format!(" && {value} <= {max}"));
            }
            match (min, max) {
                (i64::MIN, i64::MAX) => {}
                (min, i64::MAX) => range = format!(", {min} or more"),
                (min, max) => range = format!(", from {min} to {max}"),
            }
            (
                test,
                format!("options.{name}: etcd reads a whole number here{range}, written unquoted"),
            )
        }
        EtcdOptionType::Boolean => (
            format!("type({value}) == string && {value} in ['true', 'false']"),
            format!("options.{name}: etcd reads a boolean here; write \"true\" or \"false\""),
        ),
        EtcdOptionType::Duration => (
            format!("type({value}) == string || {value} >= 0"),
            format!(
                "options.{name}: a duration such as \"500ms\" or \"1m30s\", or whole nanoseconds, not negative"
            ),
        ),
        EtcdOptionType::OneOf(words) => (
            format!(
                "type({value}) == string && {value} in {}",
                cel_list(words.iter().copied())
            ),
            format!("options.{name} must be one of {}", words.join(", ")),
        ),
        EtcdOptionType::Text => return None,
    };
    Some(serde_json::json!({
        "rule": format!("!('{name}' in self) || ({test})"),
        "message": message,
    }))
}

/// The admission rules of `spec.options`, from [`ETCD_OPTIONS`]: reserved names, unknown names,
/// then one rule per option whose type CEL can check (text is anything).
pub(super) fn admission_rules() -> Vec<serde_json::Value> {
    let reserved = reserved_cel();
    let mut rules = vec![
        serde_json::json!({
            "rule": format!("!self.exists(k, {reserved})"),
            "message": "options may not set what ferroplane sets itself: name, data-dir, wal-dir, listen-*, advertise-client-urls, initial-*, enable-grpc-gateway, force-new-cluster, discovery*, *cert-file, *key-file, *trusted-ca-file, *client-cert-auth, *auto-tls, config-file",
        }),
        serde_json::json!({
            "rule": format!("self.all(k, {reserved} || k in {})", known_names()),
            "message": "options: an entry is not one of etcd's configuration-file entries that ferroplane knows; check its spelling (etcd's flag names without --, e.g. quota-backend-bytes)",
        }),
    ];
    rules.extend(ETCD_OPTIONS.iter().filter_map(option_rule));
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_unique_and_free_of_reserved_names() {
        for pair in ETCD_OPTIONS.windows(2) {
            assert!(
                pair[0].name < pair[1].name,
                "{:?} before {:?}",
                pair[0],
                pair[1]
            );
        }
        for option in ETCD_OPTIONS {
            assert!(!is_reserved_option(option.name), "{}", option.name);
            assert_eq!(etcd_option(option.name), Some(option));
        }
    }

    #[test]
    fn options_have_etcds_types() {
        let kind = |name| etcd_option(name).map(|o| o.kind);
        assert_eq!(
            kind("quota-backend-bytes"),
            Some(EtcdOptionType::Integer {
                min: i64::MIN,
                max: i64::MAX
            }),
            "int64: a negative quota disables it"
        );
        assert_eq!(
            kind("snapshot-count"),
            Some(EtcdOptionType::Integer {
                min: 0,
                max: i64::MAX
            })
        );
        assert_eq!(
            kind("election-timeout"),
            Some(EtcdOptionType::Integer {
                min: 0,
                max: 50_000
            })
        );
        assert_eq!(
            kind("grpc-keepalive-timeout"),
            Some(EtcdOptionType::Duration)
        );
        assert_eq!(kind("enable-pprof"), Some(EtcdOptionType::Boolean));
        assert_eq!(
            kind("auto-compaction-retention"),
            Some(EtcdOptionType::Text)
        );
        assert!(matches!(kind("log-level"), Some(EtcdOptionType::OneOf(w)) if w.contains(&"warn")));
        assert_eq!(kind("quota-backend-byte"), None, "a misspelling is unknown");
        assert_eq!(kind("data-dir"), None, "reserved names are not options");
    }
}
