//! The crate's error type: ECS/STS API errors with their code, message, request ID and HTTP
//! status, transport failures, unexpected responses and credential failures, plus the predicates
//! a controller decides on (retry? gone? wrong state? tell the user?).
//!
//! Messages never contain secrets: API messages are redacted before they are stored (see
//! [`crate::secret::redact`]) and transport errors are stripped of their URL, which for a V1 GET
//! request would carry the security token.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::endpoint::EndpointError;

/// An error response from an Alibaba Cloud API (`{"Code", "Message", "RequestId", ...}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The action that failed, e.g. `RunInstances`.
    pub action: String,
    /// The error code, e.g. `InvalidInstanceId.NotFound`.
    pub code: String,
    /// The server's message, with any secret of the request redacted.
    pub message: String,
    /// The request ID to quote to Alibaba Cloud support.
    pub request_id: Option<String>,
    /// The HTTP status of the response.
    pub http_status: u16,
    /// The server's diagnosis link or hint, when it sent one.
    pub recommend: Option<String>,
    /// The delay the server asked for in `x-acs-retry-after` (milliseconds on the wire).
    pub retry_after: Option<Duration>,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed: {} (HTTP {}): {}",
            self.action, self.code, self.http_status, self.message
        )?;
        if let Some(id) = &self.request_id {
            write!(f, " [request id {id}]")?;
        }
        Ok(())
    }
}

/// Why credentials could not be obtained.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// A required environment variable is not set.
    #[error("environment variable {variable} is not set (or empty); {hint}")]
    MissingEnv {
        /// The variable's name.
        variable: &'static str,
        /// What the variable is for.
        hint: &'static str,
    },
    /// The STS call that issues temporary credentials failed.
    #[error("cannot obtain temporary credentials from STS: {0}")]
    Sts(#[source] Box<Error>),
    /// The ECS metadata service did not hand out role credentials.
    #[error("cannot obtain ECS instance RAM role credentials from the metadata service: {detail}")]
    Metadata {
        /// What went wrong, without any credential value.
        detail: String,
    },
    /// The OIDC token file could not be read.
    #[error("cannot read the OIDC token file {}: {source}; check ALIBABA_CLOUD_OIDC_TOKEN_FILE and the projected service account token volume", path.display())]
    OidcTokenFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The CLI configuration file (`~/.aliyun/config.json`) has no usable profile.
    #[error("cannot use the profile in {}: {detail}", path.display())]
    Profile {
        /// The file.
        path: PathBuf,
        /// What went wrong, without any credential value.
        detail: String,
    },
    /// The credentials are unusable as given.
    #[error("invalid credentials: {reason}")]
    Invalid {
        /// What is wrong.
        reason: String,
    },
}

/// Every error of the client.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API answered with an error code.
    #[error("{0}")]
    Api(Box<ApiError>),
    /// No connection could be made to the endpoint.
    #[error(
        "cannot connect to {endpoint} for {action}: {detail}; check the endpoint URL, DNS, proxy and firewall settings"
    )]
    Connect {
        /// The action being called.
        action: String,
        /// The endpoint (scheme, host and port; never a query).
        endpoint: String,
        /// The underlying error, without the request URL.
        detail: String,
    },
    /// The request did not complete in time.
    #[error(
        "{action} at {endpoint} timed out after {timeout:?}; the endpoint is slow or unreachable: check the network or raise the request timeout"
    )]
    Timeout {
        /// The action being called.
        action: String,
        /// The endpoint.
        endpoint: String,
        /// The configured request timeout.
        timeout: Duration,
    },
    /// The connection failed mid-request (reset, closed early, TLS failure, ...).
    #[error("{action} at {endpoint} failed in transport: {detail}")]
    Transport {
        /// The action being called.
        action: String,
        /// The endpoint.
        endpoint: String,
        /// The underlying error, without the request URL.
        detail: String,
    },
    /// The response was not the JSON the API documents.
    #[error("unexpected response to {action} (HTTP {http_status}): {detail}{}", request_id.as_ref().map(|id| format!(" [request id {id}]")).unwrap_or_default())]
    InvalidResponse {
        /// The action being called.
        action: String,
        /// The HTTP status.
        http_status: u16,
        /// The request ID, when the response carried one.
        request_id: Option<String>,
        /// What was wrong with the body.
        detail: String,
    },
    /// Credentials could not be obtained.
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    /// The endpoint or region is unusable.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// The request was rejected before sending.
    #[error("invalid {action} request: {reason}")]
    InvalidRequest {
        /// The action.
        action: String,
        /// What is wrong.
        reason: String,
    },
}

