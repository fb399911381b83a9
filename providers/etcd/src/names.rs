//! Names, labels, ports and URLs of everything rendered for an EtcdCluster, and the field
//! manager and tools image both controllers of this crate write with, in one place so the
//! renderer, the controllers, the membership client and the status agree on them. A ground
//! floor: it imports nothing of this crate.

use std::collections::BTreeMap;

use ferroplane_runtime::children::{MANAGED_BY, MANAGED_BY_LABEL};

/// Port etcd members talk Raft on.
pub const PEER_PORT: i32 = 2380;
/// Port clients (and the JSON gateway) use.
pub const CLIENT_PORT: i32 = 2379;
/// Port of each member's `/metrics` (and `/health`) listener, kept off the client port so that
/// scraping needs no client certificate when client TLS is on.
pub const METRICS_PORT: i32 = 2381;
/// The `app.kubernetes.io/component` label, which tells a cluster's Services apart (a
/// ServiceMonitor selects the `metrics` one).
pub const COMPONENT_LABEL: &str = "app.kubernetes.io/component";
/// The `app.kubernetes.io/name` label of every child and pod.
pub const APP_NAME_LABEL: (&str, &str) = ("app.kubernetes.io/name", "etcd");
/// Annotation on the StatefulSet recording the etcd version it runs, read back to refuse
/// upgrades that skip a minor version.
pub const VERSION_ANNOTATION: &str = "etcd.ferroplane.io/version";
/// Annotation of an EtcdCluster asking for a quorum-loss recovery from a snapshot of an
/// EtcdBackup of its namespace: `<backup>` (its newest snapshot) or `<backup>/<key>`. Acted on
/// only while the cluster has lost its quorum for good (`spec.recovery`).
pub const RECOVER_FROM_ANNOTATION: &str = "etcd.ferroplane.io/recover-from";

/// Annotation on the StatefulSet recording the replicas ferroplane set, so that a hand
/// `kubectl scale` is reverted also while etcd cannot be asked (its `spec.replicas` is then no
/// longer what ferroplane decided).
pub const REPLICAS_ANNOTATION: &str = "etcd.ferroplane.io/replicas";
/// Annotation on the member pod template with the options the members run with (JSON): their
/// configuration files are read at start only, so a change must restart them.
pub const OPTIONS_ANNOTATION: &str = "etcd.ferroplane.io/options";
/// Where each member's data volume is mounted.
pub const DATA_MOUNT: &str = "/var/lib/etcd";
/// Where the peer certificate Secret is mounted (not under the read-only ConfigMap mount).
pub const PEER_TLS_MOUNT: &str = "/etc/etcd-tls/peer";
/// Where the client port's certificate Secret is mounted.
pub const SERVER_TLS_MOUNT: &str = "/etc/etcd-tls/server";
/// Where the trust bundles kept beside the user's TLS Secrets are mounted.
pub const TRUST_TLS_MOUNT: &str = "/etc/etcd-tls/trust";
/// Where the bootstrap ConfigMap is mounted.
pub const CONFIG_MOUNT: &str = "/etc/etcd";
/// Longest EtcdCluster name: pod names (`<name>-<ordinal>`) and the StatefulSet's
/// `controller-revision-hash` label (`<name>-<10 chars>`) must stay DNS labels (63 characters).
pub const MAX_NAME_LEN: usize = 52;

/// Field manager of every server-side apply of an EtcdCluster's children: one per kind, so that
/// the Application controller never silently takes this kind's fields, nor this kind its.
pub const FIELD_MANAGER: &str = "ferroplane-etcdcluster";

/// ferroplane's own image, for the steps of restore Jobs: the release this binary is.
pub fn default_tools_image() -> String {
    format!(
        "ghcr.io/ferroplane/ferroplane:{}",
        env!("CARGO_PKG_VERSION")
    )
}

/// Names of one EtcdCluster's children and the DNS names of its members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterNames {
    pub name: String,
    pub namespace: String,
    /// Whether members speak TLS (`https` URLs) on both ports.
    pub tls: bool,
}

