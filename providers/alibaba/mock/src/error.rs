//! Errors: [`ErrorResponse`], the ECS-style error a request is answered with, and [`MockError`], what the
//! library API of the mock itself can fail with.

use std::borrow::Cow;

use serde_json::json;

/// An error answered to a client: HTTP status plus the ECS `Code` and `Message`.
///
/// Messages never contain secrets: they name parameters, never echo credential values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code} (HTTP {status}): {message}")]
pub struct ErrorResponse {
    /// HTTP status code of the response.
    pub status: u16,
    /// The ECS error code, e.g. `IncorrectInstanceStatus`.
    pub code: Cow<'static, str>,
    /// The human-readable message.
    pub message: String,
}

impl ErrorResponse {
    /// An error with an explicit status, code and message.
    pub fn new(
        status: u16,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
        }
    }

    /// `400` with the given code.
    pub fn bad_request(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(400, code, message)
    }

    /// `403` with the given code.
    pub fn forbidden(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(403, code, message)
    }

    /// `404` with the given code.
    pub fn not_found(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(404, code, message)
    }

    /// `MissingParameter` naming the parameter (or header) that is absent or empty.
    pub fn missing(name: &str) -> Self {
        Self::bad_request(
            "MissingParameter",
            format!(
                "The input parameter \"{name}\" that is mandatory for processing this request is not supplied."
            ),
        )
    }

    /// `InvalidParameter` naming a parameter whose value is not accepted.
    pub fn invalid(name: &str) -> Self {
        Self::bad_request(
            "InvalidParameter",
            format!("The specified parameter \"{name}\" is not valid."),
        )
    }

    /// `IncorrectInstanceStatus` (403).
    pub fn incorrect_status() -> Self {
        Self::forbidden(
            "IncorrectInstanceStatus",
            "The current status of the resource does not support this operation.",
        )
    }

    /// `IncorrectInstanceStatus.Initializing` (403): ECS answers it to writes on an instance that
    /// is still Pending, right after RunInstances.
    pub fn initializing() -> Self {
        Self::forbidden(
            "IncorrectInstanceStatus.Initializing",
            "The specified instance is in initializing status.",
        )
    }

    /// `OperationConflict` (409): another operation on the resource is in flight.
    pub fn operation_conflict() -> Self {
        Self::new(
            409,
            "OperationConflict",
            "Request was denied due to conflict with a previous request.",
        )
    }

    /// `OperationDenied.NoStock` (403): the zone has no capacity for the instance type (at
    /// RunInstances, or when starting an instance stopped without charging).
    pub fn no_stock() -> Self {
        Self::forbidden(
            "OperationDenied.NoStock",
            "The requested resource is sold out in the specified zone; try other types of resources or other regions and zones.",
        )
    }

    /// `ChargeTypeViolation` (403): e.g. releasing a subscription instance before it expired.
    pub fn charge_type_violation() -> Self {
        Self::forbidden(
            "ChargeTypeViolation",
            "The operation is not permitted due to charge type of the instance.",
        )
    }

    /// The error ECS answers with `code`, with its real HTTP status and message shape, for the
    /// codes tests may inject (see [`crate::ErrorInjection`]); `None` for any other code.
    pub fn injectable(code: &str) -> Option<Self> {
        Some(match code {
            "IncorrectInstanceStatus" => Self::incorrect_status(),
            "IncorrectInstanceStatus.Initializing" => Self::initializing(),
            "OperationConflict" => Self::operation_conflict(),
            "Throttling" => Self::bad_request(
                "Throttling",
                "Request was denied due to request throttling, please try again after 5 minutes.",
            ),
            "Throttling.Api" => Self::bad_request(
                "Throttling.Api",
                "Request was denied due to api flow control.",
            ),
            "Throttling.User" => Self::throttled(),
            "Forbidden.RAM" => Self::forbidden(
                "Forbidden.RAM",
                "User not authorized to operate on the specified resource, or this API doesn't support RAM.",
            ),
            "Forbidden.InstanceNotFound" => Self::forbidden(
                "Forbidden.InstanceNotFound",
                "The specified instance is not found.",
            ),
            "InvalidInstanceId.NotFound" => Self::not_found(
                "InvalidInstanceId.NotFound",
                "The specified InstanceId does not exist.",
            ),
            "InvalidVpcId.NotFound" => {
                Self::not_found("InvalidVpcId.NotFound", "Specified VPC does not exist.")
            }
            "InvalidVSwitchId.NotFound" => Self::not_found(
                "InvalidVSwitchId.NotFound",
                "Specified virtual switch does not exist.",
            ),
            "ChargeTypeViolation" => Self::charge_type_violation(),
            "OperationDenied.NoStock" => Self::no_stock(),
            "InternalError" => Self::new(
                500,
                "InternalError",
                "The request processing has failed due to some unknown error.",
            ),
            "ServiceUnavailable" => Self::service_unavailable(),
            "IncorrectDiskStatus.Initializing" => Self::forbidden(
                "IncorrectDiskStatus.Initializing",
                "The current disk status does not support this operation.",
            ),
            "InvalidOperation.Conflict" => Self::forbidden(
                "InvalidOperation.Conflict",
                "The operation conflicts with another operation on the resource.",
            ),
            "DisksDetachingOnEcsExceeded" => Self::forbidden(
                "DisksDetachingOnEcsExceeded",
                "The number of disks detaching from the instance at the same time exceeds the limit.",
            ),
            "TaskConflict" => Self::bad_request(
                "TaskConflict",
                "The operation conflicts with another task in progress: try again later.",
            ),
            "SystemBusy" => Self::bad_request("SystemBusy", "System is busy, please try later."),
            "IncorrectStatus" => Self::bad_request(
                "IncorrectStatus",
                "The resource is in a status that does not support this operation.",
            ),
            "OperationFailed.LastTokenProcessing" => Self::bad_request(
                "OperationFailed.LastTokenProcessing",
                "The last token request is processing.",
            ),
            "Rejected.Throttling" => Self::bad_request(
                "Rejected.Throttling",
                "The request was rejected by flow control.",
            ),
            "OperationDenied.OtherSubnetProcessing" => Self::bad_request(
                "OperationDenied.OtherSubnetProcessing",
                "Another vSwitch of the VPC is being changed: try again later.",
            ),
            _ => return None,
        })
    }

    /// Every code [`Self::injectable`] knows.
    pub const INJECTABLE_CODES: &'static [&'static str] = &[
        "IncorrectInstanceStatus",
        "IncorrectInstanceStatus.Initializing",
        "OperationConflict",
        "Throttling",
        "Throttling.Api",
        "Throttling.User",
        "Forbidden.RAM",
        "Forbidden.InstanceNotFound",
        "InvalidInstanceId.NotFound",
        "InvalidVpcId.NotFound",
        "InvalidVSwitchId.NotFound",
        "ChargeTypeViolation",
        "OperationDenied.NoStock",
        "InternalError",
        "ServiceUnavailable",
        "IncorrectDiskStatus.Initializing",
        "InvalidOperation.Conflict",
        "DisksDetachingOnEcsExceeded",
        "TaskConflict",
        "SystemBusy",
        "IncorrectStatus",
        "OperationFailed.LastTokenProcessing",
        "Rejected.Throttling",
        "OperationDenied.OtherSubnetProcessing",
    ];

    /// `InvalidInstanceId.NotFound` (404).
    pub fn instance_not_found(id: &str) -> Self {
        Self::not_found(
            "InvalidInstanceId.NotFound",
            format!(
                "The specified InstanceId \"{}\" does not exist.",
                truncate(id, 64)
            ),
        )
    }

    /// `InvalidRegionId.NotFound` (404).
    pub fn region_not_found() -> Self {
        Self::not_found(
            "InvalidRegionId.NotFound",
            "The specified RegionId does not exist.",
        )
    }

    /// `Throttling.User` (400).
    pub fn throttled() -> Self {
        Self::bad_request(
            "Throttling.User",
            "Request was denied due to user flow control.",
        )
    }

    /// `ServiceUnavailable` (503).
    pub fn service_unavailable() -> Self {
        Self::new(
            503,
            "ServiceUnavailable",
            "The request has failed due to a temporary failure of the server.",
        )
    }

    /// The JSON error body the APIs answer with; `Recommend` links the troubleshooting page of
    /// `product` (`Ecs`, `Vpc` or `Sts`).
    pub fn body(&self, request_id: &str, host_id: &str, product: &str) -> serde_json::Value {
        json!({
            "RequestId": request_id,
            "HostId": host_id,
            "Code": self.code,
            "Message": self.message,
            "Recommend": format!(
                "https://api.aliyun.com/troubleshoot?q={}&product={product}&requestId={request_id}",
                self.code
            ),
        })
    }
}

