//! The first step of every reconcile: validate the spec and read what the cluster is (the
//! StatefulSet, crash-looping pods, etcd's membership and the next planned step) into a
//! [`Snapshot`] the other steps look at.

use std::collections::BTreeSet;

use ferroplane_apis::etcd::{EtcdCluster, MemberRole};
use ferroplane_runtime::ReconcileError;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use super::client::EtcdClient;
use crate::error::{Error, SpecError, to_reconcile};
use crate::membership::{Membership, MembershipError};
use crate::names::{MAX_NAME_LEN, REPLICAS_ANNOTATION, VERSION_ANNOTATION};
use crate::planner::{self, Health, Step};
use crate::render::BootstrapFiles;
use crate::render::bootstrap::Bootstrap;
use crate::scaling::{self, Observed};
use crate::tls::rotation::{Phase, running_generation};
use crate::upgrade_path::{self, MemberReport};
use crate::version::{self, Release, Version};

/// Restarts after which a pod that is not ready counts as crash-looping.
const CRASH_LOOP_RESTARTS: i32 = 3;

/// Everything `observe` and `update` look at.
pub(super) struct Snapshot {
    pub(super) release: Release,
    pub(super) statefulset: Option<StatefulSet>,
    /// The StatefulSet replicas ferroplane decided (its annotation; the live value for a
    /// StatefulSet rendered before the annotation existed), whatever a hand edit set since.
    pub(super) replicas: Option<u32>,
    pub(super) membership: Result<Observed, String>,
    pub(super) step: Step,
    /// The member configuration files to apply while membership is unknown.
    pub(super) kept_bootstrap: Option<BootstrapFiles>,
    /// The generated CA's trust generation and rotation phase ([`tls::rotation`]).
    pub(super) trust: (u64, Phase),
}

pub(super) fn desired_size(mr: &EtcdCluster) -> Result<u32, ReconcileError> {
    u32::try_from(mr.spec.size)
        .ok()
        .filter(|s| (1..=9).contains(s))
        .ok_or_else(|| to_reconcile(SpecError::BadSize(mr.spec.size).into()))
}

/// The replicas ferroplane last set on the StatefulSet: its annotation, else (rendered before
/// the annotation existed) the live value.
fn intended_replicas(sts: &StatefulSet) -> u32 {
    sts.annotations()
        .get(REPLICAS_ANNOTATION)
        .and_then(|r| r.parse().ok())
        .or_else(|| {
            sts.spec
                .as_ref()
                .and_then(|s| s.replicas)
                .and_then(|r| u32::try_from(r).ok())
        })
        .unwrap_or(0)
}

/// The oldest version a member that answered reports running: what an upgrade starts from.
fn running_version(observed: &Observed) -> Option<Version> {
    observed
        .members
        .iter()
        .filter_map(|m| m.status.as_ref())
        .filter_map(|s| Version::parse(&s.version))
        .min()
}

/// Every member etcd lists, with the version it reports and whether it is a healthy voter.
fn member_reports(observed: &Observed) -> Vec<MemberReport> {
    observed
        .members
        .iter()
        .map(|m| MemberReport {
            name: if m.member.name.is_empty() {
                format!("member {:x}", m.member.id)
            } else {
                m.member.name.clone()
            },
            version: m.status.as_ref().and_then(|s| Version::parse(&s.version)),
            healthy_voter: m.health == Health::Healthy && !m.member.is_learner,
        })
        .collect()
}

/// The members whose configuration files are sealed (`render::bootstrap::Bootstrap`): the
/// started ones, when their data is on claims. Without storage every pod the StatefulSet
/// replaces (each rolling update) starts on a new empty directory and rejoins under its
/// member's identity, as etcd allows; sealing would stop it, so such a cluster keeps the risk
/// of an empty log rejoining (README, Disaster recovery).
pub(super) fn sealable(mr: &EtcdCluster, started: BTreeSet<u32>) -> BTreeSet<u32> {
    if mr.spec.storage.is_some() {
        started
    } else {
        BTreeSet::new()
    }
}

fn crash_looping(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .is_some_and(|statuses| {
            statuses.iter().any(|c| {
                let waiting_crash = c
                    .state
                    .as_ref()
                    .and_then(|s| s.waiting.as_ref())
                    .and_then(|w| w.reason.as_deref())
                    == Some("CrashLoopBackOff");
                !c.ready && (waiting_crash || c.restart_count >= CRASH_LOOP_RESTARTS)
            })
        })
}

