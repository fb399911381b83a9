//! The STS actions (version `2015-04-01`) the client's credential providers use:
//! `AssumeRole` (signed with the source credentials) and `AssumeRoleWithOIDC` (unsigned), and
//! `GetCallerIdentity` (signed; no RAM permission needed), which tells a client the account its
//! credentials act in.
//! Issued credentials are registered at once, so ECS calls made with them are accepted.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use rand::Rng as _;
use serde_json::{Value, json};

use crate::auth::{Caller, KeyStore, StsCredentials};
use crate::error::ErrorResponse;
use crate::received_params::ReceivedParams;

/// The STS API version.
pub const VERSION: &str = "2015-04-01";

/// How an STS action is answered: for a caller whose signature was checked, or for anyone (no
/// signature).
#[derive(Clone, Copy)]
pub enum StsHandler {
    Signed(fn(&mut KeyStore, &Caller, &ReceivedParams, Timestamp) -> Result<Value, ErrorResponse>),
    Anonymous(fn(&mut KeyStore, &ReceivedParams, Timestamp) -> Result<Value, ErrorResponse>),
}

/// One row of the STS action table.
#[derive(Clone, Copy)]
pub struct StsAction {
    pub name: &'static str,
    pub handler: StsHandler,
}

/// The STS actions the mock serves, with their handlers.
pub const ACTIONS: &[StsAction] = &[
    StsAction {
        name: "AssumeRole",
        handler: StsHandler::Signed(assume_role),
    },
    StsAction {
        name: "AssumeRoleWithOIDC",
        handler: StsHandler::Anonymous(assume_role_with_oidc),
    },
    StsAction {
        name: "GetCallerIdentity",
        handler: StsHandler::Signed(get_caller_identity),
    },
];

/// `GetCallerIdentity`: the account and principal behind the signing key. A permanent key is a
/// RAM user's (the mock names users by their key); temporary credentials are an assumed role's.
/// Every field of STS's answer is present: `UserId` empty for a role, `RoleId` for a user.
fn get_caller_identity(
    _keys: &mut KeyStore,
    caller: &Caller,
    _p: &ReceivedParams,
    _now: Timestamp,
) -> Result<Value, ErrorResponse> {
    let account = &*caller.account_id;
    // A stable numeric principal per key, like the service's 16-digit IDs.
    let principal = format!(
        "2{:015}",
        caller
            .access_key_id
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
            % 1_000_000_000_000_000
    );
    Ok(if caller.access_key_id.starts_with("STS.") {
        json!({
            "IdentityType": "AssumedRoleUser",
            "AccountId": account,
            "PrincipalId": format!("3{}:session", &principal[1..]),
            "RoleId": format!("3{}", &principal[1..]),
            "UserId": "",
            "Arn": format!("acs:ram::{account}:assumed-role/role/session"),
        })
    } else {
        json!({
            "IdentityType": "RAMUser",
            "AccountId": account,
            "PrincipalId": principal,
            "UserId": principal,
            "RoleId": "",
            "Arn": format!("acs:ram::{account}:user/{}", caller.access_key_id),
        })
    })
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const TOKEN_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// A random string over `alphabet`.
fn random_string(len: usize, alphabet: &[u8]) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from(alphabet[rng.random_range(0..alphabet.len())]))
        .collect()
}

/// Creates and registers temporary credentials for `account_id`.
pub fn issue(
    keys: &mut KeyStore,
    account_id: &str,
    ttl: Duration,
    now: Timestamp,
) -> StsCredentials {
    let ttl = SignedDuration::try_from(ttl).unwrap_or(SignedDuration::from_hours(1));
    let creds = StsCredentials {
        access_key_id: format!("STS.{}", random_string(24, ALNUM)),
        access_key_secret: random_string(44, ALNUM),
        // Real tokens are long Base64 strings; `+`, `/` and `=` exercise the clients' encoding.
        security_token: format!("CAIS{}==", random_string(300, TOKEN_ALPHABET)),
        expiration: now.checked_add(ttl).unwrap_or(now),
        account_id: account_id.to_owned(),
    };
    keys.add_temporary(&creds, now);
    creds
}

/// `acs:ram::<account>:role/<name>` → (account, name).
fn parse_role_arn(arn: &str) -> Result<(&str, &str), ErrorResponse> {
    let invalid = || {
        ErrorResponse::bad_request(
            "InvalidParameter.RoleArn",
            "The parameter RoleArn is wrongly formed: expected acs:ram::<account-id>:role/<role-name>.",
        )
    };
    let rest = arn.strip_prefix("acs:ram::").ok_or_else(invalid)?;
    let (account, role) = rest.split_once(":role/").ok_or_else(invalid)?;
    if account.is_empty() || !account.bytes().all(|b| b.is_ascii_digit()) || role.is_empty() {
        return Err(invalid());
    }
    Ok((account, role))
}

fn session_name(p: &ReceivedParams, required: bool) -> Result<String, ErrorResponse> {
    let name = match p.get("RoleSessionName") {
        Some(n) => n,
        None if required => return Err(ErrorResponse::missing("RoleSessionName")),
        None => return Ok(format!("session-{}", random_string(8, ALNUM))),
    };
    let ok = (2..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'@' | b'-' | b'_'));
    if !ok {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.RoleSessionName",
            "The parameter RoleSessionName is wrongly formed: 2 to 64 characters of letters, digits, '.', '@', '-' and '_'.",
        ));
    }
    Ok(name.to_owned())
}

fn duration(p: &ReceivedParams) -> Result<Duration, ErrorResponse> {
    match p
        .number::<u64>("DurationSeconds")
        .map_err(|_| duration_error())?
    {
        None => Ok(Duration::from_secs(3600)),
        Some(s) if (900..=43_200).contains(&s) => Ok(Duration::from_secs(s)),
        Some(_) => Err(duration_error()),
    }
}

