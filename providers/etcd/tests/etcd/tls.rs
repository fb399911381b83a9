//! Peer and client TLS against real etcd processes (the release pinned in testenv/versions.yaml,
//! built by ferroplane-testenv when missing) on 127.0.0.1, with the certificates ferroplane makes ([`provider_etcd::tls::certs`]) and the
//! member configuration files it renders ([`MemberConfig::with_tls`]): three members bootstrap
//! over TLS peer links, the membership client (etcd's JSON gateway) works only with the client
//! certificate, a learner joins over TLS and is promoted, and the plain-HTTP metrics port the
//! probes use answers `/health` while the client port wants a certificate.
//!
//! Every test owns its processes; a Drop guard kills them, also when the test fails.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ferroplane_testkit::eventually;
use jiff::Timestamp;
use provider_etcd::membership::{
    GatewayClient, Membership, MembershipError, PromoteOutcome, http_with_tls,
};
use provider_etcd::names::Topology;
use provider_etcd::render::bootstrap::{Bootstrap, Listen, MemberConfig, MemberTls};
use provider_etcd::tls::ClientTls;
use provider_etcd::tls::certs::{self, Issued, Leaf};

const MEMBERS: u32 = 4;
const CA_NAME: &str = "test etcd CA";

fn etcd_binary() -> PathBuf {
    ferroplane_testkit::etcd::etcd_binary()
}

/// Members `m<i>` with https peer and client URLs and a plain metrics URL on 127.0.0.1.
struct TlsTopology {
    ports: Vec<(u16, u16, u16)>,
}

impl TlsTopology {
    fn new() -> Self {
        // All listeners held until every port is chosen: no port is handed out twice.
        let listeners: Vec<TcpListener> = (0..3 * MEMBERS)
            .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port"))
            .collect();
        let ports: Vec<u16> = listeners
            .iter()
            .map(|l| l.local_addr().expect("address").port())
            .collect();
        Self {
            ports: ports.chunks(3).map(|p| (p[0], p[1], p[2])).collect(),
        }
    }

    fn metrics_url(&self, ordinal: u32) -> String {
        format!("http://127.0.0.1:{}", self.ports[ordinal as usize].2)
    }
}

impl Topology for TlsTopology {
    fn member_name(&self, ordinal: u32) -> String {
        format!("m{ordinal}")
    }
    fn peer_url(&self, ordinal: u32) -> String {
        format!("https://127.0.0.1:{}", self.ports[ordinal as usize].0)
    }
    fn client_url(&self, ordinal: u32) -> String {
        format!("https://127.0.0.1:{}", self.ports[ordinal as usize].1)
    }
    fn ordinal_of_peer_url(&self, url: &str) -> Option<u32> {
        (0..MEMBERS).find(|&o| self.peer_url(o) == url)
    }
}

fn write_secret(dir: &Path, leaf: &Issued, ca: &Issued) {
    std::fs::create_dir_all(dir).expect("secret dir");
    std::fs::write(dir.join("tls.crt"), &leaf.cert_pem).expect("tls.crt");
    std::fs::write(dir.join("tls.key"), &leaf.key_pem).expect("tls.key");
    std::fs::write(dir.join("ca.crt"), &ca.cert_pem).expect("ca.crt");
}