impl From<ApiError> for Error {
    fn from(error: ApiError) -> Self {
        Self::Api(Box::new(error))
    }
}

/// ECS's 403 for an instance that no longer exists.
const INSTANCE_NOT_FOUND_403: &str = "Forbidden.InstanceNotFound";

/// Codes that are retried even though the HTTP status is 4xx.
const RETRYABLE_CODES: &[&str] = &["SignatureNonceUsed", "LastTokenProcessing"];

impl Error {
    /// The API error, if this is one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Api(api) => Some(api),
            _ => None,
        }
    }

    /// The API error code, if any.
    pub fn code(&self) -> Option<&str> {
        self.api().map(|api| api.code.as_str())
    }

    /// The request ID, if the server sent one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::Api(api) => api.request_id.as_deref(),
            Self::InvalidResponse { request_id, .. } => request_id.as_deref(),
            _ => None,
        }
    }

    /// The HTTP status, if a response arrived.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Self::Api(api) => Some(api.http_status),
            Self::InvalidResponse { http_status, .. } => Some(*http_status),
            _ => None,
        }
    }

    /// The delay the server asked for before a retry.
    pub fn retry_after(&self) -> Option<Duration> {
        self.api().and_then(|api| api.retry_after)
    }

    fn code_is(&self, predicate: impl Fn(&str) -> bool) -> bool {
        self.code().is_some_and(predicate)
    }

    /// Whether the client retries this error by itself: transport failures, 5xx, throttling,
    /// `SignatureNonceUsed` and `LastTokenProcessing`.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Connect { .. } | Self::Timeout { .. } | Self::Transport { .. } => true,
            Self::Api(api) => {
                api.http_status >= 500
                    || is_throttling_code(&api.code)
                    || RETRYABLE_CODES.contains(&api.code.as_str())
            }
            Self::InvalidResponse { http_status, .. } => *http_status >= 500,
            Self::Credentials(_) | Self::Endpoint(_) | Self::InvalidRequest { .. } => false,
        }
    }

    /// A `Throttling*` error: the account's rate limit for this API in this region is reached.
    pub fn is_throttling(&self) -> bool {
        self.code_is(is_throttling_code)
    }

    /// A resource does not exist (any `*.NotFound` except an unknown AccessKeyId, and
    /// `Forbidden.InstanceNotFound`).
    pub fn is_not_found(&self) -> bool {
        self.is_instance_not_found()
            || self.code_is(|c| c.ends_with(".NotFound") && !c.starts_with("InvalidAccessKeyId"))
    }

    /// A revoke named a security group rule ID the group does not hold in that direction:
    /// `InvalidParam.SecurityGroupRuleId` (RevokeSecurityGroup) or
    /// `InvalidSecurityGroupRule.RuleNotExist` (RevokeSecurityGroupEgress, and the Modify
    /// actions), which ECS answers since July 2024 where it used to succeed.
    pub fn is_rule_not_found(&self) -> bool {
        self.code_is(|c| {
            c == "InvalidParam.SecurityGroupRuleId" || c == "InvalidSecurityGroupRule.RuleNotExist"
        })
    }

    /// The instance does not exist: `InvalidInstanceId.NotFound` (deleted, or never created), or
    /// `Forbidden.InstanceNotFound` (403), which ECS answers for an instance already released;
    /// Terraform's alicloud provider treats both as gone.
    pub fn is_instance_not_found(&self) -> bool {
        self.code_is(|c| c == "InvalidInstanceId.NotFound" || c == INSTANCE_NOT_FOUND_403)
    }

    /// The operation is not allowed for the instance's billing method (`ChargeTypeViolation`),
    /// e.g. releasing an unexpired subscription instance.
    pub fn is_charge_type_violation(&self) -> bool {
        self.code_is(|c| c == "ChargeTypeViolation")
    }

    /// Other resources still depend on the one to delete (`DependencyViolation*`: a VPC with
    /// vSwitches, a vSwitch or security group instances use).
    pub fn is_dependency_violation(&self) -> bool {
        self.code_is(|c| c.starts_with("DependencyViolation"))
    }

    /// The RAM policy of the caller does not allow this action (`Forbidden.RAM`); the action is
    /// [`ApiError::action`], so the missing permission is `ecs:<action>`.
    pub fn is_ram_denied(&self) -> bool {
        self.code_is(|c| c == "Forbidden.RAM")
    }

    /// The resource is in a state that does not allow the operation (`IncorrectInstanceStatus*`)
    /// or another operation on it is in flight (`OperationConflict`); retry once it settles.
    pub fn is_wrong_state(&self) -> bool {
        self.code_is(|c| {
            c.starts_with("IncorrectInstanceStatus")
                || c.starts_with("IncorrectStatus")
                || c == "OperationConflict"
        })
    }

    /// The credentials are wrong, inactive or expired, or the signature does not match.
    pub fn is_bad_credentials(&self) -> bool {
        matches!(self, Self::Credentials(_))
            || self.code_is(|c| {
                c.starts_with("InvalidAccessKeyId")
                    || c.starts_with("InvalidSecurityToken")
                    || c == "SignatureDoesNotMatch"
                    || c == "IncompleteSignature"
            })
    }

    /// The STS security token expired or does not match: refresh the credentials.
    pub fn is_security_token_invalid(&self) -> bool {
        self.code_is(|c| c.starts_with("InvalidSecurityToken"))
    }

    /// The RAM policy does not allow the action (`Forbidden*`, except
    /// `Forbidden.InstanceNotFound`, which means the instance is gone).
    pub fn is_forbidden(&self) -> bool {
        self.code_is(|c| c.starts_with("Forbidden") && c != INSTANCE_NOT_FOUND_403)
    }

    /// A quota is exhausted or the zone has no stock: only the user can fix it.
    pub fn is_quota_or_stock(&self) -> bool {
        self.code_is(|c| c.starts_with("QuotaExceed") || c.contains("NoStock"))
    }

    /// The instance has deletion protection on.
    pub fn is_deletion_protection(&self) -> bool {
        self.code_is(|c| c == "InvalidOperation.DeletionProtection")
    }

    /// The ClientToken was used before with different parameters.
    pub fn is_idempotent_mismatch(&self) -> bool {
        self.code_is(|c| c == "IdempotentParameterMismatch")
    }

    /// A parameter is missing or invalid (`MissingParameter*`, `InvalidParameter*`, or a
    /// request rejected before sending).
    pub fn is_invalid_parameter(&self) -> bool {
        matches!(self, Self::InvalidRequest { .. })
            || self
                .code_is(|c| c.starts_with("MissingParameter") || c.starts_with("InvalidParameter"))
    }

    /// A short, stable label for metrics and condition reasons.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Api(_) if self.is_throttling() => "Throttled",
            Self::Api(_) if self.is_not_found() => "NotFound",
            Self::Api(_) if self.is_bad_credentials() => "BadCredentials",
            Self::Api(_) if self.is_wrong_state() => "WrongState",
            Self::Api(_) if self.is_quota_or_stock() => "QuotaOrStock",
            Self::Api(api) if api.http_status >= 500 => "ServerError",
            Self::Api(_) => "ApiError",
            Self::Connect { .. } => "ConnectError",
            Self::Timeout { .. } => "Timeout",
            Self::Transport { .. } => "TransportError",
            Self::InvalidResponse { .. } => "InvalidResponse",
            Self::Credentials(_) => "CredentialsError",
            Self::Endpoint(_) => "InvalidEndpoint",
            Self::InvalidRequest { .. } => "InvalidRequest",
        }
    }
}