impl ClusterNames {
    pub fn new(name: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            namespace: namespace.into(),
            tls: false,
        }
    }

    /// The same names, with `https` URLs when `tls`.
    pub fn with_tls(mut self, tls: bool) -> Self {
        self.tls = tls;
        self
    }

    fn scheme(&self) -> &'static str {
        if self.tls { "https" } else { "http" }
    }

    /// The Secret of a certificate ferroplane makes: `ca`, `peer`, `server` or `client`.
    pub fn tls_secret(&self, which: &str) -> String {
        format!("{}-tls-{which}", self.name)
    }

    /// DNS names of every member (`*.<peer service>.<namespace>.svc`, and with the cluster
    /// domain), which peer and server certificates must be valid for.
    pub fn member_dns_names(&self) -> Vec<String> {
        let base = format!("{}.{}.svc", self.peer_service(), self.namespace);
        vec![format!("*.{base}"), format!("*.{base}.cluster.local")]
    }

    /// DNS names of the client Service.
    pub fn client_dns_names(&self) -> Vec<String> {
        let service = self.client_service();
        let base = format!("{service}.{}.svc", self.namespace);
        vec![
            service.clone(),
            format!("{service}.{}", self.namespace),
            base.clone(),
            format!("{base}.cluster.local"),
        ]
    }

    /// The headless Service that gives every member a stable DNS name; also the StatefulSet's
    /// `serviceName`.
    pub fn peer_service(&self) -> String {
        self.name.clone()
    }

    pub fn client_service(&self) -> String {
        format!("{}-client", self.name)
    }

    /// The headless Service listing every member's metrics port, for a Prometheus
    /// ServiceMonitor (`app.kubernetes.io/component: metrics`, port `metrics`).
    pub fn metrics_service(&self) -> String {
        format!("{}-metrics", self.name)
    }

    pub fn statefulset(&self) -> String {
        self.name.clone()
    }

    pub fn pdb(&self) -> String {
        self.name.clone()
    }

    /// The PersistentVolumeClaim a StatefulSet creates for the data of an ordinal's pod (claim
    /// template `data`).
    pub fn data_volume(&self, ordinal: u32) -> String {
        format!("data-{}", self.member(ordinal))
    }

    /// The ConfigMap holding one etcd configuration file per member.
    pub fn bootstrap_config(&self) -> String {
        format!("{}-bootstrap", self.name)
    }

    /// Pod (and etcd member) name of an ordinal.
    pub fn member(&self, ordinal: u32) -> String {
        format!("{}-{ordinal}", self.name)
    }

    /// Ordinal of a member name, `None` for names that are not ours.
    pub fn ordinal_of(&self, member_name: &str) -> Option<u32> {
        let rest = member_name.strip_prefix(&self.name)?.strip_prefix('-')?;
        if rest.is_empty() || (rest.len() > 1 && rest.starts_with('0')) {
            return None;
        }
        rest.parse().ok()
    }

    fn member_host(&self, ordinal: u32) -> String {
        format!(
            "{}.{}.{}.svc",
            self.member(ordinal),
            self.peer_service(),
            self.namespace
        )
    }

    pub fn peer_url(&self, ordinal: u32) -> String {
        format!(
            "{}://{}:{PEER_PORT}",
            self.scheme(),
            self.member_host(ordinal)
        )
    }

    pub fn member_client_url(&self, ordinal: u32) -> String {
        format!(
            "{}://{}:{CLIENT_PORT}",
            self.scheme(),
            self.member_host(ordinal)
        )
    }

    /// The URL clients use: the client Service.
    pub fn client_endpoint(&self) -> String {
        format!(
            "{}://{}.{}.svc:{CLIENT_PORT}",
            self.scheme(),
            self.client_service(),
            self.namespace
        )
    }

    /// `app.kubernetes.io/*` labels on every child and pod.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let mut labels = self.selector();
        labels.insert(MANAGED_BY_LABEL.into(), MANAGED_BY.into());
        labels
    }

    /// The subset of [`labels`](Self::labels) that selects this cluster's pods.
    pub fn selector(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (APP_NAME_LABEL.0.into(), APP_NAME_LABEL.1.into()),
            ("app.kubernetes.io/instance".into(), self.name.clone()),
        ])
    }
}

