//! Where requests go: the ECS and STS endpoints of a region, or an override.
//!
//! ECS: `https://ecs.<region>.aliyuncs.com`, except `cn-hangzhou` (`ecs-cn-hangzhou.aliyuncs.com`);
//! VPC-internal `https://ecs-vpc.<region>.aliyuncs.com`. STS: `https://sts.aliyuncs.com` or
//! `https://sts.<region>.aliyuncs.com`, VPC-internal `https://sts-vpc.<region>.aliyuncs.com`. Any endpoint can be overridden with a full URL, plain
//! `http` included, for private endpoints, proxies and the local mock.

use url::Url;

/// Which network path to a regional ECS endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// The public endpoint.
    #[default]
    Public,
    /// The VPC-internal endpoint (`ecs-vpc.<region>`), reachable only from inside a VPC.
    Vpc,
}

/// An endpoint that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// The override is not an absolute http(s) URL.
    #[error(
        "invalid endpoint `{endpoint}`: {reason}; expected an absolute URL such as https://ecs.cn-beijing.aliyuncs.com or http://127.0.0.1:8080"
    )]
    InvalidUrl {
        /// The rejected value.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The region ID cannot be part of a host name.
    #[error(
        "invalid region ID `{region}`: use lowercase letters, digits and dashes, e.g. cn-hangzhou"
    )]
    InvalidRegion {
        /// The rejected value.
        region: String,
    },
    /// The VPC-internal STS endpoint is regional.
    #[error(
        "the VPC-internal STS endpoint sts-vpc.<region>.aliyuncs.com needs a region: set the configuration's region (or ALIBABA_CLOUD_STS_REGION), or set stsEndpoint"
    )]
    VpcStsNeedsRegion,
}

/// Checks that a region ID can be placed in a host name.
pub fn validate_region(region: &str) -> Result<(), EndpointError> {
    let valid = !region.is_empty()
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !region.starts_with('-')
        && !region.ends_with('-');
    if valid {
        Ok(())
    } else {
        Err(EndpointError::InvalidRegion {
            region: region.to_owned(),
        })
    }
}

/// The ECS endpoint of a region.
pub fn ecs_endpoint(region: &str, network: Network) -> Result<Url, EndpointError> {
    validate_region(region)?;
    let host = match (network, region) {
        (Network::Public, "cn-hangzhou") => "ecs-cn-hangzhou.aliyuncs.com".to_owned(),
        (Network::Public, _) => format!("ecs.{region}.aliyuncs.com"),
        (Network::Vpc, _) => format!("ecs-vpc.{region}.aliyuncs.com"),
    };
    parse_endpoint(&format!("https://{host}"))
}

/// The STS endpoint: regional when a region is given, else the global one; on the VPC network
/// `sts-vpc.<region>`, which exists only per region.
pub fn sts_endpoint(region: Option<&str>, network: Network) -> Result<Url, EndpointError> {
    match (region, network) {
        (Some(region), network) => {
            validate_region(region)?;
            let prefix = match network {
                Network::Public => "sts",
                Network::Vpc => "sts-vpc",
            };
            parse_endpoint(&format!("https://{prefix}.{region}.aliyuncs.com"))
        }
        (None, Network::Public) => parse_endpoint("https://sts.aliyuncs.com"),
        (None, Network::Vpc) => Err(EndpointError::VpcStsNeedsRegion),
    }
}

/// Parses an endpoint override: an absolute `http` or `https` URL without query or fragment.
/// A bare host (`ecs.example.com`) is taken as `https://ecs.example.com`.
pub fn parse_endpoint(endpoint: &str) -> Result<Url, EndpointError> {
    let invalid = |reason: &str| EndpointError::InvalidUrl {
        endpoint: endpoint.to_owned(),
        reason: reason.to_owned(),
    };
    let trimmed = endpoint.trim();
    let with_scheme = if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("https://{trimmed}")
    };
    let url = Url::parse(&with_scheme).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("it has no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("it must not have a query or fragment"));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regional_endpoints_with_the_hangzhou_exception() {
        let get = |r, n| ecs_endpoint(r, n).unwrap().to_string();
        assert_eq!(
            get("cn-beijing", Network::Public),
            "https://ecs.cn-beijing.aliyuncs.com/"
        );
        assert_eq!(
            get("cn-hangzhou", Network::Public),
            "https://ecs-cn-hangzhou.aliyuncs.com/"
        );
        assert_eq!(
            get("cn-hangzhou", Network::Vpc),
            "https://ecs-vpc.cn-hangzhou.aliyuncs.com/"
        );
        assert_eq!(
            get("eu-central-1", Network::Vpc),
            "https://ecs-vpc.eu-central-1.aliyuncs.com/"
        );
    }

    #[test]
    fn sts_endpoints() {
        assert_eq!(
            sts_endpoint(None, Network::Public).unwrap().as_str(),
            "https://sts.aliyuncs.com/"
        );
        assert_eq!(
            sts_endpoint(Some("cn-shanghai"), Network::Public)
                .unwrap()
                .as_str(),
            "https://sts.cn-shanghai.aliyuncs.com/"
        );
        assert_eq!(
            sts_endpoint(Some("cn-shanghai"), Network::Vpc)
                .unwrap()
                .as_str(),
            "https://sts-vpc.cn-shanghai.aliyuncs.com/"
        );
        assert_eq!(
            sts_endpoint(None, Network::Vpc).unwrap_err(),
            EndpointError::VpcStsNeedsRegion
        );
        assert!(sts_endpoint(Some("x/y"), Network::Vpc).is_err());
    }

    #[test]
    fn overrides_accept_http_and_bare_hosts() {
        assert_eq!(
            parse_endpoint("http://127.0.0.1:8080").unwrap().as_str(),
            "http://127.0.0.1:8080/"
        );
        assert_eq!(
            parse_endpoint("ecs.internal.example").unwrap().as_str(),
            "https://ecs.internal.example/"
        );
    }

    #[test]
    fn rejects_bad_regions_and_urls() {
        assert!(ecs_endpoint("cn hangzhou", Network::Public).is_err());
        assert!(ecs_endpoint("", Network::Public).is_err());
        assert!(ecs_endpoint("evil.com/x", Network::Public).is_err());
        assert!(parse_endpoint("ftp://host").is_err());
        assert!(parse_endpoint("http://host/?a=b").is_err());
        let message = parse_endpoint("http://").unwrap_err().to_string();
        assert!(message.contains("expected an absolute URL"), "{message}");
    }
}
