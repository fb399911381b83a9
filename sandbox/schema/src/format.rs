//! String `format`s the apiserver checks for custom resources. Unknown formats (and the numeric
//! ones such as `int32`, which constrain numbers, not strings) always pass, as in Kubernetes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `s` is valid for `format`.
pub(crate) fn is_valid(format: &str, s: &str) -> bool {
    match format {
        "date-time" | "datetime" => s.parse::<jiff::Timestamp>().is_ok(),
        "date" => s.parse::<jiff::civil::Date>().is_ok() && s.len() == 10,
        "byte" => is_base64(s),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => is_uuid(s),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "hostname" => is_hostname(s),
        "email" => is_email(s),
        "duration" => is_duration(s),
        "mac" => is_mac(s),
        "uri" => is_uri(s),
        _ => true,
    }
}

fn is_base64(s: &str) -> bool {
    let bytes = s.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let padding = bytes.iter().rev().take_while(|&&b| b == b'=').count();
    if padding > 2 {
        return false;
    }
    bytes[..bytes.len() - padding]
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
}

fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match addr.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

fn is_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn is_email(s: &str) -> bool {
    match s.rsplit_once('@') {
        Some((local, domain)) => !local.is_empty() && !local.contains(' ') && is_hostname(domain),
        None => false,
    }
}

/// Go's `time.ParseDuration` syntax: a sequence of decimal numbers with units, e.g. `1h30m`.
fn is_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 || rest[..digits].chars().filter(|&c| c == '.').count() > 1 {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .into_iter()
            .find(|u| rest.starts_with(u));
        match unit {
            // "m" must not swallow the "m" of "ms".
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

fn is_mac(s: &str) -> bool {
    let sep = if s.contains(':') { ':' } else { '-' };
    let parts: Vec<&str> = s.split(sep).collect();
    matches!(parts.len(), 6 | 8 | 20)
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_uri(s: &str) -> bool {
    match s.split_once(':') {
        Some((scheme, rest)) => {
            !rest.is_empty()
                && scheme
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => s.starts_with('/'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let cases = [
            ("date-time", "2024-05-01T10:00:00Z", true),
            ("date-time", "2024-05-01T10:00:00+02:00", true),
            ("date-time", "yesterday", false),
            ("date", "2024-05-01", true),
            ("date", "2024-5-1", false),
            ("byte", "aGVsbG8=", true),
            ("byte", "aGVsbG8", false),
            ("byte", "", true),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
            ("uuid", "123e4567", false),
            ("ipv4", "10.0.0.1", true),
            ("ipv4", "10.0.0.256", false),
            ("ipv6", "::1", true),
            ("cidr", "10.0.0.0/8", true),
            ("cidr", "10.0.0.0/33", false),
            ("hostname", "web-1.example.com", true),
            ("hostname", "-bad", false),
            ("email", "a@example.com", true),
            ("email", "nope", false),
            ("duration", "1h30m", true),
            ("duration", "250ms", true),
            ("duration", "1.5s", true),
            ("duration", "10", false),
            ("duration", "5x", false),
            ("mac", "00:1a:2b:3c:4d:5e", true),
            ("mac", "00:1a", false),
            ("uri", "https://example.com/x", true),
            ("uri", "not a uri", false),
            ("int32", "anything", true),
            ("unknown-format", "anything", true),
        ];
        for (f, s, want) in cases {
            assert_eq!(is_valid(f, s), want, "{f} {s:?}");
        }
    }
}
