//! Signature V3 (`ACS3-HMAC-SHA256`), carried in the `Authorization` header.
//!
//! `CanonicalRequest = METHOD \n path \n canonical query \n canonical headers \n signed header
//! names \n hex(SHA-256(body))`; `StringToSign = ACS3-HMAC-SHA256 \n hex(SHA-256(CanonicalRequest))`;
//! the signature is `hex(HMAC-SHA256(secret, StringToSign))`.

use std::collections::BTreeMap;

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::{Digest as _, Sha256};

use super::percent_encode;

/// The algorithm name, first word of the `Authorization` header and of the string to sign.
pub const ALGORITHM: &str = "ACS3-HMAC-SHA256";

/// Hex SHA-256 of a request body (also the value of `x-acs-content-sha256`).
pub fn hashed_payload(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

/// The canonical request.
///
/// `signed_headers` maps lowercase header names to values and holds ONLY the headers to be signed
/// (`host`, `content-type`, `x-acs-*`); values are trimmed here. `path` is encoded per segment,
/// keeping `/`; an empty path is `/`.
pub fn canonical_request(
    method: &str,
    path: &str,
    query: &BTreeMap<String, String>,
    signed_headers: &BTreeMap<String, String>,
    hashed_payload: &str,
) -> String {
    let mut out = String::with_capacity(256 + query.len() * 32 + signed_headers.len() * 48);
    out.push_str(method);
    out.push('\n');
    out.push_str(&canonical_path(path));
    out.push('\n');
    let mut first = true;
    for (name, value) in query {
        if !first {
            out.push('&');
        }
        first = false;
        out.push_str(&percent_encode(name));
        out.push('=');
        out.push_str(&percent_encode(value));
    }
    out.push('\n');
    for (name, value) in signed_headers {
        out.push_str(&name.to_ascii_lowercase());
        out.push(':');
        out.push_str(value.trim());
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&signed_header_names(signed_headers));
    out.push('\n');
    out.push_str(hashed_payload);
    out
}

fn canonical_path(path: &str) -> String {
    if path.is_empty() {
        return "/".to_owned();
    }
    path.split('/')
        .map(percent_encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// The signed header names, lowercase, sorted, joined by `;`.
pub fn signed_header_names(signed_headers: &BTreeMap<String, String>) -> String {
    let mut names: Vec<String> = signed_headers
        .keys()
        .map(|name| name.to_ascii_lowercase())
        .collect();
    names.sort();
    names.join(";")
}

/// `ACS3-HMAC-SHA256\n` + hex(SHA-256(canonical request)).
pub fn string_to_sign(canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{}",
        hex::encode(Sha256::digest(canonical_request.as_bytes()))
    )
}

/// `hex(HMAC-SHA256(secret, string_to_sign))` (the key is the bare secret, no `&`).
pub fn sign(access_key_secret: &str, string_to_sign: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(access_key_secret.as_bytes())
        .expect("HMAC accepts keys of any length");
    mac.update(string_to_sign.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// `ACS3-HMAC-SHA256 Credential=<id>,SignedHeaders=<names>,Signature=<hex>`.
pub fn authorization_header(
    access_key_id: &str,
    signed_header_names: &str,
    signature: &str,
) -> String {
    format!(
        "{ALGORITHM} Credential={access_key_id},SignedHeaders={signed_header_names},Signature={signature}"
    )
}

/// The parts of a V3 `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedAuthorization {
    /// The `Credential` value: the AccessKeyId.
    pub access_key_id: String,
    /// The `SignedHeaders` names, in the order given.
    pub signed_headers: Vec<String>,
    /// The hex signature.
    pub signature: String,
}

/// Parses a V3 `Authorization` header; `None` when it is not `ACS3-HMAC-SHA256` or a part is
/// missing or empty. Whitespace around the `,`-separated parts is tolerated.
pub fn parse_authorization(value: &str) -> Option<ParsedAuthorization> {
    let rest = value.trim().strip_prefix(ALGORITHM)?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let (mut credential, mut signed, mut signature) = (None, None, None);
    for part in rest.split(',') {
        let (key, val) = part.trim().split_once('=')?;
        let slot = match key.trim() {
            "Credential" => &mut credential,
            "SignedHeaders" => &mut signed,
            "Signature" => &mut signature,
            _ => continue,
        };
        *slot = Some(val.trim().to_owned());
    }
    let access_key_id = credential.filter(|c| !c.is_empty())?;
    let signature = signature.filter(|s| !s.is_empty())?;
    let signed_headers: Vec<String> = signed?
        .split(';')
        .filter(|name| !name.is_empty())
        .map(|name| name.to_ascii_lowercase())
        .collect();
    if signed_headers.is_empty() {
        return None;
    }
    Some(ParsedAuthorization {
        access_key_id,
        signed_headers,
        signature,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn official_run_instances_vector() {
        let query = map(&[
            (
                "ImageId",
                "win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd",
            ),
            ("RegionId", "cn-shanghai"),
        ]);
        let payload = hashed_payload(b"");
        assert_eq!(
            payload,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let headers = map(&[
            ("host", "ecs.cn-shanghai.aliyuncs.com"),
            ("x-acs-action", "RunInstances"),
            ("x-acs-content-sha256", &payload),
            ("x-acs-date", "2023-10-26T10:22:32Z"),
            ("x-acs-signature-nonce", "3156853299f313e23d1673dc12e1703d"),
            ("x-acs-version", "2014-05-26"),
        ]);
        let names = signed_header_names(&headers);
        assert_eq!(
            names,
            "host;x-acs-action;x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version"
        );
        let request = canonical_request("POST", "/", &query, &headers, &payload);
        let signature = sign("YourAccessKeySecret", &string_to_sign(&request));
        assert_eq!(
            signature,
            "06563a9e1b43f5dfe96b81484da74bceab24a1d853912eee15083a6f0f3283c0"
        );
        let header = authorization_header("YourAccessKeyId", &names, &signature);
        let parsed = parse_authorization(&header).expect("own header parses");
        assert_eq!(parsed.access_key_id, "YourAccessKeyId");
        assert_eq!(parsed.signed_headers.join(";"), names);
        assert_eq!(parsed.signature, signature);
    }

    #[test]
    fn canonical_request_layout() {
        let query = map(&[("b", "x y"), ("a", "")]);
        let headers = map(&[("x-acs-date", " 2024-01-01T00:00:00Z "), ("host", "h")]);
        assert_eq!(
            canonical_request("GET", "", &query, &headers, "abc"),
            "GET\n/\na=&b=x%20y\nhost:h\nx-acs-date:2024-01-01T00:00:00Z\n\nhost;x-acs-date\nabc"
        );
    }

    #[test]
    fn parse_rejects_other_schemes_and_missing_parts() {
        assert!(parse_authorization("Bearer abc").is_none());
        assert!(
            parse_authorization("ACS3-HMAC-SHA256Credential=a,SignedHeaders=h,Signature=s")
                .is_none()
        );
        assert!(parse_authorization("ACS3-HMAC-SHA256 Credential=a,SignedHeaders=host").is_none());
        assert!(
            parse_authorization("ACS3-HMAC-SHA256 Credential=,SignedHeaders=host,Signature=s")
                .is_none()
        );
        assert!(parse_authorization("ACS3-HMAC-SHA256 garbage").is_none());
        let parsed = parse_authorization(
            "ACS3-HMAC-SHA256 Credential=ak, SignedHeaders=host;x-acs-date, Signature=ff",
        )
        .unwrap();
        assert_eq!(parsed.signed_headers, vec!["host", "x-acs-date"]);
    }
}
