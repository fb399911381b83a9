//! RPC signature V1 (`HMAC-SHA1`, `SignatureVersion=1.0`).
//!
//! The signature covers every parameter of the request, from the query string and the
//! `application/x-www-form-urlencoded` body together, except `Signature` itself:
//! `StringToSign = METHOD & %2F & percentEncode(canonical query)`, keyed with `secret + "&"`.

use std::collections::BTreeMap;

use base64::Engine as _;
use hmac::{Hmac, KeyInit as _, Mac as _};
use sha1::Sha1;

use super::percent_encode;

/// Value of the `SignatureMethod` parameter.
pub const SIGNATURE_METHOD: &str = "HMAC-SHA1";
/// Value of the `SignatureVersion` parameter.
pub const SIGNATURE_VERSION: &str = "1.0";
/// The parameter that carries the signature; it is never part of what is signed.
pub const SIGNATURE_PARAM: &str = "Signature";

/// The canonical query: every parameter except `Signature`, sorted by name (byte order, which a
/// `BTreeMap<String, _>` already gives), each `percentEncode(name)=percentEncode(value)`, joined
/// by `&`.
pub fn canonical_query(params: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(params.len() * 32);
    for (name, value) in params {
        if name == SIGNATURE_PARAM {
            continue;
        }
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(&percent_encode(name));
        out.push('=');
        out.push_str(&percent_encode(value));
    }
    out
}

/// `METHOD&%2F&percentEncode(canonical query)`; `method` is used as given (`GET` or `POST`).
pub fn string_to_sign(method: &str, params: &BTreeMap<String, String>) -> String {
    format!(
        "{method}&{}&{}",
        percent_encode("/"),
        percent_encode(&canonical_query(params))
    )
}

