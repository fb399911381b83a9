//! Per-member etcd configuration files, kept in a ConfigMap with one key per pod
//! (`<pod>.json`) and read by each pod through `--config-file=/etc/etcd/$(POD_NAME).json`.
//!
//! Why a file per member instead of flags in the pod template: the initial cluster and the
//! initial cluster state differ between members (the bootstrap members start `new`, every member
//! added later starts `existing` with the membership at the time it was added). Template flags
//! are the same for every pod, and changing them would restart every member. A ConfigMap entry
//! changes nothing for a running member: etcd reads `initial-*` settings only when its data
//! directory is empty.
//!
//! JSON is valid YAML, which is what etcd parses.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::names::{CLIENT_PORT, METRICS_PORT, PEER_PORT, Topology};

/// `initial-cluster-state` of a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialState {
    /// One of the members that form the cluster together.
    New,
    /// A member added (as a learner) to a running cluster.
    Existing,
}

/// Which configuration the members get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bootstrap {
    /// A new cluster of `size` members that start together.
    New { size: u32 },
    /// A running cluster whose members have these ordinals; pods with other ordinals (a member
    /// being added) get the same membership plus themselves.
    Existing {
        members: BTreeSet<u32>,
        /// Members that have started on data only their volume holds: their files name no
        /// peer but themselves. etcd reads `initial-*` only when its data directory is empty;
        /// a member restarting on its data never looks at them, while one whose volume was
        /// lost and replaced by an empty one finds no peer to fetch the cluster from and exits
        /// ("could not retrieve cluster information from the given URLs") instead of joining
        /// under its old identity with an empty log. Checked with etcd 3.5.17, 3.5.35 and
        /// 3.6.16; such a member is replaced through the membership API (`planner`, rule 3).
        sealed: BTreeSet<u32>,
    },
}

/// Which address a member listens on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listen {
    /// `0.0.0.0` on the standard ports (in a pod).
    AllInterfaces,
    /// Exactly the advertised URLs (processes sharing a host, as in tests).
    Advertised,
}

/// Certificate files of a member with TLS: each directory holds `tls.crt`, `tls.key` and
/// `ca.crt` (a `kubernetes.io/tls` Secret mounted there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberTls {
    /// Presented to and required from peers.
    pub peer_dir: String,
    /// Presented on the client port, whose clients must present a certificate of `ca.crt`.
    pub server_dir: String,
    /// The trusted CA files of the peer and of the client port: `ca.crt` of those directories,
    /// or with the user's Secrets the bundles ferroplane keeps ([`crate::tls::user_trust`]).
    pub peer_ca_file: String,
    pub server_ca_file: String,
}

impl MemberTls {
    /// Certificates in `peer_dir` and `server_dir`, each trusting its own `ca.crt`.
    pub fn in_dirs(peer_dir: String, server_dir: String) -> Self {
        Self {
            peer_ca_file: format!("{peer_dir}/ca.crt"),
            server_ca_file: format!("{server_dir}/ca.crt"),
            peer_dir,
            server_dir,
        }
    }

    fn transport(dir: &str, ca_file: &str) -> Value {
        json!({
            "cert-file": format!("{dir}/tls.crt"),
            "key-file": format!("{dir}/tls.key"),
            "trusted-ca-file": ca_file,
            "client-cert-auth": true,
        })
    }
}

/// Configuration of one member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberConfig {
    pub name: String,
    pub data_dir: String,
    pub listen_peer_url: String,
    pub listen_client_url: String,
    pub advertise_peer_url: String,
    pub advertise_client_url: String,
    /// `name=peerURL` of every member, this one included.
    pub initial_cluster: Vec<(String, String)>,
    pub state: InitialState,
    pub token: String,
    /// Where `/metrics` is served besides the client port (a pod's metrics port), if anywhere.
    pub listen_metrics_url: Option<String>,
    /// Further configuration-file entries ([`super::options`]); ferroplane's own win.
    pub options: BTreeMap<String, Value>,
    /// Certificates, when the members speak TLS (the topology's URLs are `https`).
    pub tls: Option<MemberTls>,
}

