//! The state of one simulated etcd cluster and etcd's rules for it: the member list, which
//! member's data each data dir holds, which pods run a member process, and a journal of every
//! change. Pure: [`SimulatedCluster::sync`] is given what the pods look like
//! ([`World`]).
//!
//! etcd's rules it follows (messages and gRPC codes as etcd returns them):
//! - a process with an empty data dir reads its configuration file: `new` forms the cluster
//!   from `initial-cluster` (once; later `new` members join the members it listed, and one whose
//!   member has started refuses: "has already been bootstrapped"), `existing` fetches the
//!   member list from the other peers `initial-cluster` names (refusing when none of them
//!   runs) and joins as the member with its peer URL, refusing when there is none. A member
//!   that has started before is joined too, with no data: etcd does not check (see
//!   [`Event::RejoinedWithoutData`]);
//! - a process whose data dir holds a member starts as that member, and refuses when that
//!   member was removed ("the member has been permanently removed from the cluster");
//! - a removed member's process exits; a stopped member keeps its name in the list;
//! - membership changes need a leader (a quorum of voters running); members are added as
//!   learners, one at a time; only a running learner (in sync) is promoted; a voter is removed
//!   only while the voters left have a quorum of running members;
//! - an added member's ID comes from its peer URL and the second it is added in, so the same
//!   peer URL added twice in one second gets the same ID: "member ID already exist" while that
//!   member is listed, "member not found" (etcd's removed-ID refusal) once it was removed.

use std::collections::{BTreeMap, BTreeSet};

use provider_etcd::membership::{Member, MemberStatus, MembershipError, PromoteOutcome, grpc};
use provider_etcd::names::{ClusterNames, Topology};

use crate::world::{DataDir, InitialState, ReadyPod, World};

/// etcd's default `--max-learners`.
const MAX_LEARNERS: usize = 1;

/// Why a process with empty data or another member's data did not start.
pub const PERMANENTLY_REMOVED: &str = "the member has been permanently removed from the cluster; \
     the data-dir used by this member must be removed";

/// One thing that happened in the simulated cluster, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The members of `initial-cluster` formed the cluster.
    Bootstrapped { members: Vec<u64> },
    /// `MemberAdd`.
    Added {
        id: u64,
        peer_url: String,
        is_learner: bool,
    },
    /// `MemberPromote`.
    Promoted { id: u64 },
    /// `MemberRemove`.
    Removed { id: u64, ordinal: Option<u32> },
    /// The pod of `ordinal` runs member `id`; `fresh` when it started on an empty data dir.
    Started {
        ordinal: u32,
        id: u64,
        data: DataDir,
        fresh: bool,
        version: String,
    },
    /// The pod of `ordinal` started member `id`, which had started before, on an empty data
    /// dir (`existing`, its peers listed): the member has forgotten the log entries and votes
    /// it acknowledged. Real etcd allows it; a controller must never let it happen.
    RejoinedWithoutData { ordinal: u32, id: u64 },
    /// The pod of `ordinal` stopped running member `id` (its pod went, or the member was removed).
    Stopped { ordinal: u32, id: u64 },
    /// The pod of `ordinal` cannot start etcd on `data`: etcd exits with `reason`.
    Refused {
        ordinal: u32,
        data: DataDir,
        reason: String,
    },
}

#[derive(Clone, Debug)]
struct Process {
    id: u64,
    data: DataDir,
    version: String,
}

/// One simulated etcd cluster.
#[derive(Debug)]
pub struct SimulatedCluster {
    names: ClusterNames,
    members: Vec<Member>,
    removed: BTreeSet<u64>,
    /// The member whose data each data dir holds; absent: empty.
    data: BTreeMap<DataDir, u64>,
    running: BTreeMap<u32, Process>,
    /// Pods whose etcd refuses to start, with the data dir and the reason (journaled once;
    /// the pod keeps retrying, as a crash-looping container does).
    refused: BTreeMap<u32, (DataDir, String)>,
    next_id: u64,
    /// Makes the IDs of added members differ per cluster.
    seed: u64,
    /// `initial-cluster-token` of the cluster the members formed; `None` before it formed.
    token: Option<String>,
    journal: Vec<Event>,
    /// Users, roles, tokens and whether authentication is on.
    pub auth: crate::auth::AuthStore,
}

