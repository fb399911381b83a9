//! Cloud API failures → [`ReconcileError`], for every Alibaba kind: a stable reason (a
//! [`crate::reasons`] constant) for conditions, events and metrics, a message that says what to
//! do (with the cloud's code and request ID, which `Error`'s `Display` carries; secrets are
//! already redacted there), and the retry class. [`reconcile_error`] is the ECSInstance's
//! mapping; [`product_error`] is the same for the kinds on other APIs, except that a RAM denial
//! names the product's own permission (`vpc:CreateVSwitch`, `ecs:CreateSecurityGroup`).
//!
//! | failure | reason | retry |
//! |---|---|---|
//! | unknown / disabled AccessKey, bad signature, expired token | `InvalidCredentials` | when the config or Secret changes |
//! | RAM policy denies the action (the message names the missing `ecs:<Action>` permission) | `Forbidden` | until the spec changes |
//! | operation not allowed for the billing method (`ChargeTypeViolation`) | `ChargeTypeViolation` | until the spec changes |
//! | throttling | `Throttled` | backoff |
//! | unknown region, image, instance type, vSwitch, security group, bad parameter | `InvalidParameter` | until the spec changes |
//! | quota / no stock | `QuotaExceeded` / `NoStock` | until the spec changes |
//! | the zone does not sell the type or disk category, or is off sale ([`PLACEMENT_NOT_OFFERED_CODES`]) | `PlacementNotOffered` | until the spec changes |
//! | deletion protection | `DeletionProtection` | until the spec changes |
//! | instance busy (wrong state, still initializing, conflict, token in flight) | `InstanceBusy` | backoff |
//! | `Forbidden.InstanceNotFound` on `DeleteInstance` | none: delete treats it as gone before mapping | - |
//! | `Forbidden.InstanceNotFound` or `InvalidInstanceId.NotFound` on a read by IDs (`DescribeInstances`) | `ReadFailed` ([`read_error`]): an answer for the whole call, not about one instance | backoff |
//! | endpoint unreachable, timeout, 5xx | `EndpointUnreachable` / `ServerError` | backoff |

use alibaba_sdk::Error;
use ferroplane_runtime::{ReconcileError, RetryClass};

use crate::reasons::{
    API_ERROR, CHARGE_TYPE_VIOLATION, DELETION_PROTECTION, ENDPOINT_UNREACHABLE, FORBIDDEN,
    IDEMPOTENT_PARAMETER_MISMATCH, INSTANCE_BUSY, INVALID_CREDENTIALS, INVALID_ENDPOINT,
    INVALID_PARAMETER, NO_STOCK, PLACEMENT_NOT_OFFERED, QUOTA_EXCEEDED, READ_FAILED, SERVER_ERROR,
    THROTTLED,
};

/// RunInstances codes that refuse a (zone, instance type) placement rather than a value of the
/// spec, from ECS's error-code lists: the zone is off sale (`Zone.NotOnSale`), closed to new
/// instances (`OperationDenied.ZoneNotAllowed`), or does not sell the type or the disk category
/// (`InvalidInstanceType.NotSupported`, `InvalidResourceType.NotSupported`,
/// `OperationDenied.ZoneSystemCategoryNotMatch`). An ECSFleet moves to its next placement on
/// these as on `OperationDenied.NoStock`.
pub const PLACEMENT_NOT_OFFERED_CODES: [&str; 5] = [
    "Zone.NotOnSale",
    "OperationDenied.ZoneNotAllowed",
    "InvalidInstanceType.NotSupported",
    "InvalidResourceType.NotSupported",
    "OperationDenied.ZoneSystemCategoryNotMatch",
];