impl MemberConfig {
    /// The configuration of the member with `ordinal` under `bootstrap`.
    pub fn new(
        topology: &impl Topology,
        ordinal: u32,
        bootstrap: &Bootstrap,
        token: &str,
        data_dir: &str,
        listen: Listen,
    ) -> Self {
        let (mut peers, state) = match bootstrap {
            Bootstrap::New { size } => ((0..*size).collect::<BTreeSet<u32>>(), InitialState::New),
            Bootstrap::Existing { sealed, .. } if sealed.contains(&ordinal) => {
                (BTreeSet::new(), InitialState::Existing)
            }
            Bootstrap::Existing { members, .. } => (members.clone(), InitialState::Existing),
        };
        peers.insert(ordinal);
        // Listen the way the member is advertised: `https` for a TLS topology.
        let (peer_url, client_url) = (topology.peer_url(ordinal), topology.client_url(ordinal));
        let (peer_scheme, client_scheme) = (scheme_of(&peer_url), scheme_of(&client_url));
        let (listen_peer_url, listen_client_url, listen_metrics_url) = match listen {
            Listen::AllInterfaces => (
                format!("{peer_scheme}://0.0.0.0:{PEER_PORT}"),
                format!("{client_scheme}://0.0.0.0:{CLIENT_PORT}"),
                Some(format!("http://0.0.0.0:{METRICS_PORT}")),
            ),
            Listen::Advertised => (
                topology.peer_url(ordinal),
                topology.client_url(ordinal),
                None,
            ),
        };
        Self {
            name: topology.member_name(ordinal),
            data_dir: data_dir.to_owned(),
            listen_peer_url,
            listen_client_url,
            advertise_peer_url: topology.peer_url(ordinal),
            advertise_client_url: topology.client_url(ordinal),
            initial_cluster: peers
                .into_iter()
                .map(|o| (topology.member_name(o), topology.peer_url(o)))
                .collect(),
            state,
            token: token.to_owned(),
            listen_metrics_url,
            options: BTreeMap::new(),
            tls: None,
        }
    }

    /// The same member with certificates.
    pub fn with_tls(mut self, tls: Option<MemberTls>) -> Self {
        self.tls = tls;
        self
    }

    /// The same member with further configuration-file entries.
    pub fn with_options(mut self, options: BTreeMap<String, Value>) -> Self {
        self.options = options;
        self
    }

    /// The configuration file etcd reads with `--config-file`.
    pub fn to_file(&self) -> String {
        let initial_cluster: Vec<String> = self
            .initial_cluster
            .iter()
            .map(|(n, u)| format!("{n}={u}"))
            .collect();
        let mut file: serde_json::Map<String, Value> = self.options.clone().into_iter().collect();
        let own: Value = json!({
            "name": self.name,
            "data-dir": self.data_dir,
            "listen-peer-urls": self.listen_peer_url,
            "listen-client-urls": self.listen_client_url,
            "initial-advertise-peer-urls": self.advertise_peer_url,
            "advertise-client-urls": self.advertise_client_url,
            "initial-cluster": initial_cluster.join(","),
            "initial-cluster-state": match self.state { InitialState::New => "new", InitialState::Existing => "existing" },
            "initial-cluster-token": self.token,
            "logger": "zap",
            // On by default with flags, off by default in a config file; the controller's
            // membership calls go through it.
            "enable-grpc-gateway": true,
        });
        if let Value::Object(own) = own {
            file.extend(own);
        }
        if let Some(url) = &self.listen_metrics_url {
            file.insert("listen-metrics-urls".into(), json!(url));
        }
        if let Some(tls) = &self.tls {
            file.insert(
                "client-transport-security".into(),
                MemberTls::transport(&tls.server_dir, &tls.server_ca_file),
            );
            file.insert(
                "peer-transport-security".into(),
                MemberTls::transport(&tls.peer_dir, &tls.peer_ca_file),
            );
        }
        // Serializing a `Value` built from strings cannot fail.
        serde_json::to_string_pretty(&Value::Object(file)).unwrap_or_default()
    }
}

