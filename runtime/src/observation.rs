//! What `observe` reports about the external resource: whether it exists, whether it matches
//! the spec, the status the provider observed, values to late-initialize the spec with, and how
//! ready it is.
//!
//! Status and late-initialization values are the provider's own types, serialized here: a
//! provider never writes `.status` or `.spec` keys by hand, and a value that cannot be
//! serialized is a [`ReconcileError`] of the `observe` that built it.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::conditions::Desired;
use crate::connection_details::ConnectionDetails;
use crate::error::ReconcileError;
use crate::ownership::ExternalOwner;
use crate::readiness::Readiness;
use crate::reasons;

/// Does the external resource match the spec?
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum UpToDate {
    /// Nothing to do.
    #[default]
    Yes,
    /// `update` is needed; the message names what differs (e.g. `instanceName: "a" → "b"`)
    /// without secret values.
    No(String),
}

/// The result of `observe`.
///
/// Build it with [`Observation::missing`] or [`Observation::found`] and the `with_*` methods;
/// the struct is `#[non_exhaustive]` so that fields can be added without breaking providers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Observation {
    /// Does the external resource exist?
    pub exists: bool,
    /// Its external name, when `observe` found it without one (adoption by UID tag) or wants to
    /// correct it. The framework records it in the `ferroplane.io/external-name` annotation.
    pub external_name: Option<String>,
    /// Whether `update` is needed.
    pub up_to_date: UpToDate,
    /// A JSON merge patch (RFC 7386) of `spec` filling fields the user left unset with observed
    /// values (see [`Observation::with_late_init`]). Applied only when the
    /// management policies allow `LateInitialize`.
    pub(crate) late_init: Option<Value>,
    /// Top-level `.status` fields to set (see [`Observation::with_status`]).
    pub(crate) status: Map<String, Value>,
    /// Becomes the `Ready` condition.
    pub readiness: Readiness,
    /// The resource is changing state (starting, stopping, resizing): requeue soon instead of
    /// after the poll interval.
    pub in_transition: bool,
    /// Entries for the connection Secret.
    pub connection_details: ConnectionDetails,
    /// Something the user should know that is not an error, shown in the `Synced` message
    /// (e.g. a change waiting for a restart the spec does not allow).
    pub note: Option<String>,
    /// Kind-specific conditions besides `Ready` and `Synced` (e.g. `Available`, `Progressing`,
    /// `Degraded` of in-cluster kinds), merged the same way and after them: a `Ready` here
    /// refines the one derived from `readiness` (e.g. a specific reason).
    pub conditions: Vec<Desired>,
    /// Whose the resource is, by its ownership tag (see [`Observation::with_owner_tag`]).
    /// Cloud kinds must report it: the framework then refuses a resource another live object
    /// owns and takes over an untagged or orphaned one through
    /// [`ExternalClient::claim`](crate::ExternalClient::claim).
    pub owner: ExternalOwner,
}

impl Observation {
    /// The external resource does not exist.
    pub fn missing() -> Self {
        Self {
            exists: false,
            external_name: None,
            up_to_date: UpToDate::Yes,
            late_init: None,
            status: Map::new(),
            readiness: Readiness::Creating,
            in_transition: false,
            connection_details: ConnectionDetails::new(),
            note: None,
            conditions: Vec::new(),
            owner: ExternalOwner::NotReported,
        }
    }

    /// The external resource exists under `external_name`; up to date and available unless
    /// the `with_*` methods say otherwise.
    pub fn found(external_name: impl Into<String>) -> Self {
        Self {
            exists: true,
            external_name: Some(external_name.into()),
            readiness: Readiness::Available,
            ..Self::missing()
        }
    }

    /// It differs from the spec; `diff` says how.
    pub fn with_diff(mut self, diff: impl Into<String>) -> Self {
        self.up_to_date = UpToDate::No(diff.into());
        self
    }

    /// The observed status, as the kind's status type (or a type of the provider's that
    /// serializes like its top-level fields). Every top-level field `status` serializes is
    /// written, a `null` one removed; fields it leaves out stay as they are. `conditions` and
    /// `observedGeneration` belong to the framework and are ignored. A second call adds its
    /// fields to the first's.
    ///
    /// Fails when `status` cannot be serialized or is not a struct or map.
    pub fn with_status(mut self, status: impl Serialize) -> Result<Self, ReconcileError> {
        let fields = to_object(status, "the observed status")?;
        self.status.extend(fields);
        Ok(self)
    }

