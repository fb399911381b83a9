//! What etcd's JSON gateway answers, as serde reads it: uint64 IDs travel as decimal strings.
//! A ground floor of the gateway client.

use serde::Deserialize;
use serde_json::Value;

use super::api::Member;
use super::error::MembershipError;

/// `value` as `T`; what does not fit is a [`MembershipError::Decode`] of `action`.
pub(super) fn decode<T: for<'de> Deserialize<'de>>(
    action: &'static str,
    value: Value,
) -> Result<T, MembershipError> {
    serde_json::from_value(value).map_err(|e| MembershipError::Decode {
        endpoint: String::new(),
        action,
        detail: e.to_string(),
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireMember {
    #[serde(rename = "ID", with = "u64_string")]
    pub(super) id: u64,
    #[serde(default)]
    pub(super) name: String,
    #[serde(default, rename = "peerURLs")]
    pub(super) peer_urls: Vec<String>,
    #[serde(default, rename = "clientURLs")]
    pub(super) client_urls: Vec<String>,
    #[serde(default)]
    pub(super) is_learner: bool,
}

impl From<WireMember> for Member {
    fn from(m: WireMember) -> Self {
        Member {
            id: m.id,
            name: m.name,
            peer_urls: m.peer_urls,
            client_urls: m.client_urls,
            is_learner: m.is_learner,
        }
    }
}

#[derive(Deserialize)]
pub(super) struct MemberList {
    #[serde(default)]
    pub(super) members: Vec<WireMember>,
}

#[derive(Deserialize)]
pub(super) struct MemberAdd {
    pub(super) member: WireMember,
}

#[derive(Deserialize)]
pub(super) struct WireHeader {
    #[serde(with = "u64_string")]
    pub(super) member_id: u64,
    #[serde(default, with = "u64_string")]
    pub(super) revision: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireStatus {
    pub(super) header: WireHeader,
    #[serde(default)]
    pub(super) version: String,
    #[serde(default, with = "u64_string")]
    pub(super) leader: u64,
    #[serde(default, with = "u64_string")]
    pub(super) raft_index: u64,
    #[serde(default)]
    pub(super) is_learner: bool,
    #[serde(default)]
    pub(super) errors: Vec<String>,
    #[serde(default, with = "u64_string")]
    pub(super) db_size: u64,
    #[serde(default, with = "u64_string")]
    pub(super) db_size_in_use: u64,
}

/// uint64 fields: etcd's gateway writes them as strings; accept numbers too.
mod u64_string {
    use serde::{Deserialize, Deserializer, de::Error};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Text(String),
            Number(u64),
        }
        match Wire::deserialize(d)? {
            Wire::Text(text) => text
                .parse()
                .map_err(|_| D::Error::custom(format!("{text:?} is not a uint64"))),
            Wire::Number(n) => Ok(n),
        }
    }
}