/// `Base64(HMAC-SHA1(secret + "&", string_to_sign))`.
pub fn sign(access_key_secret: &str, string_to_sign: &str) -> String {
    let key = format!("{access_key_secret}&");
    let mut mac =
        Hmac::<Sha1>::new_from_slice(key.as_bytes()).expect("HMAC accepts keys of any length");
    mac.update(string_to_sign.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn with_common(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut p = params(pairs);
        p.insert("SignatureMethod".into(), SIGNATURE_METHOD.into());
        p.insert("SignatureVersion".into(), SIGNATURE_VERSION.into());
        p
    }

    fn signature(secret: &str, method: &str, p: &BTreeMap<String, String>) -> String {
        sign(secret, &string_to_sign(method, p))
    }

    #[test]
    fn describe_regions_vector_and_its_string_to_sign() {
        let p = with_common(&[
            ("AccessKeyId", "testid"),
            ("Action", "DescribeRegions"),
            ("Format", "XML"),
            ("SignatureNonce", "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf"),
            ("Timestamp", "2016-02-23T12:46:24Z"),
            ("Version", "2014-05-26"),
        ]);
        assert_eq!(
            string_to_sign("GET", &p),
            "GET&%2F&AccessKeyId%3Dtestid%26Action%3DDescribeRegions%26Format%3DXML%26SignatureMethod%3DHMAC-SHA1%26SignatureNonce%3D3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf%26SignatureVersion%3D1.0%26Timestamp%3D2016-02-23T12%253A46%253A24Z%26Version%3D2014-05-26"
        );
        assert_eq!(
            signature("testsecret", "GET", &p),
            "OLeaidS1JvxuMvnyHOwuJ+uX5qY="
        );
    }

    #[test]
    fn signature_parameter_is_not_signed() {
        let mut p = with_common(&[("AccessKeyId", "testid"), ("Action", "DescribeRegions")]);
        let before = string_to_sign("GET", &p);
        p.insert(SIGNATURE_PARAM.into(), "whatever".into());
        assert_eq!(string_to_sign("GET", &p), before);
    }

    #[test]
    fn assume_role_vector() {
        let p = with_common(&[
            ("AccessKeyId", "testid"),
            ("Action", "AssumeRole"),
            ("Format", "JSON"),
            ("RoleArn", "acs:ram::1234567890123:role/firstrole"),
            ("RoleSessionName", "client"),
            ("SignatureNonce", "571f8fb8-506e-11e5-8e12-b8e8563dc8d2"),
            ("Timestamp", "2015-09-01T05:57:34Z"),
            ("Version", "2015-04-01"),
        ]);
        assert_eq!(
            signature("testsecret", "GET", &p),
            "gNI7b0AyKZHxDgjBGPDgJ1Ce3L4="
        );
    }

    #[test]
    fn get_device_infos_vector_with_a_comma_list() {
        let p = with_common(&[
            ("AccessKeyId", "testid"),
            ("Action", "GetDeviceInfos"),
            ("AppKey", "23267207"),
            (
                "Devices",
                "e2ba19de97604f55b165576736477b74,92a1da34bdfd4c9692714917ce22d53d",
            ),
            ("Format", "XML"),
            ("RegionId", "cn-hangzhou"),
            ("SignatureNonce", "c4f5f0de-b3ff-4528-8a89-fa478bda8d80"),
            ("Timestamp", "2016-03-29T03:59:24Z"),
            ("Version", "2015-08-27"),
        ]);
        assert_eq!(
            signature("testsecret", "GET", &p),
            "Q4jj5vC+NRtz294V+oIW7gfaJ6U="
        );
    }

    #[test]
    fn create_token_vector() {
        let p = with_common(&[
            ("AccessKeyId", "my_access_key_id"),
            ("Action", "CreateToken"),
            ("Format", "JSON"),
            ("RegionId", "cn-shanghai"),
            ("SignatureNonce", "b924c8c3-6d03-4c5d-ad36-d984d3116788"),
            ("Timestamp", "2019-04-18T08:32:31Z"),
            ("Version", "2019-02-28"),
        ]);
        assert_eq!(
            signature("my_access_key_secret", "GET", &p),
            "hHq4yNsPitlfDJ2L0nQPdugdEzM="
        );
    }

    #[test]
    fn minimal_vector_without_common_parameters() {
        let p = params(&[("query", "test"), ("body", "test")]);
        assert_eq!(
            signature("secret", "GET", &p),
            "XlUyV4sXjOuX5FnjUz9IF9tm5rU="
        );
    }

    #[test]
    fn misspelled_timestamp_from_old_docs_does_not_match_its_published_signature() {
        // The published example signs `TimeStamp`; a correct implementation must not reproduce
        // it when given `Timestamp`, which is what the server computes.
        let p = with_common(&[
            ("AccessKeyId", "testid"),
            ("Action", "DescribeRegions"),
            ("Format", "XML"),
            ("SignatureNonce", "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf"),
            ("Timestamp", "2016-02-23T12:46:24Z"),
            ("Version", "2014-05-26"),
        ]);
        assert_ne!(
            signature("testsecret", "GET", &p),
            "CT9X0VtwR86fNWSnsc6v8YGOjuE="
        );
    }

    fn edge_case_params() -> BTreeMap<String, String> {
        with_common(&[
            ("AccessKeyId", "testid"),
            ("Action", "DescribeInstances"),
            ("Format", "JSON"),
            ("RegionId", "cn-hangzhou"),
            ("InstanceIds", "[\"i-abc\", \"i-def\"]"),
            ("Tag.1.Key", "env"),
            ("Tag.1.Value", "dev test*~"),
            ("InstanceName", "中文"),
            ("PageSize", "100"),
            ("SignatureNonce", "11111111-2222-3333-4444-555555555555"),
            ("Timestamp", "2024-01-01T00:00:00Z"),
            ("Version", "2014-05-26"),
        ])
    }

    #[test]
    fn edge_case_vectors_json_array_unicode_space_star_tilde() {
        let p = edge_case_params();
        assert_eq!(
            signature("testsecret", "GET", &p),
            "d/wW6RrcJjmYsxU/gHs0kwASkXE="
        );
        assert_eq!(
            signature("testsecret", "POST", &p),
            "NRKebjqD8qe3WH3r1xmYthjBaJQ="
        );
    }

    #[test]
    fn edge_case_vector_with_security_token() {
        let mut p = edge_case_params();
        p.insert("SecurityToken".into(), "sts-token/abc+==".into());
        assert_eq!(
            signature("testsecret", "GET", &p),
            "GNgbjl9Ab61uRCjEe4D/e9bwPcA="
        );
    }

    #[test]
    fn empty_value_is_signed_as_name_equals() {
        let p = params(&[("A", "1"), ("SignatureType", "")]);
        assert_eq!(canonical_query(&p), "A=1&SignatureType=");
    }
}
