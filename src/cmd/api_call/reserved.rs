//! Request parameters the client sets itself: the action, the API version and the parameters
//! of the signature. A `--param` naming one would reach the server next to the client's own
//! value and fail as a signature mismatch, which points nowhere near the cause; instead it is
//! honoured when it says what the client sends anyway (the API's own `Version`) and otherwise
//! refused before anything is sent, naming the parameter and what sets it.

use std::fmt;

use super::product::Product;

/// Parameters of V1 signing and of the credentials, with what sets each.
const SET_BY_THE_CLIENT: &[(&str, &str)] = &[
    ("Format", "the client always asks for JSON"),
    ("Timestamp", "the client stamps every request"),
    (
        "SignatureNonce",
        "the client draws a new nonce for every request",
    ),
    ("Signature", "the client signs every request"),
    (
        "SignatureMethod",
        "the client signs with HMAC-SHA1 (V1) or ACS3-HMAC-SHA256 (V3)",
    ),
    (
        "SignatureVersion",
        "choose the signature with --signature v1|v3",
    ),
    (
        "AccessKeyId",
        "the access key comes from ALIBABA_CLOUD_ACCESS_KEY_ID",
    ),
    (
        "SecurityToken",
        "an STS token comes from ALIBABA_CLOUD_SECURITY_TOKEN",
    ),
];

/// A `--param` the client will not send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReservedParam {
    /// `Version` other than the version of the API called.
    OtherVersion {
        given: String,
        value: String,
        product: Product,
    },
    /// `Action`: the action is the positional argument.
    Action { given: String, value: String },
    /// A parameter of the signature or the credentials.
    SetByClient { given: String, by: &'static str },
}

impl fmt::Display for ReservedParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReservedParam::OtherVersion {
                given,
                value,
                product,
            } => {
                write!(
                    f,
                    "--param {given}={value}: the API version is set by the API called \
                     ({} API {}); ",
                    product.name(),
                    product.api_version()
                )?;
                match Product::ALL.iter().find(|p| p.api_version() == value) {
                    Some(other) => write!(
                        f,
                        "to call the {} API, use `ferroplane cloud call --product {}` without \
                         --param {given}",
                        other.name(),
                        other.name()
                    ),
                    None => write!(
                        f,
                        "remove --param {given}; the APIs reachable are {}",
                        Product::ALL
                            .iter()
                            .map(|p| format!("{} ({})", p.name(), p.api_version()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
            }
            ReservedParam::Action { given, value } => write!(
                f,
                "--param {given}={value}: the action is the ACTION argument (`call {value}`), \
                 not a parameter; remove --param {given}"
            ),
            ReservedParam::SetByClient { given, by } => write!(
                f,
                "--param {given}: the client sets this parameter ({by}); remove --param {given}"
            ),
        }
    }
}

impl std::error::Error for ReservedParam {}

/// The parameters to send: `params` without a `Version` equal to `product`'s, or the first
/// parameter the client will not send. Names are compared without case, so `version=...` is
/// caught too.
pub fn checked(
    product: Product,
    params: Vec<(String, String)>,
) -> Result<Vec<(String, String)>, ReservedParam> {
    let mut kept = Vec::with_capacity(params.len());
    for (given, value) in params {
        if given.eq_ignore_ascii_case("Version") {
            if value == product.api_version() {
                continue;
            }
            return Err(ReservedParam::OtherVersion {
                given,
                value,
                product,
            });
        }
        if given.eq_ignore_ascii_case("Action") {
            return Err(ReservedParam::Action { given, value });
        }
        if let Some((_, by)) = SET_BY_THE_CLIENT
            .iter()
            .find(|(name, _)| given.eq_ignore_ascii_case(name))
        {
            return Err(ReservedParam::SetByClient { given, by });
        }
        kept.push((given, value));
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, value: &str) -> Vec<(String, String)> {
        vec![
            ("PageSize".to_owned(), "10".to_owned()),
            (name.to_owned(), value.to_owned()),
        ]
    }

    #[test]
    fn the_apis_own_version_is_honoured_and_ordinary_parameters_pass() {
        let kept = checked(Product::Vpc, param("Version", "2016-04-28")).unwrap();
        assert_eq!(kept, vec![("PageSize".to_owned(), "10".to_owned())]);
        assert_eq!(
            checked(Product::Ecs, param("RegionId", "cn-beijing"))
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn each_parameter_the_client_sets_is_refused_by_name() {
        let refused = checked(Product::Ecs, param("Version", "2016-04-28")).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("ferroplane cloud call --product vpc"),
            "{refused}"
        );
        let refused = checked(Product::Ecs, param("Version", "2099-01-01")).unwrap_err();
        assert!(
            refused.to_string().contains("vpc (2016-04-28)"),
            "{refused}"
        );
        let refused = checked(Product::Ecs, param("action", "DescribeVpcs")).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("--param action=DescribeVpcs"),
            "{refused}"
        );
        for (name, _) in SET_BY_THE_CLIENT {
            let refused = checked(Product::Vpc, param(name, "x")).unwrap_err();
            assert!(
                refused.to_string().starts_with(&format!("--param {name}:")),
                "{refused}"
            );
        }
        // The value of a credential parameter is not repeated in the message.
        let refused = checked(Product::Ecs, param("SecurityToken", "sts-secret")).unwrap_err();
        assert!(!refused.to_string().contains("sts-secret"), "{refused}");
    }
}
