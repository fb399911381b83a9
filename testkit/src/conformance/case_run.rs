//! One running case: its namespace, account and objects, the faults it scripts for its own
//! account, the waits on the mock's records, and its result.

use std::time::Duration;

use alibaba_mock::{Change, LedgerEntry, MockServer};
use ferroplane_runtime::UID_TAG;

use super::accounts::Account;
use super::audit::{Audit, Tracked};
use super::cases::{Case, FaultClass};
use super::objects::{ObjectSpec, Objects};
use super::registration::{Actions, Build, Naming, Prerequisite, Registration};
use crate::wait::eventually;

/// Where every case runs.
pub const REGION: &str = "cn-beijing";
pub const ZONE: &str = "cn-beijing-a";
/// The name of every case's object (each case has an account of its own).
pub const OBJECT: &str = "conformance-object";

/// What a case ended with.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// `Err`: what went wrong (a wait that timed out, a state that must not be).
    pub outcome: Result<(), String>,
    pub audit: Audit,
    pub findings: Vec<String>,
    /// How long the case ran.
    pub took: Duration,
}

/// The things a case works with.
pub struct CaseRun<'a> {
    pub client: kube::Client,
    pub mock: &'a MockServer,
    pub registration: &'a Registration,
    pub case: Case,
    pub namespace: String,
    pub timeout: Duration,
    pub account: Account,
    pub objects: Objects,
    pub tracked: Tracked,
    started: std::time::Instant,
}

impl<'a> CaseRun<'a> {
    /// Opens the case's account, its namespace with ProviderConfig `default`, and the objects;
    /// run `repetition` (from 0) of the case.
    pub async fn start(
        client: kube::Client,
        mock: &'a MockServer,
        registration: &'a Registration,
        (case, repetition): (Case, usize),
        timeout: Duration,
    ) -> Self {
        let mut namespace = format!("{}-{}", registration.kind.to_ascii_lowercase(), case.name());
        if repetition > 0 {
            namespace.push_str(&format!("-r{repetition}"));
        }
        let account = Account::open(mock);
        account.provide(&client, &namespace, "default", mock).await;
        let objects = Objects::new(&client, registration.kind, &namespace);
        let mut tracked = Tracked::default();
        tracked.accounts.insert(account.id.clone());
        tracked.binding = (registration.naming == Naming::Binding).then_some(registration.resource);
        Self {
            client,
            mock,
            registration,
            case,
            namespace,
            timeout,
            account,
            objects,
            tracked,
            started: std::time::Instant::now(),
        }
    }

    /// The build of the case's object, its prerequisites made by hand (before the records the
    /// audit reads).
    pub async fn build(&mut self) -> Build {
        self.build_for(1).await
    }

    /// [`Self::build`] for `objects` objects: one VPC and one security group, and an EIP and an
    /// instance per object.
    pub async fn build_for(&mut self, objects: usize) -> Build {
        let mut build = Build {
            name: OBJECT.into(),
            index: 0,
            region: REGION.into(),
            zone: ZONE.into(),
            vpc_id: None,
            vswitch_id: None,
            nat_gateway_id: None,
            eip_ids: Vec::new(),
            instance_ids: Vec::new(),
            security_group_id: None,
        };
        for prerequisite in self.registration.prerequisites {
            match prerequisite {
                Prerequisite::Vpc => {
                    build.vpc_id = Some(self.account.make_vpc(self.mock, REGION).await);
                }
                Prerequisite::VSwitch => self.make_vswitch(&mut build).await,
                Prerequisite::NatGateway => {
                    self.make_vswitch(&mut build).await;
                    let vpc = build.vpc_id.clone().unwrap_or_default();
                    let vswitch = build.vswitch_id.clone().unwrap_or_default();
                    let gateway = self
                        .account
                        .make_nat_gateway(self.mock, REGION, &vpc, &vswitch)
                        .await;
                    for _ in 0..objects {
                        let eip = self.account.make_eip(self.mock, REGION).await;
                        self.account
                            .bind_eip(self.mock, REGION, &eip, &gateway)
                            .await;
                        build.eip_ids.push(eip);
                    }
                    build.nat_gateway_id = Some(gateway);
                }
                Prerequisite::Eip => {
                    for _ in 0..objects {
                        let id = self.account.make_eip(self.mock, REGION).await;
                        build.eip_ids.push(id);
                    }
                }
                Prerequisite::Instance => {
                    for _ in 0..objects {
                        let id = self.account.make_instance(self.mock, REGION).await;
                        build.instance_ids.push(id);
                    }
                }
                Prerequisite::SecurityGroup => {
                    let id = self.account.make_security_group(self.mock, REGION).await;
                    build.security_group_id = Some(id);
                }
            }
        }
        if self.registration.naming == Naming::Binding {
            let bound = build
                .eip_ids
                .iter()
                .chain(&build.instance_ids)
                .chain(&build.nat_gateway_id)
                .chain(&build.security_group_id)
                .cloned();
            self.tracked.claimable.extend(bound);
        }
        self.tracked.since = self.ledger_mark();
        build
    }