fn scheme_of(url: &str) -> &str {
    url.split_once("://").map_or("http", |(scheme, _)| scheme)
}

/// ConfigMap data: one configuration file per pod that exists or is about to (`ordinals`).
pub fn config_files(
    topology: &impl Topology,
    ordinals: impl IntoIterator<Item = u32>,
    bootstrap: &Bootstrap,
    token: &str,
    data_dir: &str,
    options: &BTreeMap<String, Value>,
    tls: Option<&MemberTls>,
) -> BTreeMap<String, String> {
    ordinals
        .into_iter()
        .map(|o| {
            let config = MemberConfig::new(
                topology,
                o,
                bootstrap,
                token,
                data_dir,
                Listen::AllInterfaces,
            )
            .with_options(options.clone())
            .with_tls(tls.cloned());
            (format!("{}.json", config.name), config.to_file())
        })
        .collect()
}

/// Kept files (while etcd cannot be asked who its members are) with `options` set in each, so
/// that an options change reaches members restarted meanwhile. An option removed from the spec
/// stays in them until the files are rendered again.
pub fn with_options(
    files: &BTreeMap<String, String>,
    options: &BTreeMap<String, Value>,
) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(key, content)| {
            let content = match serde_json::from_str::<Value>(content) {
                Ok(Value::Object(mut file)) => {
                    for (name, value) in options {
                        file.insert(name.clone(), value.clone());
                    }
                    serde_json::to_string_pretty(&Value::Object(file)).unwrap_or_default()
                }
                // Not a file ferroplane wrote: kept as it is.
                _ => content.clone(),
            };
            (key.clone(), content)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::ClusterNames;

    #[test]
    fn new_cluster_members_list_every_initial_member() {
        let names = ClusterNames::new("e", "ns");
        let c = MemberConfig::new(
            &names,
            1,
            &Bootstrap::New { size: 3 },
            "tok",
            "/var/lib/etcd/data",
            Listen::AllInterfaces,
        );
        assert_eq!(c.state, InitialState::New);
        let file: Value = serde_json::from_str(&c.to_file()).expect("json");
        assert_eq!(
            file["initial-cluster"],
            "e-0=http://e-0.e.ns.svc:2380,e-1=http://e-1.e.ns.svc:2380,e-2=http://e-2.e.ns.svc:2380"
        );
        assert_eq!(file["initial-cluster-state"], "new");
        assert_eq!(file["name"], "e-1");
        assert_eq!(file["listen-peer-urls"], "http://0.0.0.0:2380");
        assert_eq!(file["advertise-client-urls"], "http://e-1.e.ns.svc:2379");
        assert_eq!(file["enable-grpc-gateway"], true);
        assert_eq!(file["listen-metrics-urls"], "http://0.0.0.0:2381");
    }

    #[test]
    fn options_join_the_file_and_never_replace_ferroplanes_entries() {
        let names = ClusterNames::new("e", "ns");
        let options = BTreeMap::from([
            ("quota-backend-bytes".to_owned(), json!(1024)),
            ("name".to_owned(), json!("evil")),
        ]);
        let files = config_files(
            &names,
            0..1,
            &Bootstrap::New { size: 1 },
            "t",
            "/d",
            &options,
            None,
        );
        let file: Value = serde_json::from_str(&files["e-0.json"]).expect("json");
        assert_eq!(file["quota-backend-bytes"], 1024);
        assert_eq!(file["name"], "e-0");
    }

    #[test]
    fn tls_members_listen_and_advertise_https_and_require_client_certificates() {
        let names = ClusterNames::new("e", "ns").with_tls(true);
        let tls = MemberTls::in_dirs("/p".into(), "/s".into());
        let files = config_files(
            &names,
            0..1,
            &Bootstrap::New { size: 1 },
            "t",
            "/d",
            &BTreeMap::new(),
            Some(&tls),
        );
        let file: Value = serde_json::from_str(&files["e-0.json"]).expect("json");
        assert_eq!(file["listen-peer-urls"], "https://0.0.0.0:2380");
        assert_eq!(file["listen-client-urls"], "https://0.0.0.0:2379");
        assert_eq!(file["advertise-client-urls"], "https://e-0.e.ns.svc:2379");
        assert_eq!(file["initial-cluster"], "e-0=https://e-0.e.ns.svc:2380");
        // Metrics and probes stay plain HTTP on their own port.
        assert_eq!(file["listen-metrics-urls"], "http://0.0.0.0:2381");
        let client = &file["client-transport-security"];
        assert_eq!(client["cert-file"], "/s/tls.crt");
        assert_eq!(client["trusted-ca-file"], "/s/ca.crt");
        assert_eq!(client["client-cert-auth"], true);
        assert_eq!(file["peer-transport-security"]["key-file"], "/p/tls.key");
        assert_eq!(file["peer-transport-security"]["client-cert-auth"], true);
    }

    #[test]
    fn kept_files_get_the_current_options() {
        let kept = BTreeMap::from([
            (
                "e-0.json".to_owned(),
                r#"{"name":"e-0","quota-backend-bytes":1}"#.to_owned(),
            ),
            ("README".to_owned(), "not json".to_owned()),
        ]);
        let options = BTreeMap::from([("quota-backend-bytes".to_owned(), json!(2))]);
        let files = with_options(&kept, &options);
        let file: Value = serde_json::from_str(&files["e-0.json"]).expect("json");
        assert_eq!(file["quota-backend-bytes"], 2);
        assert_eq!(file["name"], "e-0");
        assert_eq!(files["README"], "not json");
    }

    #[test]
    fn an_added_member_joins_the_existing_members() {
        let names = ClusterNames::new("e", "ns");
        let bootstrap = Bootstrap::Existing {
            members: BTreeSet::from([0, 1]),
            sealed: BTreeSet::from([0, 1]),
        };
        let c = MemberConfig::new(&names, 2, &bootstrap, "tok", "/d", Listen::AllInterfaces);
        assert_eq!(c.state, InitialState::Existing);
        let listed: Vec<&str> = c.initial_cluster.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(listed, ["e-0", "e-1", "e-2"]);
    }

    #[test]
    fn a_started_member_names_no_peer_to_join_from() {
        let names = ClusterNames::new("e", "ns");
        let bootstrap = Bootstrap::Existing {
            members: BTreeSet::from([0, 1, 2]),
            sealed: BTreeSet::from([0, 2]),
        };
        let sealed = MemberConfig::new(&names, 2, &bootstrap, "tok", "/d", Listen::AllInterfaces);
        let file: Value = serde_json::from_str(&sealed.to_file()).expect("json");
        assert_eq!(file["initial-cluster"], "e-2=http://e-2.e.ns.svc:2380");
        assert_eq!(file["initial-cluster-state"], "existing");
        // Not started yet (added a moment ago): it needs the members to join.
        let joining = MemberConfig::new(&names, 1, &bootstrap, "tok", "/d", Listen::AllInterfaces);
        assert_eq!(joining.initial_cluster.len(), 3);
    }

    #[test]
    fn config_files_are_keyed_by_pod() {
        let names = ClusterNames::new("e", "ns");
        let files = config_files(
            &names,
            0..2,
            &Bootstrap::New { size: 2 },
            "t",
            "/d",
            &BTreeMap::new(),
            None,
        );
        assert_eq!(files.keys().collect::<Vec<_>>(), ["e-0.json", "e-1.json"]);
    }
}
