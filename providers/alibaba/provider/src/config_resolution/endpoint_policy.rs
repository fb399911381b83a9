//! [`EndpointAllowList`]: where a tenant's configuration may send the controller's signed
//! requests. A namespaced ProviderConfig's `endpoint` and `stsEndpoint` are written by whoever
//! can edit that namespace; without a check they could aim the controller at any address it
//! reaches (the node's metadata service at 100.100.100.200, the API server, a collector of
//! signed requests). Allowed by default: `https://` hosts under `aliyuncs.com` on the default
//! port. `ferroplane run --allow-endpoint` adds exact origins (`http://127.0.0.1:8080`) or
//! `https` host names. The check parses and compares; it never connects.

use alibaba_sdk::endpoint::{EndpointError, parse_endpoint};
use url::Url;

/// The domain every public and VPC Alibaba Cloud API endpoint is under.
const ALIBABA_CLOUD_DOMAIN: &str = "aliyuncs.com";

/// One entry added to the defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed {
    /// `https://<host>` on port 443.
    Host(String),
    /// Scheme, host and port exactly.
    Origin {
        scheme: String,
        host: String,
        port: u16,
    },
}

/// Why an endpoint is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointRefusal {
    /// Not a usable URL at all.
    #[error(transparent)]
    Invalid(#[from] EndpointError),
    /// A URL with a user name or password.
    #[error("it carries credentials in the URL")]
    UserInfo,
    /// Not on the allow-list.
    #[error(
        "only https:// endpoints under {ALIBABA_CLOUD_DOMAIN} and those the controller allows (ferroplane run --allow-endpoint) may be used{}",
        if allowed.is_empty() { String::new() } else { format!("; allowed besides {ALIBABA_CLOUD_DOMAIN}: {}", allowed.join(", ")) }
    )]
    NotAllowed { allowed: Vec<String> },
}

/// The endpoints tenants' configurations may use. `Default` holds only the Alibaba Cloud rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointAllowList {
    extra: Vec<Allowed>,
}

impl EndpointAllowList {
    /// Adds an entry: a URL (`http://127.0.0.1:8080`: that scheme, host and port) or a host name
    /// (`ecs.proxy.example`: `https` on port 443).
    pub fn allow(&mut self, entry: &str) -> Result<(), EndpointError> {
        let url = parse_endpoint(entry)?;
        let host = url.host_str().unwrap_or_default().to_owned();
        let allowed = if entry.contains("://") {
            Allowed::Origin {
                scheme: url.scheme().to_owned(),
                host,
                port: url.port_or_known_default().unwrap_or_default(),
            }
        } else {
            Allowed::Host(host)
        };
        if !self.extra.contains(&allowed) {
            self.extra.push(allowed);
        }
        Ok(())
    }

    /// The list with `entry` added.
    pub fn with(mut self, entry: &str) -> Result<Self, EndpointError> {
        self.allow(entry)?;
        Ok(self)
    }

    /// The endpoint parsed, if the list allows it.
    pub fn check(&self, endpoint: &str) -> Result<Url, EndpointRefusal> {
        let url = parse_endpoint(endpoint)?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(EndpointRefusal::UserInfo);
        }
        if is_alibaba_cloud(&url) || self.extra.iter().any(|a| matches(a, &url)) {
            Ok(url)
        } else {
            Err(EndpointRefusal::NotAllowed {
                allowed: self.extra.iter().map(describe).collect(),
            })
        }
    }
}

fn is_alibaba_cloud(url: &Url) -> bool {
    let Some(url::Host::Domain(host)) = url.host() else {
        return false;
    };
    let host = host.trim_end_matches('.');
    url.scheme() == "https"
        && url.port().is_none()
        && (host == ALIBABA_CLOUD_DOMAIN || host.ends_with(&format!(".{ALIBABA_CLOUD_DOMAIN}")))
}

fn matches(allowed: &Allowed, url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    match allowed {
        Allowed::Host(name) => url.scheme() == "https" && url.port().is_none() && host == name,
        Allowed::Origin {
            scheme,
            host: h,
            port,
        } => url.scheme() == scheme && host == h && url.port_or_known_default() == Some(*port),
    }
}

fn describe(allowed: &Allowed) -> String {
    match allowed {
        Allowed::Host(name) => format!("https://{name}"),
        Allowed::Origin { scheme, host, port } => format!("{scheme}://{host}:{port}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alibaba_cloud_https_hosts_only_by_default() {
        let list = EndpointAllowList::default();
        for ok in [
            "https://ecs.cn-beijing.aliyuncs.com",
            "https://ecs-vpc.cn-hangzhou.aliyuncs.com/",
            "sts-vpc.eu-central-1.aliyuncs.com",
            "https://ECS.CN-BEIJING.ALIYUNCS.COM",
        ] {
            assert!(list.check(ok).is_ok(), "{ok}");
        }
        for refused in [
            // Only as strings: nothing here is ever connected to.
            "http://100.100.100.200/",
            "http://100.100.100.200/latest/meta-data/ram/security-credentials/",
            "http://ecs.cn-beijing.aliyuncs.com",
            "https://ecs.cn-beijing.aliyuncs.com:8443",
            "https://aliyuncs.com.evil.example",
            "https://evilaliyuncs.com",
            "https://kubernetes.default.svc",
            "https://user:pass@ecs.cn-beijing.aliyuncs.com",
            "http://127.0.0.1:8080",
        ] {
            assert!(list.check(refused).is_err(), "{refused}");
        }
        let message = list
            .check("http://100.100.100.200/")
            .unwrap_err()
            .to_string();
        assert!(message.contains("--allow-endpoint"), "{message}");
    }

    #[test]
    fn added_origins_and_hosts_match_exactly() {
        let list = EndpointAllowList::default()
            .with("http://127.0.0.1:18080")
            .unwrap()
            .with("ecs.proxy.example")
            .unwrap();
        assert!(list.check("http://127.0.0.1:18080").is_ok());
        assert!(list.check("http://127.0.0.1:18080/").is_ok());
        assert!(list.check("http://127.0.0.1:18081").is_err());
        assert!(list.check("https://127.0.0.1:18080").is_err());
        assert!(list.check("http://localhost:18080").is_err());
        assert!(list.check("https://ecs.proxy.example").is_ok());
        assert!(list.check("http://ecs.proxy.example").is_err());
        assert!(list.check("https://ecs.proxy.example:444").is_err());
        assert!(list.check("https://x.ecs.proxy.example").is_err());
        let message = list
            .check("http://100.100.100.200")
            .unwrap_err()
            .to_string();
        assert!(message.contains("http://127.0.0.1:18080"), "{message}");
        assert!(EndpointAllowList::default().allow("ftp://x").is_err());
    }
}
