//! Scripted answers for the next calls of an action: an ECS error code instead of processing
//! the call ([`ErrorInjection::new`]), or a transport fault ([`ScriptedFault`]: the answer cut,
//! a truncated JSON body, a page that is not JSON), for any caller or for one account's calls
//! only ([`ErrorInjection::for_account`]), so that tests running side by side, each in an
//! account of its own, script faults without taking each other's.

use serde::{Deserialize, Serialize};

use crate::error::ErrorResponse;
use crate::faults_error::FaultsError;

/// A transport fault a scripted call is answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ScriptedFault {
    /// The call is processed, then the connection is cut before the first byte of the answer:
    /// the client cannot know whether the call took effect.
    DroppedResponse,
    /// The call is processed and answered `200` with its JSON cut in the middle.
    TruncatedBody,
    /// The call is not processed and is answered `200` with an HTML page, as a proxy or
    /// gateway in the way answers.
    NonJsonBody,
}

impl ScriptedFault {
    /// Every fault, for listings and tests.
    pub const ALL: [Self; 3] = [
        Self::DroppedResponse,
        Self::TruncatedBody,
        Self::NonJsonBody,
    ];

    /// Whether the call takes effect before the fault.
    pub fn processes(self) -> bool {
        !matches!(self, Self::NonJsonBody)
    }

    /// The `200` body of a malformed answer (`None` for a dropped one): `answer` cut in half, or
    /// a gateway's HTML page.
    pub fn malformed_body(self, answer: &str) -> Option<String> {
        match self {
            Self::DroppedResponse => None,
            Self::TruncatedBody => {
                let mut cut = answer.len() / 2;
                while !answer.is_char_boundary(cut) {
                    cut -= 1;
                }
                Some(answer[..cut].to_owned())
            }
            Self::NonJsonBody => Some(
                "<html><head><title>502 Bad Gateway</title></head><body>Bad Gateway</body></html>"
                    .to_owned(),
            ),
        }
    }
}

/// A scripted answer: the next `times` calls of `action` (any action when `None`) by
/// `accountId` (any account when `None`) are answered with ECS's error `code` (one of
/// [`crate::ErrorResponse::INJECTABLE_CODES`], after authentication, instead of being
/// processed) or with `fault`; exactly one of the two. The body of `POST /_mock/errors`, e.g.
/// `{"code":"OperationConflict","action":"StopInstance","times":2}` or
/// `{"fault":"droppedResponse","action":"RunInstances","accountId":"1234567890123456"}`;
/// `times` defaults to 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorInjection {
    /// The ECS error code to answer with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The transport fault to answer with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<ScriptedFault>,
    /// The action it applies to; `None` is every action.
    #[serde(default)]
    pub action: Option<String>,
    /// The account whose calls it applies to; `None` is every account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// How many calls get it.
    #[serde(default = "one")]
    pub times: u32,
}

fn one() -> u32 {
    1
}

/// What a pending injection makes of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scripted {
    /// Answered with this error; not processed.
    Error(ErrorResponse),
    /// Answered with this fault.
    Fault(ScriptedFault),
}

impl ErrorInjection {
    /// `code` for the next `times` calls of `action`.
    pub fn new(code: impl Into<String>, action: Option<&str>, times: u32) -> Self {
        Self {
            code: Some(code.into()),
            fault: None,
            action: action.map(str::to_owned),
            account_id: None,
            times,
        }
    }

    /// `fault` for the next `times` calls of `action`.
    pub fn fault(fault: ScriptedFault, action: Option<&str>, times: u32) -> Self {
        Self {
            code: None,
            fault: Some(fault),
            action: action.map(str::to_owned),
            account_id: None,
            times,
        }
    }

    /// The same, for the calls of `account_id` only.
    pub fn for_account(mut self, account_id: impl Into<String>) -> Self {
        self.account_id = Some(account_id.into());
        self
    }

    /// Checks that exactly one of code and fault is given, and that the code is one the mock
    /// can answer with.
    pub fn validate(&self) -> Result<(), FaultsError> {
        match (&self.code, &self.fault) {
            (Some(code), None) if ErrorResponse::injectable(code).is_none() => {
                Err(FaultsError::UnknownCode { code: code.clone() })
            }
            (Some(_), None) | (None, Some(_)) => Ok(()),
            _ => Err(FaultsError::CodeOrFault),
        }
    }

