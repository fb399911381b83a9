//! The idempotency key a provider passes to its cloud on create (ECS `ClientToken`).
//!
//! The key is a pure function of the object's UID and its create parameters, so a create that is
//! retried after a crash, a timeout or a lost response carries the same key and the cloud returns
//! the resource it already made instead of making another. A changed spec gives a new key (the
//! cloud would otherwise reject the retry as a parameter mismatch); by then the first resource is
//! found again through its UID tag ([`UID_TAG`]) by `observe`, before any second create.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Tag (cloud kinds) or label (in-cluster kinds) whose value is the managed object's UID. A
/// provider puts it on everything it creates and searches by it in `observe` when the external
/// name is unknown, so a resource whose name was lost is adopted, never duplicated.
pub const UID_TAG: &str = "ferroplane.io/uid";

const TOKEN_PREFIX: &str = "fp-";
/// 48 hex digits = 192 bits of SHA-256, ample against collisions and well under 64 chars.
const DIGEST_HEX_LEN: usize = 48;

/// A stable create token plus the UID the provider tags the new resource with.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdempotencyKey {
    token: String,
    uid: String,
}

impl IdempotencyKey {
    /// Derives the key from the object's UID and its create parameters (any JSON; key order does
    /// not matter).
    pub fn derive(uid: &str, create_parameters: &Value) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(uid.as_bytes());
        hasher.update([0u8]);
        let mut canonical = String::new();
        write_canonical(create_parameters, &mut canonical);
        hasher.update(canonical.as_bytes());
        let digest = hex::encode(hasher.finalize());
        let token = format!("{TOKEN_PREFIX}{}", &digest[..DIGEST_HEX_LEN]);
        Self {
            token,
            uid: uid.to_owned(),
        }
    }

    /// The token to send as the cloud's idempotency parameter (ASCII, at most 64 characters).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The managed object's UID, to put in the [`UID_TAG`] tag or label.
    pub fn uid(&self) -> &str {
        &self.uid
    }
}

/// Spec fields that say how ferroplane manages the resource, not what the resource is; they do
/// not change the create parameters.
const MANAGEMENT_FIELDS: &[&str] = &[
    "deletionPolicy",
    "managementPolicies",
    "providerConfigRef",
    "writeConnectionSecretToRef",
];

/// The create parameters the framework derives the key from: the object's `spec` without the
/// management fields, plus the external name the object had before (set when the resource
/// vanished and is made again, so a cloud that remembers tokens does not hand back the old,
/// deleted resource).
pub fn create_parameters(spec: Option<&Value>, previous_external_name: Option<&str>) -> Value {
    let mut spec = spec.cloned().unwrap_or(Value::Null);
    if let Value::Object(map) = &mut spec {
        for field in MANAGEMENT_FIELDS {
            map.remove(*field);
        }
    }
    serde_json::json!({"spec": spec, "previousExternalName": previous_external_name})
}

/// JSON with object keys sorted at every level, so equal values hash equally whatever the map
/// implementation's iteration order.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Maximum length of the token: ECS `ClientToken` accepts at most 64 ASCII characters.
    const MAX_TOKEN_LEN: usize = 64;

    #[test]
    fn same_inputs_same_token_and_fits_client_token() {
        let a = IdempotencyKey::derive("0b7e-uid", &json!({"a": 1, "b": [1, 2]}));
        let b = IdempotencyKey::derive("0b7e-uid", &json!({"b": [1, 2], "a": 1}));
        assert_eq!(a, b);
        assert!(a.token().len() <= MAX_TOKEN_LEN);
        assert!(a.token().is_ascii());
        assert_eq!(a.uid(), "0b7e-uid");
    }

    #[test]
    fn uid_and_parameters_both_matter() {
        let base = IdempotencyKey::derive("u1", &json!({"size": 1}));
        assert_ne!(
            base.token(),
            IdempotencyKey::derive("u2", &json!({"size": 1})).token()
        );
        assert_ne!(
            base.token(),
            IdempotencyKey::derive("u1", &json!({"size": 2})).token()
        );
        assert_ne!(
            base.token(),
            IdempotencyKey::derive("u1", &json!({"size": "1"})).token()
        );
    }

    #[test]
    fn management_fields_do_not_change_the_parameters() {
        let a = json!({"forProvider": {"zone": "a"}, "deletionPolicy": "Delete", "managementPolicies": ["*"]});
        let b = json!({"forProvider": {"zone": "a"}, "deletionPolicy": "Orphan", "providerConfigRef": {"name": "x"}});
        assert_eq!(
            create_parameters(Some(&a), None),
            create_parameters(Some(&b), None)
        );
        assert_ne!(
            create_parameters(Some(&a), None),
            create_parameters(Some(&a), Some("i-old"))
        );
    }

    #[test]
    fn nested_key_order_is_irrelevant() {
        let a = IdempotencyKey::derive("u", &json!({"x": {"p": 1, "q": {"r": true, "s": null}}}));
        let b = IdempotencyKey::derive("u", &json!({"x": {"q": {"s": null, "r": true}, "p": 1}}));
        assert_eq!(a, b);
    }
}
