//! What of an API error message may be shown to the people who read conditions and events.
//!
//! A `SignatureDoesNotMatch` (and `IncompleteSignature`) message echoes the server's string to
//! sign, which holds the AccessKeyId, the nonce, the security token and every parameter of the
//! request. Nothing after "string to sign" is kept; the code gets a hint instead. Every message
//! also loses the request's secrets and its AccessKeyId, raw and percent-encoded.

use crate::secret::{Secret, redact};

/// The phrase after which the server quotes its string to sign (matched case-insensitively).
const STRING_TO_SIGN: &str = "string to sign";

/// Codes whose message is about the signature, and what to check.
const SIGNATURE_HINT: &str = "the request signature does not match: check that the AccessKeySecret belongs to the AccessKeyId (a copied Secret often carries a trailing newline or space) and that the controller's clock is right";

/// The message of an API error as it may be shown: without the server's string to sign, without
/// `secrets` (which should include the AccessKeyId) in any encoding, with a hint for signature
/// codes.
pub(crate) fn shown_message(code: &str, message: &str, secrets: &[&Secret]) -> String {
    let kept = match message.to_ascii_lowercase().find(STRING_TO_SIGN) {
        Some(at) => {
            // Drop the lead-in of the quote too ("server string to sign is:").
            let head = &message[..at];
            let head = head
                .trim_end()
                .trim_end_matches("server")
                .trim_end_matches("Server")
                .trim_end();
            format!("{head} (the server's echo of the signed request is omitted)")
        }
        None => message.to_owned(),
    };
    let kept = redact(&kept, secrets);
    if is_signature_code(code) {
        format!("{kept}; {SIGNATURE_HINT}")
    } else {
        kept
    }
}

fn is_signature_code(code: &str) -> bool {
    code == "SignatureDoesNotMatch" || code == "IncompleteSignature"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_string_to_sign_and_the_access_key_id_are_cut() {
        let id = Secret::new("LTAI5tExampleKeyId");
        let message = "Specified signature is not matched with our calculation. server string to sign is:GET&%2F&AccessKeyId%3DLTAI5tExampleKeyId%26Action%3DDescribeInstances%26SignatureNonce%3Dabc";
        let shown = shown_message("SignatureDoesNotMatch", message, &[&id]);
        assert!(!shown.contains("LTAI5tExampleKeyId"), "{shown}");
        assert!(
            !shown.to_lowercase().contains("string to sign is"),
            "{shown}"
        );
        assert!(!shown.contains("SignatureNonce"), "{shown}");
        assert!(
            shown.starts_with("Specified signature is not matched with our calculation."),
            "{shown}"
        );
        assert!(
            shown.contains("AccessKeySecret belongs to the AccessKeyId"),
            "{shown}"
        );
    }

    #[test]
    fn other_messages_keep_their_text_without_secrets() {
        let id = Secret::new("LTAI5tExampleKeyId");
        let shown = shown_message(
            "InvalidAccessKeyId.NotFound",
            "Specified access key is not found: LTAI5tExampleKeyId",
            &[&id],
        );
        assert_eq!(shown, "Specified access key is not found: <redacted>");
        let plain = shown_message(
            "InvalidInstanceId.NotFound",
            "The instance does not exist.",
            &[],
        );
        assert_eq!(plain, "The instance does not exist.");
    }
}