struct TlsCluster {
    dir: tempfile::TempDir,
    topology: TlsTopology,
    processes: Vec<Option<Child>>,
    client: ClientTls,
    /// The CA's key, to sign certificates ferroplane would not make.
    ca_key_pem: String,
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        for child in self.processes.iter_mut().flatten() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl TlsCluster {
    /// Certificates as ferroplane makes them, for the names the members are reached by here.
    fn new() -> Self {
        etcd_binary();
        let dir = tempfile::tempdir().expect("temp dir");
        let now = Timestamp::now();
        let ca = certs::new_ca(CA_NAME, now).expect("CA");
        let hosts = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
        for leaf in [Leaf::Peer, Leaf::Server] {
            let issued = certs::issue(CA_NAME, &ca.key_pem, leaf, &hosts, now).expect("leaf");
            write_secret(&dir.path().join(leaf.suffix()), &issued, &ca);
        }
        let client = certs::issue(CA_NAME, &ca.key_pem, Leaf::Client, &[], now).expect("client");
        let ca_key_pem = ca.key_pem.clone();
        Self {
            ca_key_pem,
            dir,
            topology: TlsTopology::new(),
            processes: (0..MEMBERS).map(|_| None).collect(),
            client: ClientTls {
                ca_pem: ca.cert_pem,
                cert_pem: client.cert_pem,
                key_pem: client.key_pem,
            },
        }
    }

    fn start(&mut self, ordinal: u32, bootstrap: &Bootstrap) {
        self.start_with_options(ordinal, bootstrap, Default::default());
    }

    fn start_with_options(
        &mut self,
        ordinal: u32,
        bootstrap: &Bootstrap,
        options: std::collections::BTreeMap<String, serde_json::Value>,
    ) {
        let data_dir = self.dir.path().join(format!("m{ordinal}.etcd"));
        let mut config = MemberConfig::new(
            &self.topology,
            ordinal,
            bootstrap,
            "tls-token",
            &data_dir.to_string_lossy(),
            Listen::Advertised,
        )
        .with_tls(Some(MemberTls::in_dirs(
            self.dir.path().join("peer").to_string_lossy().into_owned(),
            self.dir
                .path()
                .join("server")
                .to_string_lossy()
                .into_owned(),
        )));
        config.listen_metrics_url = Some(self.topology.metrics_url(ordinal));
        let config = config.with_options(options);
        let path = self.dir.path().join(format!("m{ordinal}.json"));
        std::fs::write(&path, config.to_file()).expect("config");
        let log =
            std::fs::File::create(self.dir.path().join(format!("m{ordinal}.log"))).expect("log");
        let child = Command::new(etcd_binary())
            .arg(format!("--config-file={}", path.display()))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start etcd");
        self.processes[ordinal as usize] = Some(child);
    }

    fn log(&self, ordinal: u32) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("m{ordinal}.log"))).unwrap_or_default()
    }

    fn gateway(&self, tls: &ClientTls, members: u32) -> GatewayClient {
        let http = http_with_tls(
            reqwest::Client::builder().timeout(Duration::from_secs(5)),
            tls,
        )
        .expect("a TLS client");
        GatewayClient::with_http(
            http,
            (0..members).map(|o| self.topology.client_url(o)).collect(),
        )
    }
}