    fn applies_to(&self, action: &str, account_id: &str) -> bool {
        self.action.as_deref().is_none_or(|a| a == action)
            && self.account_id.as_deref().is_none_or(|a| a == account_id)
    }

    fn scripted(&self) -> Option<Scripted> {
        match (&self.code, self.fault) {
            (_, Some(fault)) => Some(Scripted::Fault(fault)),
            (Some(code), None) => ErrorResponse::injectable(code).map(Scripted::Error),
            (None, None) => None,
        }
    }
}

/// The scripted answer for this call of `action` by `account_id`, if one is pending (oldest
/// first); counts the call against it.
pub fn take(pending: &mut Vec<ErrorInjection>, action: &str, account_id: &str) -> Option<Scripted> {
    let index = pending
        .iter()
        .position(|i| i.applies_to(action, account_id))?;
    let injection = &mut pending[index];
    let scripted = injection.scripted();
    injection.times = injection.times.saturating_sub(1);
    if injection.times == 0 {
        pending.remove(index);
    }
    scripted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_of_code_and_fault() {
        assert!(
            ErrorInjection::new("Throttling.User", None, 1)
                .validate()
                .is_ok()
        );
        assert!(
            ErrorInjection::fault(ScriptedFault::TruncatedBody, None, 1)
                .validate()
                .is_ok()
        );
        let mut both = ErrorInjection::new("Throttling.User", None, 1);
        both.fault = Some(ScriptedFault::DroppedResponse);
        assert_eq!(both.validate(), Err(FaultsError::CodeOrFault));
        let mut neither = both.clone();
        neither.code = None;
        neither.fault = None;
        assert_eq!(neither.validate(), Err(FaultsError::CodeOrFault));
        assert!(matches!(
            ErrorInjection::new("NoSuchCode", None, 1).validate(),
            Err(FaultsError::UnknownCode { .. })
        ));
    }

    #[test]
    fn the_json_body_names_the_fault_and_the_account() {
        let parsed: ErrorInjection = serde_json::from_str(
            r#"{"fault":"droppedResponse","action":"RunInstances","accountId":"42","times":2}"#,
        )
        .unwrap();
        assert_eq!(
            parsed,
            ErrorInjection::fault(ScriptedFault::DroppedResponse, Some("RunInstances"), 2)
                .for_account("42")
        );
        let old: ErrorInjection =
            serde_json::from_str(r#"{"code":"OperationConflict","action":"StopInstance"}"#)
                .unwrap();
        assert_eq!(
            old,
            ErrorInjection::new("OperationConflict", Some("StopInstance"), 1)
        );
    }

    #[test]
    fn an_account_injection_skips_other_accounts_and_is_used_up() {
        let mut pending =
            vec![ErrorInjection::new("Forbidden.RAM", Some("CreateVpc"), 2).for_account("a")];
        assert_eq!(take(&mut pending, "CreateVpc", "b"), None);
        assert_eq!(take(&mut pending, "DeleteVpc", "a"), None);
        for _ in 0..2 {
            assert!(matches!(
                take(&mut pending, "CreateVpc", "a"),
                Some(Scripted::Error(e)) if e.code == "Forbidden.RAM"
            ));
        }
        assert_eq!(take(&mut pending, "CreateVpc", "a"), None);
        assert!(pending.is_empty());
    }

    #[test]
    fn malformed_bodies_do_not_parse() {
        let answer = r#"{"RequestId":"R","VpcId":"vpc-1234567890"}"#;
        for fault in [ScriptedFault::TruncatedBody, ScriptedFault::NonJsonBody] {
            let body = fault.malformed_body(answer).unwrap();
            assert!(
                serde_json::from_str::<serde_json::Value>(&body).is_err(),
                "{body}"
            );
        }
        assert_eq!(ScriptedFault::DroppedResponse.malformed_body(answer), None);
        assert!(!ScriptedFault::NonJsonBody.processes());
        assert!(ScriptedFault::TruncatedBody.processes());
    }
}