/// Maps an error of a kind on another product's API (VPC, VSwitch, SecurityGroup, Disk, KeyPair);
/// `product` is the RAM service prefix of that API (`vpc` or `ecs`).
pub fn product_error(err: &Error, config: &str, product: &str) -> ReconcileError {
    if err.is_forbidden() && !err.is_bad_credentials() {
        let action = err.api().map_or("", |api| api.action.as_str());
        return ReconcileError::new(
            FORBIDDEN,
            format!(
                "the RAM user or role of {config} is not allowed to call {action}: grant it the RAM permission {product}:{action} [{err}]"
            ),
            RetryClass::UntilSpecChanges,
        );
    }
    reconcile_error(err, config)
}

/// Maps the error of a `DescribeInstances` by instance IDs (shared by many objects through the
/// batcher, or of one object). ECS leaves an instance it does not know out of the list, so only
/// absence from a successful answer means "gone"; an error answer, whatever its code, is an
/// error for every instance the call asked about. A code that names a missing instance is
/// reported as such an error, retried with backoff, instead of as a bad spec.
pub fn read_error(err: &Error, config: &str) -> ReconcileError {
    if err.is_instance_not_found() {
        return ReconcileError::retryable(
            READ_FAILED,
            format!(
                "{err}. DescribeInstances failed as a whole, so its answer says nothing about this instance: it is not taken as gone (nothing is created in its place); ferroplane retries"
            ),
        );
    }
    reconcile_error(err, config)
}