/// (name, learner) of the listed members, sorted.
async fn listed(client: &GatewayClient) -> Result<Vec<(String, bool)>, MembershipError> {
    let mut members: Vec<(String, bool)> = client
        .list()
        .await?
        .into_iter()
        .map(|m| (m.name, m.is_learner))
        .collect();
    members.sort();
    Ok(members)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_bootstrap_join_and_answer_only_with_the_client_certificate() {
    let mut cluster = TlsCluster::new();
    for o in 0..3 {
        cluster.start(o, &Bootstrap::New { size: 3 });
    }
    let client = cluster.gateway(&cluster.client.clone(), 3);
    let voters =
        |n: u32| -> Vec<(String, bool)> { (0..n).map(|o| (format!("m{o}"), false)).collect() };
    let waited = eventually("three voters listed over TLS")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(200))
        .try_until_async(|| async {
            match listed(&client).await {
                Ok(members) if members == voters(3) => Ok(()),
                other => Err(format!("{other:?}")),
            }
        })
        .await;
    if let Err(e) = waited {
        panic!("{e}\nm0 log:\n{}", cluster.log(0));
    }
    // Every member answers its status over TLS, with a leader elected over TLS peer links.
    eventually("a leader, seen by every member")
        .within(Duration::from_secs(30))
        .every(Duration::from_millis(200))
        .until_async(|| async {
            let mut leaders = Vec::new();
            for o in 0..3 {
                match client.status(&cluster.topology.client_url(o)).await {
                    Ok(s) if s.leader != 0 => leaders.push(s.leader),
                    _ => return false,
                }
            }
            leaders.windows(2).all(|w| w[0] == w[1])
        })
        .await;

    // Without a client certificate, or with one of another CA, etcd refuses the connection.
    let no_cert = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .tls_certs_only(
            reqwest::Certificate::from_pem_bundle(cluster.client.ca_pem.as_bytes()).expect("CA"),
        )
        .build()
        .expect("client");
    let refused = no_cert
        .post(format!(
            "{}/v3/cluster/member/list",
            cluster.topology.client_url(0)
        ))
        .body("{}")
        .send()
        .await;
    assert!(
        refused.is_err(),
        "a client without a certificate is refused: {refused:?}"
    );
    let other_ca = certs::new_ca("another CA", Timestamp::now()).expect("CA");
    let stranger = certs::issue(
        "another CA",
        &other_ca.key_pem,
        Leaf::Client,
        &[],
        Timestamp::now(),
    )
    .expect("client");
    let stranger = ClientTls {
        ca_pem: cluster.client.ca_pem.clone(),
        cert_pem: stranger.cert_pem,
        key_pem: stranger.key_pem,
    };
    let refused = cluster.gateway(&stranger, 3).list().await;
    assert!(
        matches!(refused, Err(MembershipError::Unreachable { .. })),
        "a certificate of another CA is refused: {refused:?}"
    );

    // The probes' port: plain HTTP, no certificate, and it reports health.
    let health = reqwest::Client::new()
        .get(format!("{}/health", cluster.topology.metrics_url(0)))
        .send()
        .await
        .expect("the metrics port answers");
    assert!(health.status().is_success(), "{health:?}");

    // A learner joins over TLS peer links and is promoted once it has caught up.
    // etcd refuses a membership change until every member has been connected for a while
    // ("unhealthy cluster", a transient refusal the controller retries too).
    let added = eventually("the learner added")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(300))
        .try_until_async(|| async {
            match client.add_learner(&cluster.topology.peer_url(3)).await {
                Ok(member) => Ok(member),
                Err(e) if e.is_transient() => Err(e.to_string()),
                Err(e) => panic!("member add refused: {e}"),
            }
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    cluster.start(
        3,
        &Bootstrap::Existing {
            members: [0, 1, 2].into(),
            sealed: [0, 1, 2].into(),
        },
    );
    let waited = eventually("the learner promoted")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(300))
        .try_until_async(|| async {
            match client.promote(added.id).await {
                Ok(PromoteOutcome::Promoted) => Ok(()),
                other => Err(format!("{other:?}")),
            }
        })
        .await;
    if let Err(e) = waited {
        panic!("{e}\nm3 log:\n{}", cluster.log(3));
    }
    let four = cluster.gateway(&cluster.client.clone(), 4);
    eventually("four voters")
        .within(Duration::from_secs(30))
        .every(Duration::from_millis(200))
        .until_async(|| async { listed(&four).await.ok() == Some(voters(4)) })
        .await;
}

// A snapshot through the maintenance API of a TLS member, with the controller's client
// certificate: the keys written before are in it, and its checksum was verified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_streams_through_the_gateway_and_carries_the_keys() {
    use base64::Engine as _;
    let mut cluster = TlsCluster::new();
    cluster.start(0, &Bootstrap::New { size: 1 });
    let client = cluster.gateway(&cluster.client.clone(), 1);
    eventually("the member answers over TLS")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(200))
        .until_async(|| async { client.list().await.is_ok() })
        .await;
    let http = http_with_tls(
        reqwest::Client::builder().timeout(Duration::from_secs(30)),
        &cluster.client,
    )
    .expect("a TLS client");
    let url = cluster.topology.client_url(0);
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    for i in 0..20 {
        let response = http
            .post(format!("{url}/v3/kv/put"))
            .json(&serde_json::json!({"key": b64(&format!("backup-key-{i}")), "value": b64(&format!("value-{i}"))}))
            .send()
            .await
            .expect("put");
        assert!(response.status().is_success());
    }
    let mut saved: Vec<u8> = Vec::new();
    let info = provider_etcd::membership::snapshot::save(&http, &url, None, &mut saved)
        .await
        .expect("a verified snapshot");
    assert_eq!(info.size, saved.len() as u64);
    assert!(saved.len() > 32, "a database and its checksum");
    for i in 0..20 {
        let key = format!("backup-key-{i}");
        assert!(
            saved.windows(key.len()).any(|w| w == key.as_bytes()),
            "{key} is in the snapshot"
        );
    }
    // Without the client certificate there is no snapshot.
    let plain = reqwest::Client::builder()
        .tls_certs_only(
            reqwest::Certificate::from_pem_bundle(cluster.client.ca_pem.as_bytes()).expect("CA"),
        )
        .build()
        .expect("client");
    let refused =
        provider_etcd::membership::snapshot::save(&plain, &url, None, &mut Vec::new()).await;
    assert!(refused.is_err(), "{refused:?}");
}