impl<M: Membership> EtcdClient<M> {
    pub(super) async fn snapshot(&self, mr: &EtcdCluster) -> Result<Snapshot, ReconcileError> {
        if self.names.name.len() > MAX_NAME_LEN {
            let e = SpecError::NameTooLong {
                name: self.names.name.clone(),
                len: self.names.name.len(),
                max: MAX_NAME_LEN,
            };
            return Err(to_reconcile(e.into()));
        }
        let size = desired_size(mr)?;
        let release = version::resolve(&mr.spec).map_err(|e| to_reconcile(e.into()))?;
        let sts_api: Api<StatefulSet> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let statefulset = sts_api
            .get_opt(&self.names.statefulset())
            .await
            .map_err(|e| to_reconcile(Error::kube("reading the StatefulSet", e)))?;
        let trust = match &self.tls {
            Some(secrets) => self
                .tls_secrets(secrets)
                .trust()
                .await
                .map_err(to_reconcile)?
                // A missing CA Secret: the members keep their generation until it is rebuilt.
                .unwrap_or((
                    running_generation(statefulset.as_ref()).unwrap_or(0),
                    Phase::Steady,
                )),
            None => (0, Phase::Steady),
        };
        let Some(sts) = statefulset.as_ref() else {
            return Ok(Snapshot {
                release,
                statefulset,
                replicas: None,
                membership: Err("the StatefulSet does not exist yet".into()),
                step: Step::Steady,
                kept_bootstrap: None,
                trust,
            });
        };
        let replicas = intended_replicas(sts);
        let pods: Api<Pod> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let selector = self
            .names
            .selector()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let member_pods = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| to_reconcile(Error::kube("listing the member pods", e)))?
            .items;
        let failing: Vec<String> = member_pods
            .iter()
            .filter(|p| crash_looping(p))
            .map(|p| p.name_any())
            .collect();
        // A password etcd refuses must show as such, not as a cluster that does not answer.
        if self.passwords.involved()
            && let Err(
                e
                @ (MembershipError::AuthFailed { .. } | MembershipError::CommonNameRefused { .. }),
            ) = self.membership.auth_status().await
        {
            return Err(to_reconcile(e.into()));
        }
        let membership = scaling::observe(&self.membership, &self.names, |o| {
            failing.contains(&self.names.member(o))
        })
        .await;
        // The version the members run, as they report it; the StatefulSet's annotation says
        // only what was last rendered (a rollout may not have reached every member).
        let rendered = sts
            .annotations()
            .get(VERSION_ANNOTATION)
            .and_then(|v| Version::parse(v));
        let running = membership.as_ref().ok().and_then(running_version);
        if let Some(from) = running.or(rendered) {
            upgrade_path::check_change(from, release.version)
                .map_err(|e| to_reconcile(e.into()))?;
        }
        let reports = membership.as_ref().ok().map(member_reports);
        upgrade_path::check_rollout_start(
            rendered.or(running),
            reports.as_deref(),
            release.version,
        )
        .map_err(|e| to_reconcile(e.into()))?;
        let (membership, step, kept_bootstrap) = match membership {
            Ok(observed) => {
                let mut view = observed
                    .planner_view(size, replicas)
                    .replacing_failed(mr.spec.replace_failed_members);
                let recorded = mr
                    .status
                    .as_ref()
                    .map(|s| s.member_volumes.clone())
                    .unwrap_or_default();
                self.mark_lost_data(mr, &recorded, &mut view).await?;
                self.mark_pods_on_claims(mr, &member_pods, &mut view)
                    .await?;
                let step = planner::plan(&view);
                (Ok(observed), step, None)
            }
            Err(e) => {
                let kept = self.kept_bootstrap(mr, replicas).await?;
                (Err(e.to_string()), Step::Steady, Some(kept))
            }
        };
        Ok(Snapshot {
            release,
            statefulset,
            replicas: Some(replicas),
            membership,
            step,
            kept_bootstrap,
            trust,
        })
    }

    /// The bootstrap files while etcd cannot be asked: the live ConfigMap's, or, when it was
    /// deleted, the configuration of the members the status last listed (of a new cluster of
    /// the current replicas when it never listed any).
    pub(super) async fn kept_bootstrap(
        &self,
        mr: &EtcdCluster,
        replicas: u32,
    ) -> Result<BootstrapFiles, ReconcileError> {
        let api: Api<ConfigMap> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let live = api
            .get_opt(&self.names.bootstrap_config())
            .await
            .map_err(|e| to_reconcile(Error::kube("reading the bootstrap ConfigMap", e)))?;
        if let Some(data) = live.and_then(|cm| cm.data) {
            return Ok(BootstrapFiles::Keep(data));
        }
        let members = mr
            .status
            .as_ref()
            .map(|s| s.members.as_slice())
            .unwrap_or_default();
        let ordinals = |voters_only: bool| -> BTreeSet<u32> {
            members
                .iter()
                .filter(|m| !voters_only || m.role != MemberRole::Learner)
                .filter_map(|m| self.names.ordinal_of(&m.name))
                .collect()
        };
        let known = ordinals(false);
        Ok(BootstrapFiles::Render(if known.is_empty() {
            Bootstrap::New { size: replicas }
        } else {
            Bootstrap::Existing {
                // As `Observed::sealable_ordinals`: a learner joins from its peers until promoted.
                sealed: sealable(mr, ordinals(true)),
                members: known,
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateWaiting, ContainerStatus, PodStatus,
    };

    fn pod(ready: bool, restarts: i32, waiting: Option<&str>) -> Pod {
        Pod {
            status: Some(PodStatus {
                container_statuses: Some(vec![ContainerStatus {
                    name: "etcd".into(),
                    ready,
                    restart_count: restarts,
                    state: waiting.map(|r| ContainerState {
                        waiting: Some(ContainerStateWaiting {
                            reason: Some(r.into()),
                            ..ContainerStateWaiting::default()
                        }),
                        ..ContainerState::default()
                    }),
                    ..ContainerStatus::default()
                }]),
                ..PodStatus::default()
            }),
            ..Pod::default()
        }
    }

    #[test]
    fn crash_loops_are_recognised() {
        assert!(crash_looping(&pod(false, 1, Some("CrashLoopBackOff"))));
        assert!(crash_looping(&pod(false, 5, None)));
        assert!(
            !crash_looping(&pod(true, 5, None)),
            "restarted long ago, fine now"
        );
        assert!(!crash_looping(&pod(false, 0, Some("ContainerCreating"))));
    }
}