fn duration_error() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidParameter.DurationSeconds",
        "DurationSeconds must be between 900 and 43200 seconds.",
    )
}

fn credentials_json(creds: &StsCredentials, role_arn: &str, role: &str, session: &str) -> Value {
    json!({
        "AssumedRoleUser": {
            "Arn": format!("{role_arn}/{session}"),
            "AssumedRoleId": format!("3{}:{session}", random_string(17, b"0123456789")),
        },
        "Credentials": {
            "AccessKeyId": creds.access_key_id,
            "AccessKeySecret": creds.access_key_secret,
            "SecurityToken": creds.security_token,
            "Expiration": creds.expiration.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        },
        "SourceIdentity": "",
        "RoleName": role,
    })
}

/// `AssumeRole`, made by `caller`.
pub fn assume_role(
    keys: &mut KeyStore,
    _caller: &Caller,
    p: &ReceivedParams,
    now: Timestamp,
) -> Result<Value, ErrorResponse> {
    let arn = p.required("RoleArn")?;
    let (account, role) = parse_role_arn(arn)?;
    let session = session_name(p, true)?;
    let ttl = duration(p)?;
    if let Some(policy) = p.get("Policy")
        && !serde_json::from_str::<Value>(policy).is_ok_and(|v| v.is_object())
    {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.PolicyGrammar",
            "The parameter Policy has not a valid JSON grammar.",
        ));
    }
    let creds = issue(keys, account, ttl, now);
    Ok(credentials_json(&creds, arn, role, &session))
}

/// `AssumeRoleWithOIDC`: no signature; the OIDC token must be a JWT (three Base64url parts).
pub fn assume_role_with_oidc(
    keys: &mut KeyStore,
    p: &ReceivedParams,
    now: Timestamp,
) -> Result<Value, ErrorResponse> {
    let arn = p.required("RoleArn")?;
    let provider = p.required("OIDCProviderArn")?;
    let token = p.required("OIDCToken")?;
    let (account, role) = parse_role_arn(arn)?;
    let provider_ok = provider
        .strip_prefix("acs:ram::")
        .and_then(|rest| rest.split_once(":oidc-provider/"))
        .is_some_and(|(acct, name)| !acct.is_empty() && !name.is_empty());
    if !provider_ok {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.OIDCProviderArn",
            "The parameter OIDCProviderArn is wrongly formed: expected acs:ram::<account-id>:oidc-provider/<name>.",
        ));
    }
    let parts: Vec<&str> = token.trim().split('.').collect();
    let jwt_like = parts.len() == 3
        && parts.iter().take(2).all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'='))
        });
    if !jwt_like {
        return Err(ErrorResponse::bad_request(
            "AuthenticationFail.OIDCToken.Invalid",
            "The OIDCToken is not a valid JWT.",
        ));
    }
    let session = session_name(p, false)?;
    let ttl = duration(p)?;
    let creds = issue(keys, account, ttl, now);
    let mut body = credentials_json(&creds, arn, role, &session);
    let (issued, expires) = crate::oidc_token::issued_and_expires(token);
    if let Some(map) = body.as_object_mut() {
        map.insert(
            "OIDCTokenInfo".to_owned(),
            json!({
                "Subject": "system:serviceaccount:mock:mock",
                "Issuer": "https://oidc.mock.invalid",
                "ClientIds": "sts.aliyuncs.com",
                "IssuanceTime": issued,
                "ExpirationTime": expires,
                // The token was accepted (the reference's example value for that case).
                "VerificationInfo": "Success",
            }),
        );
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_arns() {
        assert_eq!(
            parse_role_arn("acs:ram::123:role/web").unwrap(),
            ("123", "web")
        );
        for bad in [
            "",
            "acs:ram::abc:role/x",
            "acs:ram::1:user/x",
            "acs:ram::1:role/",
        ] {
            assert_eq!(
                parse_role_arn(bad).unwrap_err().code,
                "InvalidParameter.RoleArn",
                "{bad}"
            );
        }
    }

    #[test]
    fn oidc_checks_token_shape_and_issues_usable_credentials() {
        let mut keys = KeyStore::default();
        let now = Timestamp::now();
        let p = ReceivedParams::from_pairs([
            ("RoleArn", "acs:ram::42:role/r"),
            ("OIDCProviderArn", "acs:ram::42:oidc-provider/ack"),
            ("OIDCToken", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.sig"),
            ("DurationSeconds", "900"),
        ]);
        let body = assume_role_with_oidc(&mut keys, &p, now).unwrap();
        assert!(
            body["Credentials"]["AccessKeyId"]
                .as_str()
                .unwrap()
                .starts_with("STS.")
        );
        let bad = ReceivedParams::from_pairs([
            ("RoleArn", "acs:ram::42:role/r"),
            ("OIDCProviderArn", "acs:ram::42:oidc-provider/ack"),
            ("OIDCToken", "not-a-jwt"),
        ]);
        assert_eq!(
            assume_role_with_oidc(&mut keys, &bad, now)
                .unwrap_err()
                .code,
            "AuthenticationFail.OIDCToken.Invalid"
        );
        let short = ReceivedParams::from_pairs([
            ("RoleArn", "acs:ram::42:role/r"),
            ("OIDCProviderArn", "acs:ram::42:oidc-provider/ack"),
            ("OIDCToken", "a.b.c"),
            ("DurationSeconds", "899"),
        ]);
        assert_eq!(
            assume_role_with_oidc(&mut keys, &short, now)
                .unwrap_err()
                .code,
            "InvalidParameter.DurationSeconds"
        );
    }
}