// A real member past its space quota (an option rendered into its configuration file) raises
// NOSPACE: the member still answers and follows its leader, so it counts as healthy for quorum,
// and the alarm is read from its status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nospace_is_an_alarm_of_a_healthy_member() {
    use base64::Engine as _;
    use provider_etcd::planner::Health;
    let mut cluster = TlsCluster::new();
    cluster.start_with_options(
        0,
        &Bootstrap::New { size: 1 },
        [("quota-backend-bytes".to_owned(), serde_json::json!(16384))].into(),
    );
    let client = cluster.gateway(&cluster.client.clone(), 1);
    eventually("the member answers")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(200))
        .until_async(|| async { client.list().await.is_ok() })
        .await;
    let http = http_with_tls(
        reqwest::Client::builder().timeout(Duration::from_secs(10)),
        &cluster.client,
    )
    .expect("a TLS client");
    let url = cluster.topology.client_url(0);
    let value = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 3000]);
    let mut refused = None;
    for i in 0..50 {
        let response = http
            .post(format!("{url}/v3/kv/put"))
            .json(&serde_json::json!({"key": base64::engine::general_purpose::STANDARD.encode(format!("k{i}")), "value": value}))
            .send()
            .await
            .expect("put answered");
        let status = response.status();
        let answer: serde_json::Value = response.json().await.expect("JSON");
        // etcd 3.4's gateway answers a refusal 200 with `error`; 3.5+ answer an HTTP error
        // status with `message`.
        if !status.is_success() || answer.get("error").is_some() {
            refused = Some(answer);
            break;
        }
    }
    let refused = refused.expect("writes fail once the quota is reached");
    assert!(
        refused
            .get("message")
            .or_else(|| refused.get("error"))
            .and_then(|e| e.as_str())
            .is_some_and(|e| e.contains("database space exceeded")),
        "{refused}"
    );
    let observed = provider_etcd::scaling::observe(&client, &cluster.topology, |_| false)
        .await
        .expect("observed");
    let member = &observed.members[0];
    assert_eq!(member.health, Health::Healthy, "an alarm is not ill health");
    assert_eq!(
        member.status.as_ref().map(|s| s.alarms()),
        Some(vec!["NOSPACE"])
    );
}

