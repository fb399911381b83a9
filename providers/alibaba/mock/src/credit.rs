//! The CPU credit mode (`CreditSpecification`) of burstable instances: `Standard` or
//! `Unlimited`, only for the burstable families (`ecs.t5`, `ecs.t6`). ECS answers
//! `InvalidParameter.CreditSpecification` both for a value it does not know and for a type
//! that has no credit mode.

use crate::catalog::InstanceType;
use crate::error::ErrorResponse;

/// The mode a burstable instance gets when RunInstances names none.
pub const DEFAULT_MODE: &str = "Standard";

/// True for the burstable families, whose CPU runs on credits.
pub fn is_burstable(instance_type: &InstanceType) -> bool {
    ["ecs.t5-", "ecs.t6-"]
        .iter()
        .any(|family| instance_type.id.starts_with(family))
}

fn refused() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidParameter.CreditSpecification",
        "The specified CreditSpecification is not supported in this region.",
    )
}

/// `requested` checked against `instance_type`: the mode to keep, or the refusal.
pub fn check(instance_type: &InstanceType, requested: &str) -> Result<&'static str, ErrorResponse> {
    let mode = ["Standard", "Unlimited"]
        .into_iter()
        .find(|m| *m == requested)
        .ok_or_else(refused)?;
    if !is_burstable(instance_type) {
        return Err(refused());
    }
    Ok(mode)
}

/// The mode of a new instance: the requested one (checked), the default for a burstable type,
/// none for the others.
pub fn at_launch(
    instance_type: &InstanceType,
    requested: Option<&str>,
) -> Result<Option<&'static str>, ErrorResponse> {
    match requested {
        Some(r) => check(instance_type, r).map(Some),
        None => Ok(is_burstable(instance_type).then_some(DEFAULT_MODE)),
    }
}

/// The mode after a type change: kept between burstable types, the default when becoming
/// burstable, none otherwise.
pub fn after_type_change(
    new_type: &InstanceType,
    current: Option<&'static str>,
) -> Option<&'static str> {
    is_burstable(new_type).then(|| current.unwrap_or(DEFAULT_MODE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    fn t(id: &str) -> &'static InstanceType {
        catalog::instance_type(id).expect("type in the catalogue")
    }

    #[test]
    fn burstable_types_take_either_mode_and_default_to_standard() {
        assert_eq!(check(t("ecs.t6-c1m1.large"), "Unlimited"), Ok("Unlimited"));
        assert_eq!(check(t("ecs.t5-lc1m1.small"), "Standard"), Ok("Standard"));
        assert_eq!(
            at_launch(t("ecs.t5-lc1m1.small"), None),
            Ok(Some("Standard"))
        );
    }

    #[test]
    fn other_types_and_unknown_modes_are_refused_with_ecs_code() {
        let err = check(t("ecs.g6.large"), "Unlimited").unwrap_err();
        assert_eq!(err.code, "InvalidParameter.CreditSpecification");
        let err = check(t("ecs.t6-c1m1.large"), "unlimited").unwrap_err();
        assert_eq!(err.code, "InvalidParameter.CreditSpecification");
        assert_eq!(at_launch(t("ecs.g6.large"), None), Ok(None));
    }

    #[test]
    fn a_type_change_keeps_the_mode_only_between_burstable_types() {
        assert_eq!(
            after_type_change(t("ecs.t5-c1m2.large"), Some("Unlimited")),
            Some("Unlimited")
        );
        assert_eq!(
            after_type_change(t("ecs.g6.large"), Some("Unlimited")),
            None
        );
        assert_eq!(
            after_type_change(t("ecs.t6-c1m1.large"), None),
            Some("Standard")
        );
    }
}