/// A topology maps an ordinal to the URLs of that member. In a cluster they are DNS names of
/// the headless Service; the membership tests run real etcd processes on 127.0.0.1 ports.
pub trait Topology {
    fn member_name(&self, ordinal: u32) -> String;
    fn peer_url(&self, ordinal: u32) -> String;
    fn client_url(&self, ordinal: u32) -> String;
    /// Ordinal of a member from its peer URL (stable even before the member has started and
    /// reported its name).
    fn ordinal_of_peer_url(&self, url: &str) -> Option<u32>;
}

impl Topology for ClusterNames {
    fn member_name(&self, ordinal: u32) -> String {
        self.member(ordinal)
    }

    fn peer_url(&self, ordinal: u32) -> String {
        ClusterNames::peer_url(self, ordinal)
    }

    fn client_url(&self, ordinal: u32) -> String {
        self.member_client_url(ordinal)
    }

    fn ordinal_of_peer_url(&self, url: &str) -> Option<u32> {
        let host = url
            .strip_prefix(&format!("{}://", self.scheme()))?
            .strip_suffix(&format!(":{PEER_PORT}"))?;
        let member =
            host.strip_suffix(&format!(".{}.{}.svc", self.peer_service(), self.namespace))?;
        let ordinal = self.ordinal_of(member)?;
        (self.member(ordinal) == member).then_some(ordinal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_urls_use_the_headless_service() {
        let n = ClusterNames::new("etcd-a", "prod");
        assert_eq!(n.peer_url(2), "http://etcd-a-2.etcd-a.prod.svc:2380");
        assert_eq!(
            n.member_client_url(0),
            "http://etcd-a-0.etcd-a.prod.svc:2379"
        );
        assert_eq!(n.client_endpoint(), "http://etcd-a-client.prod.svc:2379");
    }

    #[test]
    fn ordinals_round_trip_through_peer_urls() {
        let n = ClusterNames::new("etcd-a", "prod");
        for i in [0, 1, 7, 12] {
            assert_eq!(n.ordinal_of_peer_url(&n.peer_url(i)), Some(i));
        }
        assert_eq!(
            n.ordinal_of_peer_url("http://etcd-a-1.etcd-a.other.svc:2380"),
            None
        );
        assert_eq!(
            n.ordinal_of_peer_url("http://etcd-a-01.etcd-a.prod.svc:2380"),
            None
        );
        assert_eq!(
            n.ordinal_of_peer_url("http://etcd-ab-1.etcd-a.prod.svc:2380"),
            None
        );
        assert_eq!(
            n.ordinal_of_peer_url("https://etcd-a-1.etcd-a.prod.svc:2380"),
            None
        );
    }

    #[test]
    fn tls_clusters_use_https_everywhere() {
        let n = ClusterNames::new("etcd-a", "prod").with_tls(true);
        assert_eq!(n.peer_url(2), "https://etcd-a-2.etcd-a.prod.svc:2380");
        assert_eq!(n.client_endpoint(), "https://etcd-a-client.prod.svc:2379");
        assert_eq!(n.ordinal_of_peer_url(&n.peer_url(1)), Some(1));
        assert_eq!(
            n.ordinal_of_peer_url("http://etcd-a-1.etcd-a.prod.svc:2380"),
            None
        );
        assert_eq!(
            n.member_dns_names(),
            ["*.etcd-a.prod.svc", "*.etcd-a.prod.svc.cluster.local"]
        );
    }

    #[test]
    fn ordinal_of_rejects_foreign_names() {
        let n = ClusterNames::new("etcd", "ns");
        assert_eq!(n.ordinal_of("etcd-3"), Some(3));
        assert_eq!(n.ordinal_of("etcd-"), None);
        assert_eq!(n.ordinal_of("etcd-x"), None);
        assert_eq!(n.ordinal_of("etcdx-1"), None);
    }

    #[test]
    fn labels_contain_the_selector() {
        let n = ClusterNames::new("e", "ns");
        let labels = n.labels();
        for (k, v) in n.selector() {
            assert_eq!(labels.get(&k), Some(&v));
        }
        assert_eq!(labels["app.kubernetes.io/managed-by"], "ferroplane");
    }
}
