//! Request signing for Alibaba Cloud APIs.
//!
//! Two schemes exist and both are supported, selectable per client:
//! - [`v1`]: the RPC signature (`HMAC-SHA1`, `SignatureVersion=1.0`) computed over the sorted
//!   query and form parameters;
//! - [`v3`]: the header-based `ACS3-HMAC-SHA256` signature computed over a canonical request.
//!
//! Everything here is pure: the transport builds the parameters and headers, these functions turn
//! them into strings to sign and signatures. The ECS mock uses the same functions to verify.

pub mod v1;
pub mod v3;

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Percent-encodes a string the way Alibaba Cloud signs it: the UTF-8 bytes of the RFC 3986
/// unreserved set (`A-Z a-z 0-9 - _ . ~`) stay literal, every other byte becomes `%XY` (uppercase).
///
/// Unlike form encoding, a space is `%20` (never `+`) and `*` is `%2A`.
pub fn percent_encode(input: &str) -> String {
    percent_encode_bytes(input.as_bytes())
}

/// [`percent_encode`] for arbitrary bytes.
pub fn percent_encode_bytes(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len() * 3 / 2);
    for &byte in input {
        if is_unreserved(byte) {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX_UPPER[usize::from(byte >> 4)]));
            out.push(char::from(HEX_UPPER[usize::from(byte & 0x0F)]));
        }
    }
    out
}

/// Whether a byte belongs to the RFC 3986 unreserved set, the only bytes left literal.
pub fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~')
}

/// Why a percent-encoded string could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PercentDecodeError {
    /// A `%` not followed by two hexadecimal digits.
    #[error("invalid percent escape at byte {position}: `%` must be followed by two hex digits")]
    InvalidEscape {
        /// Byte offset of the offending `%`.
        position: usize,
    },
}

/// Decodes `%XY` escapes (either hex case) back to bytes; every other byte is kept as is.
///
/// `+` is not treated as a space: Alibaba's encoding never produces it for a space, so a literal
/// `+` here means a literal `+`. Form bodies that use `+` must be decoded with form rules instead.
pub fn percent_decode(input: &str) -> Result<Vec<u8>, PercentDecodeError> {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = bytes.get(i + 1).copied().and_then(hex_value);
            let lo = bytes.get(i + 2).copied().and_then(hex_value);
            match (hi, lo) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 3;
                }
                _ => return Err(PercentDecodeError::InvalidEscape { position: i }),
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodes_the_characters_that_differ_from_form_encoding() {
        assert_eq!(percent_encode("a b*c~d"), "a%20b%2Ac~d");
        assert_eq!(percent_encode("+/=:"), "%2B%2F%3D%3A");
        assert_eq!(percent_encode("中"), "%E4%B8%AD");
        assert_eq!(percent_encode(""), "");
    }

    #[test]
    fn decode_accepts_both_hex_cases_and_rejects_truncated_escapes() {
        assert_eq!(percent_decode("%e4%B8%aD").unwrap(), "中".as_bytes());
        assert_eq!(percent_decode("a+b").unwrap(), b"a+b");
        assert_eq!(
            percent_decode("ab%4"),
            Err(PercentDecodeError::InvalidEscape { position: 2 })
        );
        assert_eq!(
            percent_decode("%zz"),
            Err(PercentDecodeError::InvalidEscape { position: 0 })
        );
    }

    proptest! {
        #[test]
        fn every_byte_string_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let encoded = percent_encode_bytes(&bytes);
            prop_assert_eq!(percent_decode(&encoded).unwrap(), bytes);
        }

        #[test]
        fn only_the_unreserved_set_stays_literal(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let encoded = percent_encode_bytes(&bytes);
            // Output is ASCII: unreserved bytes, or `%` followed by two uppercase hex digits.
            let out = encoded.as_bytes();
            let mut i = 0;
            let mut decoded_len = 0;
            while i < out.len() {
                if out[i] == b'%' {
                    let escape = &out[i + 1..i + 3];
                    prop_assert!(escape.iter().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(b)));
                    let value = u8::from_str_radix(std::str::from_utf8(escape).unwrap(), 16).unwrap();
                    prop_assert!(!is_unreserved(value), "unreserved byte {value:#04x} was escaped");
                    i += 3;
                } else {
                    prop_assert!(is_unreserved(out[i]), "reserved byte {:#04x} left literal", out[i]);
                    i += 1;
                }
                decoded_len += 1;
            }
            prop_assert_eq!(decoded_len, bytes.len());
        }

        #[test]
        fn strings_round_trip_through_utf8(s in "\\PC*") {
            let decoded = percent_decode(&percent_encode(&s)).unwrap();
            prop_assert_eq!(String::from_utf8(decoded).unwrap(), s);
        }
    }
}
