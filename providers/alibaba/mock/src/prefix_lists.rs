//! ECS prefix lists (`pl-…`): named sets of CIDR blocks of one address family that security
//! group rules name as their peer (`SourcePrefixListId` / `DestPrefixListId`). The rules of the
//! API reference (CreatePrefixList, ModifyPrefixList): the family and `MaxEntries` (1 to 200)
//! are fixed at creation, entries are blocks of that family in canonical form (host bits zero),
//! never duplicated and never more than `MaxEntries`. Whether a list is in use is read from the
//! rules that name it (`crate::prefix_list_actions`), so a list keeps no back references.

use std::collections::{BTreeMap, HashMap};
use std::net::Ipv6Addr;
use std::sync::Arc;

use jiff::Timestamp;

use crate::cidr::Cidr;
use crate::error::ErrorResponse;
use crate::tags::Tags;

/// Largest `MaxEntries` (API reference: 1 to 200).
pub const MAX_ENTRIES_LIMIT: u32 = 200;

/// `InvalidPrefixListId.NotFound` (404), as AuthorizeSecurityGroup, DeletePrefixList, ModifyPrefixList
/// and DescribePrefixListAssociations answer it.
pub fn prefix_list_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidPrefixListId.NotFound",
        "The specified prefix list was not found.",
    )
}

/// `LimitExceed.MaxEntries` (400).
pub fn too_many_entries() -> ErrorResponse {
    ErrorResponse::bad_request(
        "LimitExceed.MaxEntries",
        "The number of entries exceeds the MaxEntries of the specified prefix list.",
    )
}

fn cidr_malformed(name: &str, family: AddressFamily) -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidParameter.CidrMalformed",
        format!(
            "The specified parameter \"{name}\" is not a valid {} CIDR block in canonical form (host bits zero, e.g. 10.0.0.0/8).",
            family.as_str()
        ),
    )
}

/// `InvalidParameter.CidrDuplicated` (400).
pub fn cidr_duplicated(cidr: &str) -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidParameter.CidrDuplicated",
        format!("The CIDR block {cidr} is given more than once."),
    )
}

/// A prefix list's address family, fixed at creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressFamily {
    Ipv4,
    Ipv6,
}

impl AddressFamily {
    /// `IPv4` or `IPv6` (exactly: the API answers `InvalidParameter.AddressFamily` otherwise).
    pub fn parse(text: &str) -> Result<Self, ErrorResponse> {
        match text {
            "IPv4" => Ok(Self::Ipv4),
            "IPv6" => Ok(Self::Ipv6),
            _ => Err(ErrorResponse::bad_request(
                "InvalidParameter.AddressFamily",
                "The parameter AddressFamily should be IPv4 or IPv6.",
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ipv4 => "IPv4",
            Self::Ipv6 => "IPv6",
        }
    }

    /// `text` in canonical form (`10.0.0.1` is `10.0.0.1/32`, `2001:DB8:0::/32` is
    /// `2001:db8::/32`), so two spellings of one block are one entry; `None` when it is not a
    /// block of this family with its host bits zero.
    pub fn canonical(self, text: &str) -> Option<String> {
        match self {
            Self::Ipv4 => Cidr::parse(text, false).map(|c| c.to_string()),
            Self::Ipv6 => {
                let (addr, prefix) = text.split_once('/').unwrap_or((text, "128"));
                let addr: Ipv6Addr = addr.parse().ok()?;
                let prefix: u8 = prefix.parse().ok().filter(|p| *p <= 128)?;
                let host_mask = u128::MAX.checked_shr(u32::from(prefix)).unwrap_or(0);
                (u128::from(addr) & host_mask == 0).then(|| format!("{addr}/{prefix}"))
            }
        }
    }
}

/// One entry: a block and its description.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Entry {
    pub cidr: String,
    pub description: String,
}

/// A prefix list.
#[derive(Debug, Clone)]
pub struct PrefixList {
    pub id: String,
    pub region_id: &'static str,
    pub name: String,
    pub description: String,
    pub family: AddressFamily,
    pub max_entries: u32,
    /// By canonical block, so the answers list them in a stable order.
    pub entries: BTreeMap<String, Entry>,
    pub resource_group_id: String,
    pub tags: Tags,
    pub created_at: Timestamp,
}

/// The name rule (CreatePrefixList / ModifyPrefixList): 2 to 128 characters, starting with a
/// letter, not with `http://`, `https://`, `com.aliyun` or `com.alibabacloud`; letters, digits,
/// `:`, `_`, `.` and `-`.
pub fn check_name(name: &str) -> Result<(), ErrorResponse> {
    let length = name.chars().count();
    let ok = (2..=128).contains(&length)
        && name.chars().next().is_some_and(char::is_alphabetic)
        && !["http://", "https://", "com.aliyun", "com.alibabacloud"]
            .iter()
            .any(|p| name.starts_with(p))
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ':' | '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(ErrorResponse::bad_request(
            "InvalidParameter.PrefixListName",
            "The parameter PrefixListName is not valid: 2 to 128 characters starting with a letter (letters, digits, :, _, . and -), not starting with http://, https://, com.aliyun or com.alibabacloud.",
        ))
    }
}

/// The list's description: 2 to 256 characters, not starting with `http://` or `https://`.
pub fn check_description(description: &str) -> Result<(), ErrorResponse> {
    let length = description.chars().count();
    if (2..=256).contains(&length)
        && !description.starts_with("http://")
        && !description.starts_with("https://")
    {
        Ok(())
    } else {
        Err(ErrorResponse::bad_request(
            "InvalidDescription.Malformed",
            "The specified Description is wrongly formed: 2 to 256 characters, not starting with http:// or https://.",
        ))
    }
}

