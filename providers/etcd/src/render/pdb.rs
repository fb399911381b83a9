//! The PodDisruptionBudget: voluntary disruptions (drains, evictions) may take down at most as
//! many members as the cluster tolerates losing, `(n-1)/2`. For one or two members that is
//! zero: a drain waits rather than take the cluster down.

use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::owner::Owner;
use crate::names::ClusterNames;
use crate::planner::fault_tolerance;

pub(super) fn render(names: &ClusterNames, owner: &Owner, members: u32) -> PodDisruptionBudget {
    let max_unavailable = i32::try_from(fault_tolerance(members as usize)).unwrap_or(0);
    PodDisruptionBudget {
        metadata: owner.meta(names.pdb(), names),
        spec: Some(PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::Int(max_unavailable)),
            selector: Some(LabelSelector {
                match_labels: Some(names.selector()),
                ..LabelSelector::default()
            }),
            ..PodDisruptionBudgetSpec::default()
        }),
        ..PodDisruptionBudget::default()
    }
}
