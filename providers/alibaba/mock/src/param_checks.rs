//! The syntax checks of parameters several actions share, with ECS's codes: instance names, host
//! names, descriptions, bandwidth, ClientTokens, UserData, passwords and RAM role names.

use crate::error::ErrorResponse;

/// Checks a name: 2–`max` characters, starting with a letter (any script), not a URL.
fn check_name(
    value: &str,
    max: usize,
    code: &'static str,
    what: &str,
) -> Result<(), ErrorResponse> {
    let len = value.chars().count();
    let starts_with_letter = value.chars().next().is_some_and(char::is_alphabetic);
    if !(2..=max).contains(&len)
        || !starts_with_letter
        || value.starts_with("http://")
        || value.starts_with("https://")
    {
        return Err(ErrorResponse::bad_request(
            code,
            format!(
                "The specified {what} is invalid: 2 to {max} characters, starting with a letter, not with http:// or https://."
            ),
        ));
    }
    Ok(())
}

/// `InstanceName`: 2–128 characters, starting with a letter, not a URL.
pub fn check_instance_name(name: &str) -> Result<(), ErrorResponse> {
    check_name(name, 128, "InvalidInstanceName.Malformed", "InstanceName")
}

/// `HostName`: 2–64 characters of letters, digits, `.` and `-`, not starting or ending with either.
pub fn check_host_name(host: &str) -> Result<(), ErrorResponse> {
    let ok = (2..=64).contains(&host.len())
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        && !host.starts_with(['-', '.'])
        && !host.ends_with(['-', '.']);
    if ok {
        Ok(())
    } else {
        Err(ErrorResponse::bad_request(
            "InvalidHostName.Malformed",
            "The specified HostName is invalid: 2 to 64 characters of letters, digits, '.' and '-', not starting or ending with '.' or '-'.",
        ))
    }
}

/// `Description`: at most 256 characters, not starting with a URL scheme.
pub fn check_description(description: &str) -> Result<(), ErrorResponse> {
    if description.chars().count() > 256
        || description.starts_with("http://")
        || description.starts_with("https://")
    {
        return Err(ErrorResponse::bad_request(
            "InvalidDescription.Malformed",
            "The specified Description is invalid: at most 256 characters, not starting with http:// or https://.",
        ));
    }
    Ok(())
}

/// `InternetMaxBandwidthOut`: 0–100 Mbit/s.
pub fn check_bandwidth(mbps: u32) -> Result<(), ErrorResponse> {
    if mbps > 100 {
        return Err(ErrorResponse::bad_request(
            "InvalidInternetMaxBandwidthOut.Malformed",
            "InternetMaxBandwidthOut must be between 0 and 100.",
        ));
    }
    Ok(())
}

/// `ClientToken`: ASCII, at most 64 characters.
pub fn check_client_token(token: &str) -> Result<(), ErrorResponse> {
    if token.len() > 64 || !token.is_ascii() {
        return Err(ErrorResponse::bad_request(
            "InvalidClientToken.Malformed",
            "The specified ClientToken is invalid: ASCII, at most 64 characters.",
        ));
    }
    Ok(())
}

/// `UserData`: Base64 of at most 32 KiB.
pub fn check_user_data(data: &str) -> Result<(), ErrorResponse> {
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| {
            ErrorResponse::bad_request(
                "InvalidUserData.Base64FormatInvalid",
                "The specified UserData is not valid Base64.",
            )
        })?;
    if decoded.len() > 32 * 1024 {
        return Err(ErrorResponse::bad_request(
            "InvalidUserData.SizeExceeded",
            "The specified UserData exceeds 32 KiB.",
        ));
    }
    Ok(())
}

/// `Password`: 8–30 characters with at least three of lowercase, uppercase, digits and symbols.
/// The value itself never appears in the error.
pub fn check_password(password: &str) -> Result<(), ErrorResponse> {
    const SYMBOLS: &str = "()`~!@#$%^&*-_+=|{}[]:;'<>,.?/";
    let classes = [
        password.chars().any(|c| c.is_ascii_lowercase()),
        password.chars().any(|c| c.is_ascii_uppercase()),
        password.chars().any(|c| c.is_ascii_digit()),
        password.chars().any(|c| SYMBOLS.contains(c)),
    ];
    let allowed = password
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || SYMBOLS.contains(c));
    if !(8..=30).contains(&password.chars().count())
        || !allowed
        || classes.iter().filter(|c| **c).count() < 3
    {
        return Err(ErrorResponse::bad_request(
            "InvalidPassword.Malformed",
            "The specified Password is invalid: 8 to 30 characters with at least three of lowercase letters, uppercase letters, digits and symbols.",
        ));
    }
    Ok(())
}

/// `RamRoleName`: 1–64 characters of letters, digits, `.`, `@` and `-`, as RAM allows.
pub fn check_ram_role_name(name: &str) -> Result<(), ErrorResponse> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'@' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(ErrorResponse::bad_request(
            "InvalidRamRoleName.Malformed",
            "The specified RamRoleName is invalid: 1 to 64 characters of letters, digits, '.', '@' and '-'.",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_need_three_classes() {
        assert!(check_password("Abcdef12").is_ok());
        assert!(check_password("abcdef12").is_err());
        assert!(check_password("Ab1!").is_err());
        assert!(check_password("Abcdef1 ").is_err());
    }
}