// Defragmentation on a real member: after keys are written, deleted and the history compacted,
// the database file is mostly free pages; the policy picks the member and the membership
// client's defragment shrinks the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compacted_member_is_picked_and_defragmented() {
    use base64::Engine as _;
    use provider_etcd::defrag::DefragPolicy;
    let b64 = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
    let mut cluster = TlsCluster::new();
    cluster.start(0, &Bootstrap::New { size: 1 });
    let client = cluster.gateway(&cluster.client.clone(), 1);
    eventually("the member answers")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(200))
        .until_async(|| async { client.list().await.is_ok() })
        .await;
    let http = http_with_tls(
        reqwest::Client::builder().timeout(Duration::from_secs(30)),
        &cluster.client,
    )
    .expect("a TLS client");
    let url = cluster.topology.client_url(0);
    let value = b64(&vec![7u8; 64 * 1024]);
    for i in 0..64 {
        let key = b64(format!("big/{i}").as_bytes());
        let r = http
            .post(format!("{url}/v3/kv/put"))
            .json(&serde_json::json!({"key": key, "value": value}))
            .send()
            .await
            .expect("put");
        assert!(r.status().is_success());
    }
    let deleted: serde_json::Value = http
        .post(format!("{url}/v3/kv/deleterange"))
        .json(&serde_json::json!({"key": b64(b"big/"), "range_end": b64(b"big0")}))
        .send()
        .await
        .expect("delete")
        .json()
        .await
        .expect("JSON");
    let revision = deleted["header"]["revision"]
        .as_str()
        .expect("revision")
        .to_owned();
    let compacted = http
        .post(format!("{url}/v3/kv/compaction"))
        .json(&serde_json::json!({"revision": revision, "physical": true}))
        .send()
        .await
        .expect("compaction");
    assert!(compacted.status().is_success());
    let policy = DefragPolicy {
        min_free_bytes: 1 << 20,
        ..DefragPolicy::default()
    };
    // The compacted pages count as free once the backend commits again: a write makes it.
    let before = eventually("the compacted pages to be free")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(300))
        .try_until_async(|| async {
            http.post(format!("{url}/v3/kv/put"))
                .json(&serde_json::json!({"key": b64(b"tick"), "value": b64(b"1")}))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = client.status(&url).await.map_err(|e| e.to_string())?;
            if policy.wants(status.db_size, status.db_size_in_use, 2 << 30) {
                Ok(status)
            } else {
                Err(format!(
                    "{} of {} bytes in use",
                    status.db_size_in_use, status.db_size
                ))
            }
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let observed = provider_etcd::scaling::observe(&client, &cluster.topology, |_| false)
        .await
        .expect("observed");
    assert_eq!(
        policy
            .pick(&observed, 2 << 30)
            .map(|m| m.member.name.as_str()),
        Some("m0")
    );
    client.defragment(&url).await.expect("defragmented");
    let after = client.status(&url).await.expect("status");
    assert!(
        after.db_size < before.db_size / 2,
        "the file shrank: {} → {} bytes",
        before.db_size,
        after.db_size
    );
    assert!(!policy.wants(after.db_size, after.db_size_in_use, 2 << 30));
}

// Authentication on a TLS member: the client certificate alone does not make a request
// root's (etcd's gateway never takes the user from a certificate), the membership client
// authenticates and every call it makes goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auth_the_client_certificate_is_not_enough_and_the_token_is() {
    use provider_etcd::membership::auth::USER_EMPTY;
    use provider_etcd::membership::{AuthStatus, Password, RootCredentials};
    let mut cluster = TlsCluster::new();
    cluster.start(0, &Bootstrap::New { size: 1 });
    let mut client = cluster.gateway(&cluster.client.clone(), 1);
    eventually("the member answers over TLS")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(200))
        .until_async(|| async { client.list().await.is_ok() })
        .await;
    let password = Password::new("tls-Pa55-wd");
    client.set_credentials(RootCredentials::new([password.clone()]));
    client.enable_auth(&password).await.expect("enable auth");
    let http = http_with_tls(
        reqwest::Client::builder().timeout(Duration::from_secs(5)),
        &cluster.client,
    )
    .expect("a TLS client");
    let url = cluster.topology.client_url(0);
    let response = http
        .post(format!("{url}/v3/kv/range"))
        .json(&serde_json::json!({"key": "aw=="}))
        .send()
        .await
        .expect("etcd answers");
    let status = response.status();
    let text = response.text().await.expect("a body");
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "HTTP {status} {text:?} is not JSON ({e}); log: {}",
            cluster.log(0)
        )
    });
    assert!(
        answer.to_string().contains(USER_EMPTY),
        "a certificate without a token reads nothing: {answer}"
    );
    assert_eq!(
        client.auth_status().await.expect("auth status"),
        AuthStatus::Enabled { password: 0 },
        "log: {}",
        cluster.log(0)
    );
    let peer = cluster.topology.peer_url(1);
    let learner = client.add_learner(&peer).await.expect("member add");
    client.remove(learner.id).await.expect("member remove");
    client
        .status(&url)
        .await
        .expect("status with the certificate and the token");
    // A client certificate with a Common Name (ferroplane's before authentication existed,
    // or a user's) is refused by the gateway once authentication is on, whatever the token.
    let mut named = cluster.gateway(&client_with_common_name(&cluster, "root"), 1);
    named.set_credentials(RootCredentials::new([password.clone()]));
    let refused = named.list().await;
    assert!(
        matches!(refused, Err(MembershipError::CommonNameRefused { .. })),
        "{refused:?}"
    );
}