fn is_throttling_code(code: &str) -> bool {
    code.starts_with("Throttling")
}

/// Renders an error and its sources on one line (`a: b: c`).
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: &str, status: u16) -> Error {
        ApiError {
            action: "DescribeInstances".into(),
            code: code.into(),
            message: "m".into(),
            request_id: Some("REQ-1".into()),
            http_status: status,
            recommend: None,
            retry_after: None,
        }
        .into()
    }

    #[test]
    fn retryable_codes_and_statuses() {
        for (code, status) in [
            ("Throttling", 400),
            ("Throttling.User", 400),
            ("Throttling.Api", 400),
            ("SignatureNonceUsed", 400),
            ("LastTokenProcessing", 403),
            ("InternalError", 500),
            ("ServiceUnavailable", 503),
        ] {
            assert!(api(code, status).is_retryable(), "{code}");
        }
        for (code, status) in [
            ("InvalidInstanceId.NotFound", 404),
            ("SignatureDoesNotMatch", 400),
            ("IncorrectInstanceStatus", 403),
            ("IdempotentParameterMismatch", 400),
            ("InvalidOperation.DeletionProtection", 403),
            ("Forbidden.RAM", 403),
            ("Forbidden.InstanceNotFound", 403),
            ("ChargeTypeViolation", 403),
        ] {
            assert!(!api(code, status).is_retryable(), "{code}");
        }
        let connect = Error::Connect {
            action: "A".into(),
            endpoint: "http://127.0.0.1:1".into(),
            detail: "refused".into(),
        };
        assert!(connect.is_retryable());
        assert!(connect.to_string().contains("check the endpoint URL"));
    }

    #[test]
    fn predicates() {
        assert!(api("InvalidInstanceId.NotFound", 404).is_not_found());
        assert!(api("InvalidInstanceId.NotFound", 404).is_instance_not_found());
        assert!(api("Forbidden.InstanceNotFound", 403).is_instance_not_found());
        assert!(api("Forbidden.InstanceNotFound", 403).is_not_found());
        assert!(!api("Forbidden.InstanceNotFound", 403).is_forbidden());
        assert!(api("Forbidden.RAM", 403).is_forbidden());
        assert!(api("Forbidden.RAM", 403).is_ram_denied());
        assert!(api("ChargeTypeViolation", 403).is_charge_type_violation());
        assert!(api("IncorrectInstanceStatus.Initializing", 403).is_wrong_state());
        assert!(!api("InvalidAccessKeyId.NotFound", 404).is_not_found());
        assert!(api("InvalidAccessKeyId.NotFound", 404).is_bad_credentials());
        assert!(api("SignatureDoesNotMatch", 400).is_bad_credentials());
        assert!(api("InvalidSecurityToken.Expired", 400).is_security_token_invalid());
        assert!(api("IncorrectInstanceStatus", 403).is_wrong_state());
        assert!(api("OperationConflict", 409).is_wrong_state());
        assert!(api("QuotaExceed.ElasticQuota", 403).is_quota_or_stock());
        assert!(api("OperationDenied.NoStock", 403).is_quota_or_stock());
        assert!(api("InvalidOperation.DeletionProtection", 403).is_deletion_protection());
        assert!(api("IdempotentParameterMismatch", 400).is_idempotent_mismatch());
        assert!(api("Throttling.User", 400).is_throttling());
        assert!(api("MissingParameter.RegionId", 400).is_invalid_parameter());
        assert_eq!(api("Throttling", 400).reason(), "Throttled");
        assert_eq!(api("InternalError", 500).reason(), "ServerError");
    }

    #[test]
    fn display_names_action_code_status_and_request_id() {
        assert_eq!(
            api("InvalidInstanceId.NotFound", 404).to_string(),
            "DescribeInstances failed: InvalidInstanceId.NotFound (HTTP 404): m [request id REQ-1]"
        );
    }
}