    /// Late-initialization: observed values of `spec.forProvider` fields, as the kind's
    /// parameters type with only those fields set (or any type that serializes like it). The
    /// framework writes the ones the user left unset, never overwriting a value the user
    /// wrote, and only when the management policies allow `LateInitialize`. Nothing outside
    /// `forProvider` (policies, references) can be late-initialized.
    ///
    /// Fails when `observed` cannot be serialized or is not a struct or map.
    pub fn with_late_init(mut self, observed: impl Serialize) -> Result<Self, ReconcileError> {
        let for_provider = to_object(observed, "the late-initialization values")?;
        let mut spec = Map::new();
        spec.insert("forProvider".to_owned(), Value::Object(for_provider));
        self.late_init = Some(Value::Object(spec));
        Ok(self)
    }

    pub fn with_readiness(mut self, readiness: Readiness) -> Self {
        self.readiness = readiness;
        self
    }

    /// Marks the resource as changing state (fast requeue).
    pub fn in_transition(mut self) -> Self {
        self.in_transition = true;
        self
    }

    pub fn with_connection_details(mut self, details: ConnectionDetails) -> Self {
        self.connection_details = details;
        self
    }

    /// Adds a kind-specific condition (see [`Observation::conditions`]).
    pub fn with_condition(mut self, condition: Desired) -> Self {
        self.conditions.push(condition);
        self
    }

    /// The value of the resource's [`UID_TAG`](crate::UID_TAG) tag (`None`: it has none). A cloud
    /// kind reports it from every observe of an existing resource, so that no object adopts,
    /// changes or deletes a resource another live object owns.
    pub fn with_owner_tag(mut self, value: Option<&str>) -> Self {
        self.owner = ExternalOwner::from_tag(value);
        self
    }

    /// A note for the `Synced` condition's message (see [`Observation::note`]).
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// `value` as a JSON object; `what` names it in the error.
fn to_object(value: impl Serialize, what: &str) -> Result<Map<String, Value>, ReconcileError> {
    let error = |message: String| ReconcileError::retryable(reasons::SERIALIZATION_ERROR, message);
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(error(format!(
            "cannot encode {what}: expected an object, got {}",
            json_type(&other)
        ))),
        Err(e) => Err(error(format!("cannot encode {what}: {e}")).with_source(e)),
    }
}

/// What kind of JSON value `v` is, for messages (never the value: it may be a secret).
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::ser::Error as _;
    use serde_json::json;

    #[test]
    fn observation_builders() {
        let o = Observation::found("i-1")
            .with_diff("instanceName: a → b")
            .with_status(json!({"atProvider": {"status": "Running"}}))
            .expect("an object")
            .in_transition();
        assert!(o.exists);
        assert_eq!(o.external_name.as_deref(), Some("i-1"));
        assert_eq!(o.up_to_date, UpToDate::No("instanceName: a → b".into()));
        assert_eq!(o.status["atProvider"], json!({"status": "Running"}));
        assert!(o.in_transition);
        assert!(!Observation::missing().exists);
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Status {
        available_replicas: i32,
        #[serde(skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        leader: Option<String>,
    }

    #[test]
    fn typed_status_sets_the_fields_it_serializes() {
        let o = Observation::found("a")
            .with_status(Status {
                available_replicas: 2,
                url: None,
                leader: None,
            })
            .expect("serializes");
        // A skipped field is left alone; a null one is removed by the status write.
        assert_eq!(
            Value::Object(o.status),
            json!({"availableReplicas": 2, "leader": null})
        );
    }

    #[test]
    fn late_init_goes_under_for_provider() {
        let o = Observation::found("a")
            .with_late_init(json!({"zoneId": "z"}))
            .expect("serializes");
        assert_eq!(o.late_init, Some(json!({"forProvider": {"zoneId": "z"}})));
    }

    struct Unserializable;

    impl Serialize for Unserializable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(S::Error::custom("no JSON for this"))
        }
    }

    #[test]
    fn values_that_do_not_serialize_to_an_object_are_errors() {
        let err = Observation::found("a")
            .with_status(Unserializable)
            .expect_err("fails");
        assert_eq!(err.reason(), "SerializationError");
        assert!(err.message().contains("no JSON for this"), "{err}");
        let err = Observation::found("a")
            .with_late_init(3)
            .expect_err("not an object");
        assert!(err.message().contains("expected an object"), "{err}");
    }
}