/// An entry's description: 2 to 32 characters, not starting with `http://` or `https://`.
fn check_entry_description(name: &str, description: &str) -> Result<(), ErrorResponse> {
    let length = description.chars().count();
    if (2..=32).contains(&length)
        && !description.starts_with("http://")
        && !description.starts_with("https://")
    {
        Ok(())
    } else {
        Err(ErrorResponse::invalid(name))
    }
}

/// One entry given as `<prefix>.N.Cidr` (named `cidr_name`) with its optional description.
pub fn entry(
    family: AddressFamily,
    cidr_name: &str,
    cidr: &str,
    description_name: &str,
    description: Option<&str>,
) -> Result<Entry, ErrorResponse> {
    let cidr = family
        .canonical(cidr)
        .ok_or_else(|| cidr_malformed(cidr_name, family))?;
    if let Some(d) = description {
        check_entry_description(description_name, d)?;
    }
    Ok(Entry {
        cidr,
        description: description.unwrap_or_default().to_owned(),
    })
}

/// Entries by block; a block given twice is `InvalidParameter.CidrDuplicated`.
pub fn keyed(entries: Vec<Entry>) -> Result<BTreeMap<String, Entry>, ErrorResponse> {
    let mut out = BTreeMap::new();
    for e in entries {
        if out.contains_key(&e.cidr) {
            return Err(cidr_duplicated(&e.cidr));
        }
        out.insert(e.cidr.clone(), e);
    }
    Ok(out)
}

/// Every account's prefix lists, with the answers of their create calls by ClientToken.
#[derive(Debug, Default)]
pub struct PrefixListStore {
    lists: HashMap<Arc<str>, BTreeMap<String, PrefixList>>,
    tokens: HashMap<(Arc<str>, String), (u64, String)>,
}

impl PrefixListStore {
    /// The account's list `id` in `region_id`, or `InvalidPrefixListId.NotFound`.
    pub fn get(
        &self,
        account: &str,
        region_id: &str,
        id: &str,
    ) -> Result<&PrefixList, ErrorResponse> {
        self.lists
            .get(account)
            .and_then(|l| l.get(id))
            .filter(|l| l.region_id == region_id)
            .ok_or_else(prefix_list_not_found)
    }

    pub fn get_mut(
        &mut self,
        account: &str,
        region_id: &str,
        id: &str,
    ) -> Result<&mut PrefixList, ErrorResponse> {
        self.lists
            .get_mut(account)
            .and_then(|l| l.get_mut(id))
            .filter(|l| l.region_id == region_id)
            .ok_or_else(prefix_list_not_found)
    }

    /// The account's lists in `region_id`, oldest ID first.
    pub fn in_region<'a>(
        &'a self,
        account: &str,
        region_id: &'a str,
    ) -> impl Iterator<Item = &'a PrefixList> + 'a {
        self.lists
            .get(account)
            .into_iter()
            .flat_map(|l| l.values())
            .filter(move |l| l.region_id == region_id)
    }

    /// The ID an earlier create with `token` answered (same parameters, fingerprint `print`);
    /// `IdempotentParameterMismatch` when the parameters differ.
    pub fn replay(
        &self,
        account: &Arc<str>,
        token: Option<&str>,
        print: u64,
    ) -> Result<Option<String>, ErrorResponse> {
        let Some(token) = token else { return Ok(None) };
        match self.tokens.get(&(account.clone(), token.to_owned())) {
            None => Ok(None),
            Some((earlier, id)) if *earlier == print => Ok(Some(id.clone())),
            Some(_) => Err(crate::idempotency::idempotent_mismatch()),
        }
    }

    pub fn insert(
        &mut self,
        account: &Arc<str>,
        token: Option<&str>,
        print: u64,
        list: PrefixList,
    ) {
        if let Some(token) = token {
            self.tokens.insert(
                (account.clone(), token.to_owned()),
                (print, list.id.clone()),
            );
        }
        self.lists
            .entry(account.clone())
            .or_default()
            .insert(list.id.clone(), list);
    }

    pub fn remove(&mut self, account: &str, id: &str) {
        if let Some(lists) = self.lists.get_mut(account) {
            lists.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_canonical_per_family() {
        let v4 = AddressFamily::Ipv4;
        assert_eq!(v4.canonical("10.0.0.0/8").as_deref(), Some("10.0.0.0/8"));
        assert_eq!(v4.canonical("10.0.0.1").as_deref(), Some("10.0.0.1/32"));
        assert_eq!(v4.canonical("10.0.0.1/8"), None);
        assert_eq!(v4.canonical("2001:db8::/32"), None);
        let v6 = AddressFamily::Ipv6;
        assert_eq!(
            v6.canonical("2001:FD01:0:0:0:0:0:0/32").as_deref(),
            Some("2001:fd01::/32")
        );
        assert_eq!(v6.canonical("2001:db8::1/32"), None);
        assert_eq!(v6.canonical("10.0.0.0/8"), None);
        let twice = vec![
            entry(v4, "Entry.1.Cidr", "10.0.0.1", "", None).unwrap(),
            entry(v4, "Entry.2.Cidr", "10.0.0.1/32", "", None).unwrap(),
        ];
        assert_eq!(
            keyed(twice).unwrap_err().code,
            "InvalidParameter.CidrDuplicated"
        );
    }

    #[test]
    fn names_follow_the_api_rule() {
        assert!(check_name("office-v4").is_ok());
        assert!(check_name("o").is_err());
        assert!(check_name("1office").is_err());
        assert!(check_name("com.aliyun.x").is_err());
        assert!(check_name("office list").is_err());
    }
}
