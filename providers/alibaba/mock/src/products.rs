//! The three APIs on the mock's port, selected by a request's `Version`, and their action tables:
//! ECS (the instance actions of `ecs_actions` with the security-group, disk and key-pair tables),
//! VPC and STS. The tables are the one list of the actions served: the label a call is counted
//! under, the check that its API serves it and its dispatch all read them.

use crate::action::{Action, action_not_found};
use crate::catalog_actions;
use crate::disk_actions;
use crate::ecs_actions;
use crate::error::ErrorResponse;
use crate::instance_read_actions;
use crate::key_pair_actions;
use crate::prefix_list_actions;
use crate::security_group_actions;
use crate::security_group_change_actions;
use crate::sts_actions;
use crate::sts_actions::StsAction;
use crate::vpc_actions;

/// The action tables of the ECS API.
const ECS_TABLES: &[&[Action]] = &[
    ecs_actions::ACTIONS,
    instance_read_actions::ACTIONS,
    security_group_actions::ACTIONS,
    security_group_change_actions::ACTIONS,
    catalog_actions::ACTIONS,
    disk_actions::ACTIONS,
    key_pair_actions::ACTIONS,
    prefix_list_actions::ACTIONS,
];

/// The label of calls of actions no API serves.
pub const UNKNOWN_ACTION: &str = "Unknown";

/// An API the mock serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Product {
    Ecs,
    Vpc,
    Sts,
}

/// The handler an API has for an action.
#[derive(Clone, Copy)]
pub enum Route {
    /// An ECS or VPC action.
    Api(&'static Action),
    /// An STS action.
    Sts(&'static StsAction),
}

impl Product {
    /// The API of `version`; `InvalidVersion` for any other.
    pub fn of_version(version: &str) -> Result<Self, ErrorResponse> {
        match version {
            ecs_actions::VERSION => Ok(Self::Ecs),
            sts_actions::VERSION => Ok(Self::Sts),
            vpc_actions::VERSION => Ok(Self::Vpc),
            _ => Err(ErrorResponse::bad_request(
                "InvalidVersion",
                format!(
                    "Specified parameter Version is not valid: this endpoint serves ECS {}, VPC {} and STS {}.",
                    ecs_actions::VERSION,
                    vpc_actions::VERSION,
                    sts_actions::VERSION
                ),
            )),
        }
    }

    /// The product code Alibaba's troubleshooting page (an error's `Recommend`) names the API by.
    pub fn troubleshoot_name(self) -> &'static str {
        match self {
            Self::Ecs => "Ecs",
            Self::Vpc => "Vpc",
            Self::Sts => "Sts",
        }
    }

    /// The action tables of this API (STS has its own).
    fn tables(self) -> &'static [&'static [Action]] {
        match self {
            Self::Ecs => ECS_TABLES,
            Self::Vpc => &[vpc_actions::ACTIONS],
            Self::Sts => &[],
        }
    }

    /// The names of the actions this API serves.
    fn names(self) -> impl Iterator<Item = &'static str> {
        let api = self.tables().iter().flat_map(|table| table.iter());
        let sts = if self == Self::Sts {
            sts_actions::ACTIONS
        } else {
            &[]
        };
        api.map(|a| a.name).chain(sts.iter().map(|a| a.name))
    }

    /// The handler of `action` in this API; `InvalidAction.NotFound` when it serves none.
    pub fn route(self, action: &str) -> Result<Route, ErrorResponse> {
        let route = match self {
            Self::Ecs | Self::Vpc => self
                .tables()
                .iter()
                .flat_map(|table| table.iter())
                .find(|a| a.name == action)
                .map(Route::Api),
            Self::Sts => sts_actions::ACTIONS
                .iter()
                .find(|a| a.name == action)
                .map(Route::Sts),
        };
        route.ok_or_else(action_not_found)
    }
}

/// The actions each API serves, as README's table of them shows it (Markdown, one row per API,
/// names sorted); its test keeps README in step.
#[cfg(test)]
fn readme_table() -> String {
    let mut table = String::from("| API (`Version`) | actions |\n|---|---|\n");
    for (product, title) in [
        (Product::Ecs, "ECS (`2014-05-26`)"),
        (Product::Vpc, "VPC (`2016-04-28`)"),
        (Product::Sts, "STS (`2015-04-01`)"),
    ] {
        let mut names: Vec<&str> = product.names().collect();
        names.sort_unstable();
        table.push_str(&format!("| {title} | {} |\n", names.join(", ")));
    }
    table
}

/// Every action the mock serves, as (API, action), the API named as README's table names it
/// (`ECS`, `VPC`, `STS`): what a check of all answers (the Go SDK test) must cover.
pub fn served_actions() -> Vec<(&'static str, &'static str)> {
    [
        (Product::Ecs, "ECS"),
        (Product::Vpc, "VPC"),
        (Product::Sts, "STS"),
    ]
    .into_iter()
    .flat_map(|(product, api)| product.names().map(move |name| (api, name)))
    .collect()
}

/// The `&'static` label an action is counted under ([`UNKNOWN_ACTION`] when no API serves it).
pub fn label(action: &str) -> &'static str {
    [Product::Ecs, Product::Vpc, Product::Sts]
        .into_iter()
        .flat_map(Product::names)
        .find(|a| *a == action)
        .unwrap_or(UNKNOWN_ACTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_serves_an_action_once() {
        for product in [Product::Ecs, Product::Vpc, Product::Sts] {
            let names: Vec<&str> = product.names().collect();
            assert!(names.iter().all(|n| product.route(n).is_ok()));
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{product:?}: {names:?}");
        }
    }

    #[test]
    fn readme_lists_every_action_served() {
        let readme = include_str!("../../../../README.md");
        assert!(
            readme.contains(&readme_table()),
            "README's table of the actions the mock serves is out of date; it must read:\n{}",
            readme_table()
        );
    }

    #[test]
    fn unknown_actions_are_not_found() {
        assert_eq!(label("NoSuchAction"), UNKNOWN_ACTION);
        for product in [Product::Ecs, Product::Vpc, Product::Sts] {
            assert_eq!(
                product.route("NoSuchAction").err().map(|e| e.code),
                Some("InvalidAction.NotFound".into())
            );
        }
    }
}