    /// The case's vSwitch (and its VPC, unless made already) in `build`, made by hand once.
    async fn make_vswitch(&self, build: &mut Build) {
        if build.vswitch_id.is_some() {
            return;
        }
        let vpc = match &build.vpc_id {
            Some(vpc) => vpc.clone(),
            None => self.account.make_vpc(self.mock, REGION).await,
        };
        let vswitch = self
            .account
            .make_vswitch(self.mock, REGION, &vpc, ZONE)
            .await;
        build.vpc_id = Some(vpc);
        build.vswitch_id = Some(vswitch);
    }

    /// The spec of an object of this case with ProviderConfig `default` (and a connection
    /// Secret, for a kind that has a one-time secret to keep).
    pub fn spec(&self) -> ObjectSpec {
        ObjectSpec {
            provider_config: "default".into(),
            connection_secret: self
                .registration
                .one_time_secret
                .map(|_| format!("{OBJECT}-connection")),
            ..ObjectSpec::default()
        }
    }

    /// Creates the object and tracks its UID.
    pub async fn create(
        &mut self,
        objects: &Objects,
        build: &Build,
        spec: &ObjectSpec,
    ) -> Result<String, String> {
        let object = objects.create(self.registration, build, spec).await?;
        let uid = super::objects::uid(&object);
        self.tracked.uids.insert(uid.clone());
        Ok(uid)
    }

    /// Scripts one `class` answer for each of `actions`, for this case's account.
    pub fn inject(&self, class: FaultClass, actions: Actions) {
        for action in actions {
            let injection = class.injection(action, self.registration.resource, &self.account.id);
            self.mock
                .inject_error(injection)
                .expect("the suite scripts known faults");
        }
    }

    /// Waits until every answer scripted for this account was given.
    pub async fn consumed(&self, step: &str, actions: Actions) -> Result<(), String> {
        let account = self.account.id.clone();
        eventually(format!("{}: the {step} calls", self.namespace))
            .within(self.timeout)
            .try_until_async(|| {
                let pending = self
                    .mock
                    .pending_injections()
                    .into_iter()
                    .filter(|i| i.account_id.as_deref() == Some(&account))
                    .count();
                std::future::ready(pending == 0)
            })
            .await
            .map_err(|_| format!("step {step}: a call of {actions:?} was never made"))
    }

    /// The ledger entries of this case's account from `since` on.
    pub fn entries_since(&self, since: u64) -> Vec<LedgerEntry> {
        self.mock
            .ledger()
            .into_iter()
            .filter(|e| e.seq >= since && e.account_id == self.account.id)
            .collect()
    }

    /// The next ledger sequence number.
    pub fn ledger_mark(&self) -> u64 {
        self.mock.ledger().len() as u64
    }

    /// Waits until the ledger shows `change` by object `uid` (its tag, or for a binding kind a
    /// binding of the case's account; a creation also as a resource created and then tagged by
    /// it) from `since` on.
    pub async fn ledger_shows(&self, since: u64, uid: &str, change: Change) -> Result<(), String> {
        let binding = self.tracked.binding;
        eventually(format!("{}: a {change:?} by {uid}", self.namespace))
            .within(self.timeout)
            .try_until_async(|| {
                let entries = self.entries_since(since);
                let tagged = |e: &LedgerEntry| e.tags.get(UID_TAG).map(String::as_str) == Some(uid);
                let seen = entries
                    .iter()
                    .any(|e| e.change == change && (tagged(e) || binding == Some(e.kind)))
                    // Created untagged, then tagged by the object (an EIP).
                    || (change == Change::Created
                        && entries.iter().any(|e| {
                            tagged(e)
                                && entries.iter().any(|c| {
                                    c.change == Change::Created && c.resource_id == e.resource_id
                                })
                        }));
                std::future::ready(seen)
            })
            .await
            .map_err(|e| e.to_string())
    }

    /// Checks the status of the object against the cloud.
    pub async fn check_status(&mut self, objects: &Objects, account: &str) {
        let objects = objects.clone();
        self.tracked
            .check_status(self.mock, self.registration, &objects, OBJECT, account)
            .await;
    }

    /// The result, once every object of the case is gone.
    pub fn finish(mut self, outcome: Result<(), String>) -> CaseResult {
        self.tracked.finish(self.mock);
        CaseResult {
            outcome,
            audit: self.tracked.audit,
            findings: self.tracked.findings,
            took: self.started.elapsed(),
        }
    }
}
