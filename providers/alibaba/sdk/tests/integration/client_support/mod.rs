//! A scripted HTTP server on 127.0.0.1 for client tests: it records every request and answers
//! with whatever the test's responder returns for it. Dropping it stops the server.

#![allow(dead_code)]

mod retry_log;

pub use retry_log::RetryLog;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use alibaba_sdk::signature::percent_decode;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Request, StatusCode};
use axum::response::Response;
use tokio::sync::oneshot;

/// One received request, decoded.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    pub path: String,
    pub raw_query: String,
    pub query: BTreeMap<String, String>,
    pub headers: HeaderMap,
    pub form: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Recorded {
    /// Query and form parameters together, as V1 signs them.
    pub fn all_params(&self) -> BTreeMap<String, String> {
        let mut all = self.query.clone();
        all.extend(self.form.clone());
        all
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .get(name)
            .or_else(|| self.form.get(name))
            .map(String::as_str)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// What the responder returns: status, extra headers, body.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    pub delay: Option<std::time::Duration>,
}

impl Reply {
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: vec![("content-type", "application/json".into())],
            body: body.into(),
            delay: None,
        }
    }

    pub fn ok(body: impl Into<String>) -> Self {
        Self::json(200, body)
    }

    pub fn error(status: u16, code: &str, message: &str) -> Self {
        Self::json(
            status,
            serde_json::json!({
                "RequestId": "6D2C4B1A-0000-4000-8000-000000000001",
                "HostId": "ecs.local",
                "Code": code,
                "Message": message,
                "Recommend": "https://api.aliyun.com/troubleshoot"
            })
            .to_string(),
        )
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub fn delayed(mut self, delay: std::time::Duration) -> Self {
        self.delay = Some(delay);
        self
    }
}

type Responder = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;

pub struct ScriptServer {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl ScriptServer {
    /// Starts a server; `responder` gets each request and its 0-based index.
    pub async fn start(
        responder: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let responder: Arc<Responder> = Arc::new(responder);
        let recorded = requests.clone();
        let app = axum::Router::new().fallback(move |request: Request<Body>| {
            let recorded = recorded.clone();
            let responder = responder.clone();
            async move { handle(request, recorded, responder).await }
        });
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await
                .unwrap();
        });
        Self {
            addr,
            requests,
            shutdown: Some(tx),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

impl Drop for ScriptServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

pub fn decode_pairs(encoded: &str) -> BTreeMap<String, String> {
    encoded
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let d = |s: &str| {
                String::from_utf8(percent_decode(&s.replace('+', "%20")).unwrap()).unwrap()
            };
            (d(k), d(v))
        })
        .collect()
}

async fn handle(
    request: Request<Body>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    responder: Arc<Responder>,
) -> Response {
    let (parts, body) = request.into_parts();
    let body: Bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let raw_query = parts.uri.query().unwrap_or_default().to_owned();
    let is_form = parts
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let form = if is_form {
        decode_pairs(std::str::from_utf8(&body).unwrap_or_default())
    } else {
        BTreeMap::new()
    };
    let entry = Recorded {
        method: parts.method.clone(),
        path: parts.uri.path().to_owned(),
        query: decode_pairs(&raw_query),
        raw_query,
        headers: parts.headers.clone(),
        form,
        body: body.to_vec(),
    };
    let index = {
        let mut all = recorded.lock().unwrap();
        all.push(entry.clone());
        all.len() - 1
    };
    let reply = responder(&entry, index);
    if let Some(delay) = reply.delay {
        tokio::time::sleep(delay).await;
    }
    let mut response = Response::builder().status(StatusCode::from_u16(reply.status).unwrap());
    for (name, value) in reply.headers {
        response = response.header(name, value);
    }
    response.body(Body::from(reply.body)).unwrap()
}
