//! Serving a snapshot file to a restore's member Jobs (`ferroplane etcd-restore serve`, see
//! provider-etcd's `restore::render::source_server_job`). A snapshot in a ReadWriteOnce claim
//! can be mounted on one node at a time, so member Jobs mounting it themselves run one after
//! another; instead one pod mounts it and the members fetch it from it over HTTPS, all at once,
//! wherever they run.
//!
//! Only `GET /snapshot?token=<token>` gets the file (the token is the restore's Secret's, in the
//! query, which every log of a URL leaves out (`snapshot_fetch::redacted`); compared
//! through digests so the time taken says nothing of it); `GET /healthz` answers the readiness
//! probe; anything else is a 404. The file is streamed, never held in memory. The certificate
//! is the restore's own, issued by a CA made for it, whose certificate the fetchers trust alone.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;
use sha2::{Digest as _, Sha256};
use tokio_util::io::ReaderStream;

/// What one server serves, and to whom.
pub struct Source {
    pub file: PathBuf,
    /// The token a fetcher's URL must carry.
    pub token: String,
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
}

struct Served {
    file: PathBuf,
    token_digest: [u8; 32],
}

/// Serves `source` on `listen` until `handle` is told to shut down; `handle.listening()` says
/// the bound address.
pub async fn serve(
    source: Source,
    listen: SocketAddr,
    handle: Handle<SocketAddr>,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        source.token.len() >= 32,
        "the token is {} characters: too short to guard a snapshot",
        source.token.len()
    );
    let tls = RustlsConfig::from_pem(source.cert_pem, source.key_pem)
        .await
        .context("reading the server's certificate and key")?;
    let served = Arc::new(Served {
        file: source.file,
        token_digest: Sha256::digest(source.token.as_bytes()).into(),
    });
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/snapshot", get(snapshot))
        .with_state(served);
    axum_server::bind_rustls(listen, tls)
        .handle(handle)
        .serve(app.into_make_service())
        .await
        .with_context(|| format!("serving on {listen}"))
}

#[derive(serde::Deserialize)]
struct Asked {
    #[serde(default)]
    token: String,
}

