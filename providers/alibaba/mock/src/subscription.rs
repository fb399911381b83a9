//! Subscription (`PrePaid`) terms of RunInstances: `Period` in `PeriodUnit`, `AutoRenew` and
//! `AutoRenewPeriod`, with ECS's ranges and codes, and the expiry they give.

use jiff::{Span, Timestamp, ToSpan as _, Zoned, tz::TimeZone};

use crate::error::ErrorResponse;
use crate::launch_spec::LaunchSpec;

/// `Period` values ECS accepts per unit.
const MONTHS: &[u32] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 24, 36, 48, 60];
const WEEKS: &[u32] = &[1, 2, 3, 4];
/// `AutoRenewPeriod` values per unit.
const RENEW_MONTHS: &[u32] = &[1, 2, 3, 6, 12, 24, 36, 48, 60];
const RENEW_WEEKS: &[u32] = &[1, 2, 3];

/// The ID of the order a billable change makes (a new subscription, a change of billing method
/// or of a subscription's bandwidth): the millisecond it was placed, fifteen digits wide.
pub fn order_id(now: Timestamp) -> String {
    format!("{:015}", now.as_millisecond())
}

/// The unit of a subscription period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeriodUnit {
    Month,
    Week,
}

/// The terms of a subscription instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subscription {
    pub period: u32,
    pub unit: PeriodUnit,
    pub auto_renew: bool,
    pub auto_renew_period: u32,
}

impl Subscription {
    /// The terms for a `PrePaid` launch (`None` for `PostPaid`, whose period parameters ECS
    /// ignores). `Period` is required (ECS answers the misspelt code `MissingParamter`, as it
    /// documents); values outside ECS's lists are `InvalidPeriod` /
    /// `InvalidAutoRenewPeriod.ValueNotSupported`; spot instances cannot be `PrePaid`.
    pub fn resolve(
        spec: &LaunchSpec,
        charge_type: &str,
        spot_strategy: &str,
    ) -> Result<Option<Self>, ErrorResponse> {
        if charge_type != "PrePaid" {
            return Ok(None);
        }
        if spot_strategy != "NoSpot" {
            return Err(ErrorResponse::bad_request(
                "InvalidSpotPrepaid",
                "The specified Spot type is not support PrePay Instance.",
            ));
        }
        let unit = match spec.period_unit.as_deref() {
            None | Some("Month") => PeriodUnit::Month,
            Some("Week") => PeriodUnit::Week,
            Some(_) => {
                return Err(ErrorResponse::bad_request(
                    "InvalidPeriodUnit.ValueNotSupported",
                    "The specified PeriodUnit is not valid: use Month or Week.",
                ));
            }
        };
        let Some(period) = spec.period else {
            return Err(ErrorResponse::bad_request(
                "MissingParamter",
                "The specified parameter \"Period\" is not null.",
            ));
        };
        let (periods, renewals) = match unit {
            PeriodUnit::Month => (MONTHS, RENEW_MONTHS),
            PeriodUnit::Week => (WEEKS, RENEW_WEEKS),
        };
        if !periods.contains(&period) {
            return Err(ErrorResponse::bad_request(
                "InvalidPeriod",
                format!(
                    "The specified period is not valid: for PeriodUnit {unit:?} use one of {periods:?}."
                ),
            ));
        }
        let auto_renew_period = spec.auto_renew_period.unwrap_or(1);
        if spec.auto_renew && !renewals.contains(&auto_renew_period) {
            return Err(ErrorResponse::bad_request(
                "InvalidAutoRenewPeriod.ValueNotSupported",
                format!(
                    "The specified autoRenewPeriod is invalid: for PeriodUnit {unit:?} use one of {renewals:?}."
                ),
            ));
        }
        Ok(Some(Self {
            period,
            unit,
            auto_renew: spec.auto_renew,
            auto_renew_period,
        }))
    }

    /// When a subscription bought at `start` expires.
    pub fn expiry(&self, start: Timestamp) -> Timestamp {
        let span: Span = match self.unit {
            PeriodUnit::Month => i64::from(self.period).months(),
            PeriodUnit::Week => i64::from(self.period).weeks(),
        };
        let zoned: Zoned = start.to_zoned(TimeZone::UTC);
        zoned
            .checked_add(span)
            .map(|z| z.timestamp())
            .unwrap_or(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepaid(period: Option<u32>, unit: Option<&str>) -> LaunchSpec {
        LaunchSpec {
            instance_charge_type: Some("PrePaid".into()),
            period,
            period_unit: unit.map(str::to_owned),
            ..LaunchSpec::default()
        }
    }

    fn code(spec: &LaunchSpec) -> String {
        Subscription::resolve(spec, "PrePaid", "NoSpot")
            .unwrap_err()
            .code
            .into_owned()
    }

    #[test]
    fn period_rules() {
        assert_eq!(code(&prepaid(None, None)), "MissingParamter");
        assert_eq!(code(&prepaid(Some(10), None)), "InvalidPeriod");
        assert_eq!(code(&prepaid(Some(5), Some("Week"))), "InvalidPeriod");
        assert_eq!(
            code(&prepaid(Some(1), Some("Year"))),
            "InvalidPeriodUnit.ValueNotSupported"
        );
        let renew = LaunchSpec {
            auto_renew: true,
            auto_renew_period: Some(4),
            ..prepaid(Some(1), None)
        };
        assert_eq!(code(&renew), "InvalidAutoRenewPeriod.ValueNotSupported");
        assert_eq!(
            Subscription::resolve(&prepaid(Some(1), None), "PrePaid", "SpotAsPriceGo")
                .unwrap_err()
                .code,
            "InvalidSpotPrepaid"
        );
        assert!(
            Subscription::resolve(&prepaid(None, None), "PostPaid", "NoSpot")
                .unwrap()
                .is_none()
        );
        let s = Subscription::resolve(&prepaid(Some(2), Some("Week")), "PrePaid", "NoSpot")
            .unwrap()
            .unwrap();
        let start: Timestamp = "2026-01-31T10:00:00Z".parse().unwrap();
        assert_eq!(s.expiry(start).to_string(), "2026-02-14T10:00:00Z");
        let m = Subscription::resolve(&prepaid(Some(1), None), "PrePaid", "NoSpot")
            .unwrap()
            .unwrap();
        assert_eq!(m.expiry(start).to_string(), "2026-02-28T10:00:00Z");
    }
}