/// FNV-1a over `bytes`, from `start`.
fn fnv1a(start: u64, bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(start, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn api_error(action: &'static str, code: i32, message: &str) -> MembershipError {
    MembershipError::Api {
        action,
        code,
        message: message.to_owned(),
    }
}

impl SimulatedCluster {
    pub fn new(names: ClusterNames) -> Self {
        // Member IDs look like etcd's: large and different per cluster.
        let seed = fnv1a(
            0xcbf2_9ce4_8422_2325,
            names.namespace.bytes().chain(names.name.bytes()),
        );
        Self {
            names,
            members: Vec::new(),
            removed: BTreeSet::new(),
            data: BTreeMap::new(),
            running: BTreeMap::new(),
            refused: BTreeMap::new(),
            next_id: seed | (1 << 63),
            seed,
            token: None,
            journal: Vec::new(),
            auth: crate::auth::AuthStore::default(),
        }
    }

    pub fn journal(&self) -> &[Event] {
        &self.journal
    }

    fn new_id(&mut self) -> u64 {
        self.next_id = self.next_id.wrapping_add(0x9e37_79b9_7f4a_7c15) | (1 << 63);
        self.next_id
    }

    /// The ID etcd gives a member added at `peer_url` during `unix_second`.
    fn added_member_id(&self, peer_url: &str, unix_second: i64) -> u64 {
        fnv1a(self.seed, peer_url.bytes().chain(unix_second.to_be_bytes())) | (1 << 63)
    }

    fn voters(&self) -> impl Iterator<Item = &Member> {
        self.members.iter().filter(|m| !m.is_learner)
    }

    fn is_running(&self, id: u64) -> bool {
        self.running.values().any(|p| p.id == id)
    }

    /// The leader: the lowest running voter while the running voters are a quorum.
    pub fn leader(&self) -> Option<u64> {
        let voters = self.voters().count();
        let running: Vec<u64> = self
            .voters()
            .map(|m| m.id)
            .filter(|id| self.is_running(*id))
            .collect();
        (voters > 0 && running.len() > voters / 2)
            .then(|| running.iter().copied().min())
            .flatten()
    }

    fn require_leader(&self, action: &'static str) -> Result<(), MembershipError> {
        match self.leader() {
            Some(_) => Ok(()),
            None => Err(api_error(
                action,
                grpc::UNAVAILABLE,
                "etcdserver: request timed out",
            )),
        }
    }

    fn ordinal_of(&self, member: &Member) -> Option<u32> {
        member
            .peer_urls
            .iter()
            .find_map(|u| self.names.ordinal_of_peer_url(u))
    }

    /// Brings the processes in line with the pods: stops the members whose pod went, starts
    /// (or refuses to start) etcd in every ready pod that runs none, and rolls the version.
    pub fn sync(&mut self, world: &World) {
        let ready: BTreeMap<u32, &ReadyPod> = world.pods.iter().map(|p| (p.ordinal, p)).collect();
        let gone: Vec<u32> = self
            .running
            .iter()
            .filter(|(o, p)| ready.get(o).is_none_or(|pod| pod.data != p.data))
            .map(|(o, _)| *o)
            .collect();
        for ordinal in gone {
            self.stop(ordinal);
        }
        self.refused
            .retain(|o, (data, _)| ready.get(o).is_some_and(|pod| pod.data == *data));
        // An emptyDir is lost with its pod.
        self.data.retain(|data, _| match data {
            DataDir::Ephemeral { ordinal } => ready.contains_key(ordinal),
            DataDir::Claim { .. } => true,
        });
        let version = world.template_version.clone().unwrap_or_default();
        if world.rolled_out {
            for process in self.running.values_mut() {
                process.version.clone_from(&version);
            }
        }
        // Pods with data first: they restart the members they hold (a cluster created again
        // on retained claims comes back with its old members) before an empty data dir could
        // form another cluster.
        let (with_data, empty): (Vec<&ReadyPod>, Vec<&ReadyPod>) = world
            .pods
            .iter()
            .filter(|pod| !self.running.contains_key(&pod.ordinal))
            .partition(|pod| self.data.contains_key(&pod.data));
        for pod in with_data.into_iter().chain(empty) {
            self.start(pod, &version);
        }
    }

    fn stop(&mut self, ordinal: u32) {
        if let Some(process) = self.running.remove(&ordinal) {
            self.journal.push(Event::Stopped {
                ordinal,
                id: process.id,
            });
        }
    }

    fn start(&mut self, pod: &ReadyPod, version: &str) {
        let (outcome, fresh) = match self.data.get(&pod.data) {
            Some(id) if self.removed.contains(id) => (Err(PERMANENTLY_REMOVED.to_owned()), false),
            Some(id) if self.members.iter().any(|m| m.id == *id) => (Ok(*id), false),
            Some(id) => (
                Err(format!(
                    "the data-dir holds member {id:x} of another cluster"
                )),
                false,
            ),
            None => (self.join(pod), true),
        };
        match outcome {
            Ok(id) => {
                self.refused.remove(&pod.ordinal);
                let client_url = self.names.member_client_url(pod.ordinal);
                if let Some(member) = self.members.iter_mut().find(|m| m.id == id) {
                    // A member publishes its name and client URLs when it starts.
                    member.name.clone_from(&pod.config.name);
                    member.client_urls = vec![client_url];
                }
                self.data.insert(pod.data.clone(), id);
                self.running.insert(
                    pod.ordinal,
                    Process {
                        id,
                        data: pod.data.clone(),
                        version: version.to_owned(),
                    },
                );
                self.journal.push(Event::Started {
                    ordinal: pod.ordinal,
                    id,
                    data: pod.data.clone(),
                    fresh,
                    version: version.to_owned(),
                });
            }
            Err(reason) => {
                let refusal = (pod.data.clone(), reason.clone());
                if self.refused.get(&pod.ordinal) != Some(&refusal) {
                    self.refused.insert(pod.ordinal, refusal);
                    self.journal.push(Event::Refused {
                        ordinal: pod.ordinal,
                        data: pod.data.clone(),
                        reason,
                    });
                }
            }
        }
    }

    /// Whether a running process is the member with `peer_url`.
    fn runs_peer(&self, peer_url: &str) -> bool {
        self.running.values().any(|p| {
            self.members
                .iter()
                .any(|m| m.id == p.id && m.peer_urls.iter().any(|u| u == peer_url))
        })
    }

    /// The member a process with an empty data dir becomes, as its configuration says.
    fn join(&mut self, pod: &ReadyPod) -> Result<u64, String> {
        let own_url = self.names.peer_url(pod.ordinal);
        if !pod.config.initial_cluster.contains(&own_url) {
            return Err(format!(
                "couldn't find local name {:?} in the initial cluster configuration",
                pod.config.name
            ));
        }
        // A `new` member with another token while nothing of the old cluster runs starts
        // another cluster (an EtcdCluster deleted and created again under the same name); the
        // old cluster's data dirs now hold members of another cluster.
        let other_cluster = self.token.as_ref() != Some(&pod.config.token);
        if pod.config.state == InitialState::New && other_cluster && self.running.is_empty() {
            self.members.clear();
            self.removed.clear();
            self.token = None;
        }
        let formed = self.token.is_some();
        match pod.config.state {
            InitialState::New if !formed => {
                self.token = Some(pod.config.token.clone());
                let mut ids = Vec::new();
                for url in &pod.config.initial_cluster {
                    let id = self.new_id();
                    ids.push(id);
                    self.members.push(Member {
                        id,
                        name: String::new(),
                        peer_urls: vec![url.clone()],
                        client_urls: Vec::new(),
                        is_learner: false,
                    });
                }
                self.journal.push(Event::Bootstrapped { members: ids });
            }
            InitialState::Existing => {
                let reachable = pod
                    .config
                    .initial_cluster
                    .iter()
                    .filter(|url| **url != own_url)
                    .any(|url| self.runs_peer(url));
                if !reachable {
                    return Err(
                        "cannot fetch cluster info from peer urls: could not retrieve \
                                cluster information from the given URLs"
                            .to_owned(),
                    );
                }
            }
            _ => {}
        }
        match self.members.iter().find(|m| m.peer_urls.contains(&own_url)) {
            Some(m) if m.started() && pod.config.state == InitialState::New => {
                Err(format!("member {:x} has already been bootstrapped", m.id))
            }
            Some(m) => {
                if m.started() {
                    self.journal.push(Event::RejoinedWithoutData {
                        ordinal: pod.ordinal,
                        id: m.id,
                    });
                }
                Ok(m.id)
            }
            None => Err(format!(
                "error validating peerURLs: member count is unequal (no member has peer URL {own_url})"
            )),
        }
    }

    /// `MemberList`, as any running member answers it.
    pub fn list(&self) -> Result<Vec<Member>, MembershipError> {
        if self.running.is_empty() {
            return Err(self.down(&self.names.client_endpoint()));
        }
        Ok(self.members.clone())
    }

    fn down(&self, endpoint: &str) -> MembershipError {
        MembershipError::Down {
            endpoint: endpoint.to_owned(),
            reason: "no etcd process serves it".to_owned(),
        }
    }

    /// `MemberAdd` with `isLearner: true`, asked during `unix_second`.
    pub fn add_learner(
        &mut self,
        peer_url: &str,
        unix_second: i64,
    ) -> Result<Member, MembershipError> {
        const ACTION: &str = "member add";
        if self.running.is_empty() {
            return Err(self.down(&self.names.client_endpoint()));
        }
        self.require_leader(ACTION)?;
        let id = self.added_member_id(peer_url, unix_second);
        if self.removed.contains(&id) {
            return Err(api_error(
                ACTION,
                grpc::NOT_FOUND,
                "etcdserver: member not found",
            ));
        }
        if self.members.iter().any(|m| m.id == id) {
            return Err(api_error(
                ACTION,
                grpc::FAILED_PRECONDITION,
                "etcdserver: member ID already exist",
            ));
        }
        if self
            .members
            .iter()
            .any(|m| m.peer_urls.iter().any(|u| u == peer_url))
        {
            return Err(api_error(
                ACTION,
                grpc::FAILED_PRECONDITION,
                "etcdserver: Peer URLs already exists",
            ));
        }
        if self.members.iter().filter(|m| m.is_learner).count() >= MAX_LEARNERS {
            return Err(api_error(
                ACTION,
                grpc::FAILED_PRECONDITION,
                "etcdserver: too many learner members in cluster",
            ));
        }
        let member = Member {
            id,
            name: String::new(),
            peer_urls: vec![peer_url.to_owned()],
            client_urls: Vec::new(),
            is_learner: true,
        };
        self.members.push(member.clone());
        self.journal.push(Event::Added {
            id: member.id,
            peer_url: peer_url.to_owned(),
            is_learner: true,
        });
        Ok(member)
    }

    /// `MemberPromote`: only a running learner, which the simulation counts as in sync.
    pub fn promote(&mut self, id: u64) -> Result<PromoteOutcome, MembershipError> {
        const ACTION: &str = "member promote";
        if self.running.is_empty() {
            return Err(self.down(&self.names.client_endpoint()));
        }
        self.require_leader(ACTION)?;
        let running = self.is_running(id);
        let Some(member) = self.members.iter_mut().find(|m| m.id == id) else {
            return Err(api_error(
                ACTION,
                grpc::NOT_FOUND,
                "etcdserver: member not found",
            ));
        };
        if !member.is_learner {
            return Err(api_error(
                ACTION,
                grpc::FAILED_PRECONDITION,
                "etcdserver: can only promote a learner member",
            ));
        }
        if !running {
            return Err(api_error(
                ACTION,
                grpc::FAILED_PRECONDITION,
                "etcdserver: can only promote a learner member which is in sync with leader",
            ));
        }
        member.is_learner = false;
        self.journal.push(Event::Promoted { id });
        Ok(PromoteOutcome::Promoted)
    }

    /// `MemberRemove`. A removed member's process exits; its data stays where it is.
    pub fn remove(&mut self, id: u64) -> Result<(), MembershipError> {
        const ACTION: &str = "member remove";
        if self.running.is_empty() {
            return Err(self.down(&self.names.client_endpoint()));
        }
        self.require_leader(ACTION)?;
        let Some(member) = self.members.iter().find(|m| m.id == id).cloned() else {
            return Err(api_error(
                ACTION,
                grpc::NOT_FOUND,
                "etcdserver: member not found",
            ));
        };
        if !member.is_learner {
            let voters_left = self.voters().count() - 1;
            let running_left = self
                .voters()
                .filter(|m| m.id != id && self.is_running(m.id))
                .count();
            if running_left <= voters_left / 2 {
                return Err(api_error(
                    ACTION,
                    grpc::FAILED_PRECONDITION,
                    "etcdserver: re-configuration failed due to not enough started members",
                ));
            }
        }
        self.members.retain(|m| m.id != id);
        self.removed.insert(id);
        self.journal.push(Event::Removed {
            id,
            ordinal: self.ordinal_of(&member),
        });
        let exiting: Vec<u32> = self
            .running
            .iter()
            .filter(|(_, p)| p.id == id)
            .map(|(o, _)| *o)
            .collect();
        for ordinal in exiting {
            self.stop(ordinal);
            // Its pod restarts and etcd exits again on the removed member's data.
            if let Some(data) = self
                .data
                .iter()
                .find(|(_, m)| **m == id)
                .map(|(d, _)| d.clone())
            {
                self.refused
                    .insert(ordinal, (data.clone(), PERMANENTLY_REMOVED.to_owned()));
                self.journal.push(Event::Refused {
                    ordinal,
                    data,
                    reason: PERMANENTLY_REMOVED.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// `Maintenance/Status` of the member serving `client_url`.
    pub fn status(&self, client_url: &str) -> Result<MemberStatus, MembershipError> {
        let process = self
            .running
            .iter()
            .find(|(o, _)| self.names.member_client_url(**o) == client_url)
            .map(|(_, p)| p)
            .ok_or_else(|| self.down(client_url))?;
        let member = self
            .members
            .iter()
            .find(|m| m.id == process.id)
            .ok_or_else(|| self.down(client_url))?;
        Ok(MemberStatus {
            member_id: member.id,
            leader: self.leader().unwrap_or(0),
            version: process.version.clone(),
            raft_index: self.journal.len() as u64,
            is_learner: member.is_learner,
            errors: Vec::new(),
            // The simulation keeps no data: nothing to defragment.
            db_size: 0,
            db_size_in_use: 0,
        })
    }
}

#[cfg(test)]
mod tests;