/// Cuts user input echoed in messages so a huge parameter cannot blow up a response.
pub(crate) fn truncate(input: &str, max_chars: usize) -> &str {
    match input.char_indices().nth(max_chars) {
        Some((end, _)) => &input[..end],
        None => input,
    }
}

/// Failures of the mock's library API.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address that was asked for.
        addr: std::net::SocketAddr,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The bound socket's local address could not be read.
    #[error("cannot read the mock's bound address: {0}")]
    LocalAddr(#[source] std::io::Error),
    /// A request made through the library API was refused like the HTTP API would refuse it.
    #[error(transparent)]
    Api(#[from] ErrorResponse),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_the_five_ecs_fields() {
        let body = ErrorResponse::missing("RegionId").body("REQ", "ecs.aliyuncs.com", "Vpc");
        assert_eq!(body["Code"], "MissingParameter");
        assert_eq!(body["RequestId"], "REQ");
        assert_eq!(body["HostId"], "ecs.aliyuncs.com");
        assert!(body["Message"].as_str().unwrap().contains("\"RegionId\""));
        assert!(
            body["Recommend"]
                .as_str()
                .unwrap()
                .contains("MissingParameter")
        );
        assert!(
            body["Recommend"]
                .as_str()
                .unwrap()
                .contains("&product=Vpc&")
        );
    }

    #[test]
    fn every_injectable_code_has_its_error() {
        for code in ErrorResponse::INJECTABLE_CODES {
            let e = ErrorResponse::injectable(code).unwrap();
            assert_eq!(e.code, *code);
            assert!(e.status >= 400, "{code}");
        }
        assert_eq!(
            ErrorResponse::injectable("OperationConflict")
                .unwrap()
                .status,
            409
        );
        assert_eq!(
            ErrorResponse::injectable("Forbidden.InstanceNotFound")
                .unwrap()
                .status,
            403
        );
        assert!(ErrorResponse::injectable("NoSuchCode").is_none());
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("中文字", 2), "中文");
        assert_eq!(truncate("ab", 5), "ab");
    }
}