/// A client certificate of the cluster's CA whose subject names `common_name` (ferroplane's
/// own have none).
fn client_with_common_name(cluster: &TlsCluster, common_name: &str) -> ClientTls {
    use rcgen::{
        BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose,
        IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    let mut ca = CertificateParams::default();
    ca.distinguished_name = DistinguishedName::new();
    ca.distinguished_name.push(DnType::CommonName, CA_NAME);
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let issuer = Issuer::new(ca, KeyPair::from_pem(&cluster.ca_key_pem).expect("CA key"));
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().expect("key");
    let cert = params.signed_by(&key, &issuer).expect("signed");
    ClientTls {
        ca_pem: cluster.client.ca_pem.clone(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    }
}

/// Why CA rotation restarts the members (`provider_etcd::tls::rotation`): etcd trusts every CA
/// of a bundle in its trusted CA file, but reads that file only at start. A client certificate
/// of a second CA is refused after the file gained that CA, and answered once the member
/// restarted, beside one of the first CA.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_trusts_a_new_ca_of_its_bundle_only_after_a_restart() {
    let mut cluster = TlsCluster::new();
    let alone = Bootstrap::New { size: 1 };
    cluster.start(0, &alone);
    let old = cluster.gateway(&cluster.client.clone(), 1);
    if let Err(e) = eventually("the member answers the first CA's client")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(200))
        .try_until_async(|| async { listed(&old).await.map_err(|e| e.to_string()) })
        .await
    {
        panic!("{e}\nm0 log:\n{}", cluster.log(0));
    }
    let now = Timestamp::now();
    let second = certs::new_ca("second CA", now).expect("CA");
    let issued = certs::issue("second CA", &second.key_pem, Leaf::Client, &[], now).expect("leaf");
    let newcomer = ClientTls {
        // The member's server certificate is still the first CA's.
        ca_pem: cluster.client.ca_pem.clone(),
        cert_pem: issued.cert_pem,
        key_pem: issued.key_pem,
    };
    let bundle = format!("{}{}", cluster.client.ca_pem, second.cert_pem);
    for leaf in ["peer", "server"] {
        std::fs::write(cluster.dir.path().join(leaf).join("ca.crt"), &bundle).expect("ca.crt");
    }
    // A new connection, after the file changed: still refused.
    let refused = cluster.gateway(&newcomer, 1).list().await;
    assert!(
        matches!(refused, Err(MembershipError::Unreachable { .. })),
        "etcd has not re-read its trusted CA file: {refused:?}"
    );
    listed(&old)
        .await
        .expect("the member is up: the refusal is the second CA's");

    if let Some(mut child) = cluster.processes[0].take() {
        let _ = child.kill();
        let _ = child.wait();
    }
    cluster.start(0, &alone);
    let both = [
        cluster.gateway(&newcomer, 1),
        cluster.gateway(&cluster.client.clone(), 1),
    ];
    if let Err(e) = eventually("both CAs' clients answered after the restart")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(200))
        .try_until_async(|| async {
            for client in &both {
                listed(client).await.map_err(|e| e.to_string())?;
            }
            Ok::<(), String>(())
        })
        .await
    {
        panic!("{e}\nm0 log:\n{}", cluster.log(0));
    }
}
