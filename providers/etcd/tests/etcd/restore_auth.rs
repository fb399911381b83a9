//! A snapshot taken with authentication, restored with another root password: what a restore
//! Job does (fetch: reset root's password in the snapshot; `etcdutl snapshot restore`; the
//! member starts), with real etcd and etcdutl of each pinned release (3.5 and 3.6: the reset
//! walks bbolt's pages, whose layout and `authpb.User` both releases share), built by
//! ferroplane-testenv.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ferroplane_testkit::eventually;
use provider_etcd::membership::auth::AUTH_FAILED;
use provider_etcd::membership::{GatewayClient, Membership as _, Password, RootCredentials};
use provider_etcd::restore::root_password::reset_root_password;

struct Member(Child);

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// One member named `m0` on `data_dir`, its client and peer URLs on `ports`.
fn start(etcd: &Path, data_dir: &Path, ports: (u16, u16), log: &Path) -> Member {
    let (client, peer) = (
        format!("http://127.0.0.1:{}", ports.0),
        format!("http://127.0.0.1:{}", ports.1),
    );
    let log = std::fs::File::create(log).expect("log file");
    Member(
        Command::new(etcd)
            .args(["--name", "m0", "--data-dir"])
            .arg(data_dir)
            .args(["--listen-client-urls", &client, "--advertise-client-urls"])
            .arg(&client)
            .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls"])
            .arg(&peer)
            .args(["--initial-cluster", &format!("m0={peer}")])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("etcd starts"),
    )
}

async fn post(
    url: &str,
    path: &str,
    body: serde_json::Value,
    token: Option<&str>,
) -> serde_json::Value {
    let mut request = reqwest::Client::new()
        .post(format!("{url}{path}"))
        .json(&body);
    if let Some(token) = token {
        request = request.header("Authorization", token);
    }
    match request.send().await {
        Ok(response) => response.json().await.unwrap_or_default(),
        Err(e) => serde_json::json!({"unreachable": e.to_string()}),
    }
}

/// A token for root with `password`, or what etcd answered.
async fn root_token(url: &str, password: &str) -> Result<String, String> {
    let body = serde_json::json!({"name": "root", "password": password});
    let answer = post(url, "/v3/auth/authenticate", body, None).await;
    answer["token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| answer.to_string())
}

/// Root's user record as etcd stores it (`authpb.User`: name, a bcrypt hash, its role).
fn decoy_record() -> Vec<u8> {
    let hash = "$2a$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234";
    assert_eq!(hash.len(), 60);
    let mut record = b"root\x0a\x04root\x12\x3c".to_vec();
    record.extend(hash.as_bytes());
    record.extend(b"\x1a\x04root");
    record
}

#[tokio::test]
async fn an_auth_snapshot_of_3_5_restores_with_the_current_root_password() {
    restores_with_the_current_root_password(ferroplane_testkit::etcd::pinned_3_5_release()).await;
}

#[tokio::test]
async fn an_auth_snapshot_of_3_6_restores_with_the_current_root_password() {
    restores_with_the_current_root_password(ferroplane_testkit::etcd::pinned_release()).await;
}

async fn restores_with_the_current_root_password(release: String) {
    let (etcd, etcdutl) = tokio::task::spawn_blocking(move || {
        ferroplane_testkit::etcd::release_with_etcdutl(&release)
    })
    .await
    .expect("the build does not panic");
    let dir = tempfile::tempdir().expect("temp dir");
    let ports = (free_port(), free_port());
    let url = format!("http://127.0.0.1:{}", ports.0);
    let source = start(
        &etcd,
        &dir.path().join("source.etcd"),
        ports,
        &dir.path().join("source.log"),
    );
    let old = Password::new("old-Pa55");
    let mut client = GatewayClient::with_http(reqwest::Client::new(), vec![url.clone()]);
    client.set_credentials(RootCredentials::new([old.clone()]));
    eventually("the source member to take root and authentication")
        .within(Duration::from_secs(30))
        .every(Duration::from_millis(200))
        .until_async(|| async { client.enable_auth(&old).await.map_err(|e| e.to_string()) })
        .await;
    let token = root_token(&url, old.expose()).await.expect("root's token");
    let put =
        serde_json::json!({"key": STANDARD.encode("app/k"), "value": STANDARD.encode("kept")});
    post(&url, "/v3/kv/put", put, Some(&token)).await;
    // A value that holds what root's record looks like, byte for byte: the cluster's data,
    // which the reset must leave as it is.
    let decoy = decoy_record();
    let put =
        serde_json::json!({"key": STANDARD.encode("app/decoy"), "value": STANDARD.encode(&decoy)});
    post(&url, "/v3/kv/put", put, Some(&token)).await;
    let snapshot = dir.path().join("snapshot.db");
    let mut file = tokio::fs::File::create(&snapshot)
        .await
        .expect("snapshot file");
    let (info, _) = client
        .save_snapshot(&mut file)
        .await
        .expect("a snapshot with auth");
    drop(file);
    drop(source);

    // The fetch step: root's password becomes the one `spec.auth` names now.
    let reset = reset_root_password(&snapshot, b"new-Pa55", &info.sha256).expect("reset");
    assert!(reset.root_found, "root's record found");
    assert_ne!(
        reset.sha256, info.sha256,
        "the database changed, and its trailer with it"
    );

    // The restore step, then the member, on new ports (a new cluster).
    let restored_dir = dir.path().join("restored.etcd");
    let ports = (free_port(), free_port());
    let url = format!("http://127.0.0.1:{}", ports.0);
    let peer = format!("http://127.0.0.1:{}", ports.1);
    let out = Command::new(&etcdutl)
        .args(["snapshot", "restore"])
        .arg(&snapshot)
        .args(["--name", "m0", "--initial-cluster", &format!("m0={peer}")])
        .args(["--initial-advertise-peer-urls", &peer, "--data-dir"])
        .arg(&restored_dir)
        .output()
        .expect("etcdutl runs");
    assert!(
        out.status.success(),
        "etcdutl restores the rewritten snapshot (its trailer checked): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _restored = start(
        &etcd,
        &restored_dir,
        ports,
        &dir.path().join("restored.log"),
    );
    let token = eventually("root to authenticate with the new password")
        .within(Duration::from_secs(30))
        .every(Duration::from_millis(200))
        .until_async(|| root_token(&url, "new-Pa55"))
        .await;
    let refused = root_token(&url, old.expose())
        .await
        .expect_err("the old password is gone");
    assert!(refused.contains(AUTH_FAILED), "{refused}");
    let range = serde_json::json!({"key": STANDARD.encode("app/k")});
    let read = post(&url, "/v3/kv/range", range, Some(&token)).await;
    assert_eq!(
        read["kvs"][0]["value"]
            .as_str()
            .map(|v| STANDARD.decode(v).unwrap_or_default()),
        Some(b"kept".to_vec()),
        "the snapshot's keys are there: {read}"
    );
    let range = serde_json::json!({"key": STANDARD.encode("app/decoy")});
    let read = post(&url, "/v3/kv/range", range, Some(&token)).await;
    assert_eq!(
        read["kvs"][0]["value"]
            .as_str()
            .map(|v| STANDARD.decode(v).unwrap_or_default()),
        Some(decoy),
        "a value that looks like root's record is the cluster's data, not root's"
    );
    let anonymous = post(
        &url,
        "/v3/kv/range",
        serde_json::json!({"key": STANDARD.encode("app/k")}),
        None,
    )
    .await;
    assert!(
        anonymous.get("kvs").is_none(),
        "authentication is still on: {anonymous}"
    );
}
