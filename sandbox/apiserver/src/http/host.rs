//! DNS-rebinding defence: a browser page on another origin can make a name resolve to
//! 127.0.0.1, but its requests then carry that name in `Host`. The sandbox answers only requests
//! addressed to the loopback names it serves, on its port.

use axum::http::{HeaderMap, Uri, header};

use crate::error::{ApiError, ApiResult};

/// The loopback names the server answers to.
const NAMES: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// `Ok` when the request's `Host` (or, for HTTP/2, the URI's authority) names this server:
/// one of [`NAMES`], with `port` or without a port.
pub fn check(headers: &HeaderMap, uri: &Uri, port: u16) -> ApiResult<()> {
    let host = match headers.get(header::HOST) {
        Some(value) => value.to_str().unwrap_or_default().to_owned(),
        None => match uri.authority() {
            Some(authority) => authority.as_str().to_owned(),
            // HTTP/1.0 without Host: nothing names another server.
            None => return Ok(()),
        },
    };
    if is_served(&host, port) {
        Ok(())
    } else {
        Err(ApiError::misdirected(&host))
    }
}

fn is_served(host: &str, port: u16) -> bool {
    let host = host.to_ascii_lowercase();
    let (name, host_port) = match host.rsplit_once(':') {
        // `[::1]` alone has colons inside the brackets only.
        Some((name, p)) if !p.ends_with(']') => (name, Some(p)),
        _ => (host.as_str(), None),
    };
    NAMES.contains(&name) && host_port.is_none_or(|p| p.parse::<u16>() == Ok(port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_with_the_port_are_served() {
        for host in [
            "127.0.0.1:6443",
            "localhost:6443",
            "LOCALHOST:6443",
            "[::1]:6443",
            "localhost",
            "[::1]",
        ] {
            assert!(is_served(host, 6443), "{host}");
        }
    }

    #[test]
    fn other_names_and_ports_are_refused() {
        for host in [
            "evil.example:6443",
            "127.0.0.1.nip.io:6443",
            "localhost:6444",
            "127.0.0.2:6443",
            "[::2]:6443",
            "localhost:x",
            "",
        ] {
            assert!(!is_served(host, 6443), "{host}");
        }
    }
}
