//! The resource groups of a mock account (Resource Management is not mocked): every account
//! has the default group and two more, with fixed IDs, so `ResourceGroupId` and
//! `JoinResourceGroup` can be checked the way ECS checks them against the account's groups.

use crate::error::ErrorResponse;

/// The account's default resource group: where a resource lands without `ResourceGroupId`.
pub const DEFAULT: &str = "rg-acfmzw2jz2z3default";

/// The groups besides the default one.
pub const OTHERS: [&str; 2] = ["rg-aek2teamaprod0001", "rg-aek2teambtest0002"];

/// `InvalidResourceGroup.NotFound` (404): no such group in the account (the code and message
/// ECS's reference lists for `ResourceGroupId`).
pub fn not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidResourceGroup.NotFound",
        "The ResourceGroup provided does not exist in our records.",
    )
}

/// The group `id` names (the default one when `None`), or `InvalidResourceGroup.NotFound`.
pub fn resolve(id: Option<&str>) -> Result<&'static str, ErrorResponse> {
    match id {
        None => Ok(DEFAULT),
        Some(id) => std::iter::once(DEFAULT)
            .chain(OTHERS)
            .find(|g| *g == id)
            .ok_or_else(not_found),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_groups_resolve_and_others_are_refused() {
        assert_eq!(resolve(None).unwrap(), DEFAULT);
        assert_eq!(resolve(Some(OTHERS[1])).unwrap(), OTHERS[1]);
        assert_eq!(
            resolve(Some("rg-nope")).unwrap_err().code,
            "InvalidResourceGroup.NotFound"
        );
    }
}