async fn snapshot(State(served): State<Arc<Served>>, Query(asked): Query<Asked>) -> Response {
    let digest: [u8; 32] = Sha256::digest(asked.token.as_bytes()).into();
    if digest != served.token_digest {
        return StatusCode::NOT_FOUND.into_response();
    }
    let file = match tokio::fs::File::open(&served.file).await {
        Ok(file) => file,
        Err(e) => {
            tracing::error!(file = %served.file.display(), error = %e, "cannot open the snapshot");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot open the snapshot",
            )
                .into_response();
        }
    };
    let len = match file.metadata().await {
        Ok(meta) => meta.len(),
        Err(e) => {
            tracing::error!(file = %served.file.display(), error = %e, "cannot read the snapshot's size");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot read the snapshot",
            )
                .into_response();
        }
    };
    tracing::info!(bytes = len, "serving the snapshot");
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (header::CONTENT_LENGTH, len.to_string()),
        ],
        Body::from_stream(ReaderStream::new(file)),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot_fetch::{check, download};
    use provider_etcd::tls::certs::{Leaf, issue, new_ca};

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    struct Running {
        handle: Handle<SocketAddr>,
        address: SocketAddr,
        ca_pem: String,
        _dir: tempfile::TempDir,
        snapshot: Vec<u8>,
    }

    async fn start() -> Running {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("snapshot.db");
        let mut snapshot = vec![5u8; 3 * 1024 * 1024 + 17];
        let trailer = Sha256::digest(&snapshot);
        snapshot.extend_from_slice(&trailer);
        std::fs::write(&file, &snapshot).expect("write");
        let now = jiff::Timestamp::now();
        let ca = new_ca("restore source", now).expect("ca");
        let leaf = issue(
            "restore source",
            &ca.key_pem,
            Leaf::Server,
            &["127.0.0.1".to_owned()],
            now,
        )
        .expect("leaf");
        let handle = Handle::new();
        let source = Source {
            file,
            token: TOKEN.to_owned(),
            cert_pem: leaf.cert_pem.into_bytes(),
            key_pem: leaf.key_pem.into_bytes(),
        };
        let serving = handle.clone();
        tokio::spawn(async move {
            serve(source, "127.0.0.1:0".parse().expect("addr"), serving)
                .await
                .expect("serves");
        });
        let address = handle.listening().await.expect("listening");
        Running {
            handle,
            address,
            ca_pem: ca.cert_pem,
            _dir: dir,
            snapshot,
        }
    }

    #[tokio::test]
    async fn the_snapshot_goes_to_a_fetcher_with_the_token_and_the_ca_only() {
        let server = start().await;
        let out = tempfile::tempdir().expect("temp dir");
        let url = |token: &str| format!("https://{}/snapshot?token={token}", server.address);
        let ca = server.ca_pem.as_bytes();

        let (size, digest) = download(&url(TOKEN), &out.path().join("a.db"), Some(ca))
            .await
            .expect("fetched");
        assert_eq!(size, server.snapshot.len() as u64);
        check(&digest, None).expect("intact");
        assert_eq!(
            std::fs::read(out.path().join("a.db")).expect("read"),
            server.snapshot
        );

        let wrong = download(&url("not-the-token"), &out.path().join("b.db"), Some(ca))
            .await
            .expect_err("another token");
        assert!(wrong.to_string().contains("404"), "{wrong}");
        assert!(!wrong.to_string().contains("not-the-token"), "{wrong}");
        let bare = format!("https://{}/snapshot", server.address);
        let none = download(&bare, &out.path().join("c.db"), Some(ca))
            .await
            .expect_err("no token");
        assert!(none.to_string().contains("404"), "{none}");

        // Without the restore's CA the server is not trusted, and with another CA neither.
        let untrusted = download(&url(TOKEN), &out.path().join("d.db"), None)
            .await
            .expect_err("public roots only");
        assert!(!untrusted.to_string().contains(TOKEN), "{untrusted}");
        let other = new_ca("someone else", jiff::Timestamp::now()).expect("ca");
        download(
            &url(TOKEN),
            &out.path().join("e.db"),
            Some(other.cert_pem.as_bytes()),
        )
        .await
        .expect_err("another CA");
        assert!(!out.path().join("d.db").exists() && !out.path().join("e.db").exists());

        let health = reqwest::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(ca).expect("pem")])
            .build()
            .expect("client")
            .get(format!("https://{}/healthz", server.address))
            .send()
            .await
            .expect("answers");
        assert!(health.status().is_success());
        server.handle.shutdown();
    }

    #[tokio::test]
    async fn a_refused_connection_is_waited_on_and_a_refused_certificate_is_not() {
        let server = start().await;
        let free = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port");
        let ca = reqwest::Certificate::from_pem(server.ca_pem.as_bytes()).expect("pem");
        let client = reqwest::Client::builder()
            .tls_certs_only([ca])
            .build()
            .expect("client");
        let refused = client
            .get(format!("https://{free}/healthz"))
            .send()
            .await
            .expect_err("nothing listens");
        assert!(
            crate::snapshot_fetch::not_there_yet(&refused),
            "{refused:?}"
        );
        let unresolved = client
            .get("https://no-such-name.invalid/healthz")
            .send()
            .await
            .expect_err("no such name");
        assert!(
            crate::snapshot_fetch::not_there_yet(&unresolved),
            "{unresolved:?}"
        );
        let other = new_ca("someone else", jiff::Timestamp::now()).expect("ca");
        let distrusted = reqwest::Client::builder()
            .tls_certs_only([
                reqwest::Certificate::from_pem(other.cert_pem.as_bytes()).expect("pem")
            ])
            .build()
            .expect("client")
            .get(format!("https://{}/healthz", server.address))
            .send()
            .await
            .expect_err("another CA");
        assert!(
            !crate::snapshot_fetch::not_there_yet(&distrusted),
            "{distrusted:?}"
        );
        server.handle.shutdown();
    }

    #[tokio::test]
    async fn a_short_token_is_refused_before_serving() {
        let dir = tempfile::tempdir().expect("temp dir");
        let source = Source {
            file: dir.path().join("snapshot.db"),
            token: "short".to_owned(),
            cert_pem: Vec::new(),
            key_pem: Vec::new(),
        };
        let err = serve(source, "127.0.0.1:0".parse().expect("addr"), Handle::new())
            .await
            .expect_err("refused");
        assert!(err.to_string().contains("too short"), "{err}");
    }
}
