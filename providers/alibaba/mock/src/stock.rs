//! Capacity per (zone, instance type): how many more instances of a type a zone can launch.
//!
//! ECS sells out per zone and type (`OperationDenied.NoStock`: "The requested resource is sold
//! out in the specified zone; try other types of resources or other regions and zones"). A
//! (zone, type) pair without a limit here has unlimited stock (the catalogue's permanently
//! out-of-stock type aside). A limit counts down with every instance launched there; releases do
//! not give stock back, as a sold-out zone in ECS is not refilled by one account's releases.
//! Limits are set through `POST /_mock/stock` or `ferroplane ecs-mock --stock`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ErrorResponse;

/// One limit: `available` more instances of `instance_type` in `zone_id`; `None` removes the
/// limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StockLimit {
    /// A zone ID, e.g. `cn-hangzhou-b`.
    pub zone_id: String,
    /// An instance type, e.g. `ecs.g6.large`.
    pub instance_type: String,
    /// Instances that can still be launched; `None` for unlimited.
    pub available: Option<u32>,
}

impl StockLimit {
    /// Parses `ZONE/TYPE=N` (or `ZONE/TYPE=unlimited`), the flag's form.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (place, count) = text.split_once('=').ok_or_else(|| {
            format!("{text:?}: expected ZONE/TYPE=N, e.g. cn-hangzhou-b/ecs.g6.large=0")
        })?;
        let (zone_id, instance_type) = place.split_once('/').ok_or_else(|| {
            format!("{text:?}: expected ZONE/TYPE=N, e.g. cn-hangzhou-b/ecs.g6.large=0")
        })?;
        let available =
            if count == "unlimited" {
                None
            } else {
                Some(count.parse::<u32>().map_err(|e| {
                    format!("{text:?}: the count must be a number or `unlimited`: {e}")
                })?)
            };
        Ok(Self {
            zone_id: zone_id.to_owned(),
            instance_type: instance_type.to_owned(),
            available,
        })
    }
}

/// The limits in force.
#[derive(Debug, Default)]
pub struct Stock {
    limits: BTreeMap<(String, String), u32>,
}

impl Stock {
    /// Sets or removes one limit.
    pub fn set(&mut self, limit: &StockLimit) {
        let key = (limit.zone_id.clone(), limit.instance_type.clone());
        match limit.available {
            Some(n) => {
                self.limits.insert(key, n);
            }
            None => {
                self.limits.remove(&key);
            }
        }
    }

    /// Every limit in force.
    pub fn limits(&self) -> Vec<StockLimit> {
        self.limits
            .iter()
            .map(|((zone_id, instance_type), n)| StockLimit {
                zone_id: zone_id.clone(),
                instance_type: instance_type.clone(),
                available: Some(*n),
            })
            .collect()
    }

    /// Whether `amount` instances fit; ECS launches all of a RunInstances call or none
    /// (`MinAmount` aside, which the mock does not serve).
    pub fn check(
        &self,
        zone_id: &str,
        instance_type: &str,
        amount: usize,
    ) -> Result<(), ErrorResponse> {
        match self
            .limits
            .get(&(zone_id.to_owned(), instance_type.to_owned()))
        {
            Some(&n) if (n as usize) < amount => Err(ErrorResponse::no_stock()),
            _ => Ok(()),
        }
    }

    /// Counts `amount` launched instances against the limit, if any.
    pub fn take(&mut self, zone_id: &str, instance_type: &str, amount: usize) {
        if let Some(n) = self
            .limits
            .get_mut(&(zone_id.to_owned(), instance_type.to_owned()))
        {
            *n = n.saturating_sub(u32::try_from(amount).unwrap_or(u32::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_counts_down_and_then_refuses_with_no_stock() {
        let mut stock = Stock::default();
        stock.set(&StockLimit::parse("cn-hangzhou-b/ecs.g6.large=2").unwrap());
        assert!(stock.check("cn-hangzhou-b", "ecs.g6.large", 3).is_err());
        stock.check("cn-hangzhou-b", "ecs.g6.large", 2).unwrap();
        stock.take("cn-hangzhou-b", "ecs.g6.large", 2);
        let refused = stock.check("cn-hangzhou-b", "ecs.g6.large", 1).unwrap_err();
        assert_eq!(refused.code, "OperationDenied.NoStock");
        // Other zones and types are unlimited.
        stock.check("cn-hangzhou-g", "ecs.g6.large", 100).unwrap();
        stock.check("cn-hangzhou-b", "ecs.c6.large", 100).unwrap();
        stock.set(&StockLimit::parse("cn-hangzhou-b/ecs.g6.large=unlimited").unwrap());
        stock.check("cn-hangzhou-b", "ecs.g6.large", 100).unwrap();
        assert!(stock.limits().is_empty());
    }

    #[test]
    fn the_flag_form_is_checked() {
        assert!(StockLimit::parse("cn-hangzhou-b=0").is_err());
        assert!(StockLimit::parse("cn-hangzhou-b/ecs.g6.large").is_err());
        assert!(StockLimit::parse("cn-hangzhou-b/ecs.g6.large=-1").is_err());
    }
}
