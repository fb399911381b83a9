//! What the SNAT and DNAT entry actions share: the entry name rule, the table that must be
//! quiet (no entry `Pending` or `Modifying`), the gateway that must be `Available`, and the
//! public addresses an internet gateway may use (its bound EIPs).

use jiff::Timestamp;

use crate::error::ErrorResponse;
use crate::nat_gateways::{NatGateway, incorrect_gateway_status};
use crate::store::Store;

/// An entry's name: 2–128 characters, starting with a letter, not with `http://`/`https://`.
pub fn check_entry_name(name: Option<&str>) -> Result<(), ErrorResponse> {
    let Some(n) = name else {
        return Ok(());
    };
    let fine = (2..=128).contains(&n.chars().count())
        && n.chars().next().is_some_and(char::is_alphabetic)
        && !n.starts_with("http://")
        && !n.starts_with("https://");
    if fine {
        Ok(())
    } else {
        Err(ErrorResponse::bad_request(
            "InvalidParameter.Name.Malformed",
            "The specified Name is not valid: 2 to 128 characters, starting with a letter, not with http:// or https://.",
        ))
    }
}

/// The gateway, which must be `Available` for its entries to change.
pub fn available(g: &NatGateway, now: Timestamp) -> Result<(), ErrorResponse> {
    if g.status(now) == "Available" {
        Ok(())
    } else {
        Err(incorrect_gateway_status())
    }
}

/// Whether `ip` is the address of an EIP bound (and settled) to gateway `g`.
pub fn bound_ip(store: &Store, g: &NatGateway, ip: &str, now: Timestamp) -> bool {
    store
        .eips
        .bound_all(&g.id, now)
        .iter()
        .any(|e| e.status(now) == "InUse" && e.ip.to_string() == ip)
}

/// `IncorretSnatEntryStatus` (sic, as the API spells it).
pub fn snat_table_busy() -> ErrorResponse {
    ErrorResponse::bad_request(
        "IncorretSnatEntryStatus",
        "Some Snat entry status blocked this operation: an entry of the table is Pending or Modifying; retry when it is Available.",
    )
}

/// `IncorretForwardEntryStatus` (sic, as the API spells it).
pub fn forward_table_busy() -> ErrorResponse {
    ErrorResponse::bad_request(
        "IncorretForwardEntryStatus",
        "Some Forward entry status blocked this operation: an entry of the table is Pending or Modifying; retry when it is Available.",
    )
}