/// Maps an ECS error; `config` names the ProviderConfig for credential problems.
pub fn reconcile_error(err: &Error, config: &str) -> ReconcileError {
    let code = err.code().unwrap_or_default();
    let (reason, advice, retry): (&'static str, String, RetryClass) = if err.is_throttling() {
        (
            THROTTLED,
            "ECS is throttling this account's calls in this region; ferroplane backs off and retries. If it persists, raise the poll interval or spread instances over accounts".into(),
            RetryClass::Backoff,
        )
    } else if code.starts_with("InvalidAccessKeyId.NotFound") {
        (
            INVALID_CREDENTIALS,
            format!(
                "the AccessKeyId of {config} does not exist: put a valid AccessKey in its credentials Secret"
            ),
            RetryClass::WaitForDependency,
        )
    } else if code.starts_with("InvalidAccessKeyId") {
        (
            INVALID_CREDENTIALS,
            format!(
                "the AccessKey of {config} is disabled: enable it in the RAM console or put an active AccessKey in its credentials Secret"
            ),
            RetryClass::WaitForDependency,
        )
    } else if code == "SignatureDoesNotMatch" || code == "IncompleteSignature" {
        (
            INVALID_CREDENTIALS,
            format!(
                "ECS rejected the request signature: the AccessKeySecret in the credentials Secret of {config} does not belong to its AccessKeyId"
            ),
            RetryClass::WaitForDependency,
        )
    } else if err.is_bad_credentials() {
        (
            INVALID_CREDENTIALS,
            format!(
                "the credentials of {config} are not usable: check its credentials source and Secret"
            ),
            RetryClass::WaitForDependency,
        )
    } else if err.is_forbidden() {
        let action = err.api().map_or("", |api| api.action.as_str());
        (
            FORBIDDEN,
            format!(
                "the RAM user or role of {config} is not allowed to call {action}: grant it the RAM permission ecs:{action} (for example through the system policy AliyunECSFullAccess)"
            ),
            RetryClass::UntilSpecChanges,
        )
    } else if err.is_charge_type_violation() {
        (
            CHARGE_TYPE_VIOLATION,
            "ECS does not allow this operation for the instance's billing method (spec.forProvider.instanceChargeType), e.g. releasing an unexpired subscription instance: change the spec or the instance's charge type".into(),
            RetryClass::UntilSpecChanges,
        )
    } else if err.is_deletion_protection() {
        (
            DELETION_PROTECTION,
            "the instance has deletion protection on: set spec.forProvider.deletionProtection: false (allowed while the object is being deleted), or deletionPolicy: Orphan to keep the instance".into(),
            RetryClass::UntilSpecChanges,
        )
    } else if PLACEMENT_NOT_OFFERED_CODES.contains(&code) {
        (
            PLACEMENT_NOT_OFFERED,
            "ECS does not offer this instance type (or its disk category) in this zone now: choose another instanceType or zoneId".into(),
            RetryClass::UntilSpecChanges,
        )
    } else if err.is_quota_or_stock() {
        let (reason, advice) = if code.contains("NoStock") {
            (
                NO_STOCK,
                "the zone has no stock of this instance type: choose another instanceType or zoneId",
            )
        } else {
            (
                QUOTA_EXCEEDED,
                "an account quota is exhausted: release instances or raise the quota in the Quota Center",
            )
        };
        (reason, advice.into(), RetryClass::UntilSpecChanges)
    } else if err.is_wrong_state() || code == "LastTokenProcessing" {
        (
            INSTANCE_BUSY,
            "the instance is busy with another operation; ferroplane retries once it settles"
                .into(),
            RetryClass::Backoff,
        )
    } else if err.is_not_found()
        || err.is_invalid_parameter()
        || code.starts_with("InvalidInstanceType")
        || code.starts_with("Invalid")
    {
        (
            INVALID_PARAMETER,
            "ECS rejected a value of spec.forProvider (region, zone, image, instance type, vSwitch, security group or another parameter): correct the spec".into(),
            RetryClass::UntilSpecChanges,
        )
    } else if code == "IdempotentParameterMismatch" {
        (
            IDEMPOTENT_PARAMETER_MISMATCH,
            "ECS remembers this create token with other parameters; ferroplane retries with the current spec".into(),
            RetryClass::Backoff,
        )
    } else {
        match err {
            Error::Connect { .. } | Error::Timeout { .. } | Error::Transport { .. } => (
                ENDPOINT_UNREACHABLE,
                format!(
                    "the ECS endpoint of {config} cannot be reached; check spec.endpoint, DNS, proxy and network policies. ferroplane retries"
                ),
                RetryClass::Backoff,
            ),
            Error::Credentials(_) => (
                INVALID_CREDENTIALS,
                format!(
                    "the credentials of {config} cannot be obtained: check its credentials source"
                ),
                RetryClass::WaitForDependency,
            ),
            Error::Endpoint(_) => (
                INVALID_ENDPOINT,
                format!(
                    "fix spec.endpoint or spec.region of {config}, or spec.forProvider.regionId"
                ),
                RetryClass::UntilSpecChanges,
            ),
            _ if err.is_retryable() => (
                SERVER_ERROR,
                "ECS failed on its side; ferroplane retries".into(),
                RetryClass::Backoff,
            ),
            _ => (
                API_ERROR,
                "see the ECS error; correct the spec if it names a parameter".into(),
                RetryClass::UntilSpecChanges,
            ),
        }
    };
    ReconcileError::new(reason, format!("{err}. {advice}"), retry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_sdk::ApiError;

    fn api(code: &str, status: u16) -> Error {
        ApiError {
            action: "RunInstances".into(),
            code: code.into(),
            message: "msg".into(),
            request_id: Some("REQ-7".into()),
            http_status: status,
            recommend: None,
            retry_after: None,
        }
        .into()
    }

    #[test]
    fn every_user_facing_failure_has_a_reason_and_retry_class() {
        let cases = [
            (
                "InvalidAccessKeyId.NotFound",
                404,
                "InvalidCredentials",
                RetryClass::WaitForDependency,
            ),
            (
                "InvalidAccessKeyId.Inactive",
                400,
                "InvalidCredentials",
                RetryClass::WaitForDependency,
            ),
            (
                "SignatureDoesNotMatch",
                400,
                "InvalidCredentials",
                RetryClass::WaitForDependency,
            ),
            ("Throttling.User", 400, "Throttled", RetryClass::Backoff),
            (
                "InvalidRegionId.NotFound",
                404,
                "InvalidParameter",
                RetryClass::UntilSpecChanges,
            ),
            (
                "InvalidImageId.NotFound",
                404,
                "InvalidParameter",
                RetryClass::UntilSpecChanges,
            ),
            (
                "InvalidInstanceType.ValueNotSupported",
                400,
                "InvalidParameter",
                RetryClass::UntilSpecChanges,
            ),
            (
                "QuotaExceed.ElasticQuota",
                403,
                "QuotaExceeded",
                RetryClass::UntilSpecChanges,
            ),
            (
                "OperationDenied.NoStock",
                403,
                "NoStock",
                RetryClass::UntilSpecChanges,
            ),
            (
                "Zone.NotOnSale",
                403,
                "PlacementNotOffered",
                RetryClass::UntilSpecChanges,
            ),
            (
                "InvalidResourceType.NotSupported",
                403,
                "PlacementNotOffered",
                RetryClass::UntilSpecChanges,
            ),
            (
                "InvalidOperation.DeletionProtection",
                403,
                "DeletionProtection",
                RetryClass::UntilSpecChanges,
            ),
            (
                "IncorrectInstanceStatus",
                403,
                "InstanceBusy",
                RetryClass::Backoff,
            ),
            (
                "Forbidden.RAM",
                403,
                "Forbidden",
                RetryClass::UntilSpecChanges,
            ),
            (
                "ServiceUnavailable",
                503,
                "ServerError",
                RetryClass::Backoff,
            ),
            (
                "IncorrectInstanceStatus.Initializing",
                403,
                "InstanceBusy",
                RetryClass::Backoff,
            ),
            (
                "OperationConflict",
                409,
                "InstanceBusy",
                RetryClass::Backoff,
            ),
            ("Throttling", 400, "Throttled", RetryClass::Backoff),
            ("Throttling.Api", 400, "Throttled", RetryClass::Backoff),
            (
                "ChargeTypeViolation",
                403,
                "ChargeTypeViolation",
                RetryClass::UntilSpecChanges,
            ),
        ];
        for (code, status, reason, retry) in cases {
            let e = reconcile_error(&api(code, status), "ProviderConfig ns/default");
            assert_eq!(e.reason(), reason, "{code}");
            assert_eq!(e.retry(), retry, "{code}");
            assert!(e.message().contains(code), "{code}: {}", e.message());
            assert!(e.message().contains("REQ-7"), "{code}: {}", e.message());
        }
    }

    #[test]
    fn forbidden_ram_names_the_missing_permission_and_no_secret() {
        let e = reconcile_error(&api("Forbidden.RAM", 403), "ProviderConfig ns/default");
        assert!(e.message().contains("ecs:RunInstances"), "{}", e.message());
        assert!(e.message().contains("ProviderConfig ns/default"));
    }

    #[test]
    fn a_failed_read_by_ids_is_an_error_for_every_code() {
        for (code, status, reason) in [
            ("Forbidden.InstanceNotFound", 403, READ_FAILED),
            ("InvalidInstanceId.NotFound", 404, READ_FAILED),
            ("ServiceUnavailable", 503, SERVER_ERROR),
            ("Throttling.User", 400, THROTTLED),
        ] {
            let e = read_error(&api(code, status), "ProviderConfig ns/default");
            assert_eq!(e.reason(), reason, "{code}");
            assert_eq!(e.retry(), RetryClass::Backoff, "{code}");
            assert!(e.message().contains(code), "{code}: {}", e.message());
        }
    }

    #[test]
    fn unreachable_endpoint() {
        let e = reconcile_error(
            &Error::Connect {
                action: "DescribeInstances".into(),
                endpoint: "http://127.0.0.1:1".into(),
                detail: "connection refused".into(),
            },
            "ProviderConfig ns/default",
        );
        assert_eq!(e.reason(), "EndpointUnreachable");
        assert!(e.message().contains("spec.endpoint"));
    }
}
