//! A kube client that fails where a crash would: its N-th write to one resource never reaches
//! the server or loses its response, watch requests are refused, and open watch streams end on
//! demand (a dropped connection). For the framework's "never a duplicate, never stuck" tests.
//! It can also be refused, with the API server's 403, lists of a resource across all namespaces
//! (what a controller installed with namespaced Roles only meets).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteFault {
    /// The request never reaches the server (crash before the write).
    Before,
    /// The server applies it, the response is lost (crash after the write).
    After,
}

#[derive(Default)]
pub struct WritePlan {
    pub writes: u32,
    pub fail_at: Option<(u32, WriteFault)>,
    /// Fail this many watch requests (a broken watch connection).
    pub fail_watches: u32,
    /// Bumping it ends every open watch stream at its next chunk (a dropped connection).
    pub watch_generation: Arc<AtomicU32>,
    /// GETs of this resource (plural) across all namespaces are answered 403 Forbidden.
    pub forbid_cluster_wide: Option<String>,
}

/// The Status a Kubernetes API server answers to a request RBAC does not allow.
fn forbidden_status(plural: &str) -> Vec<u8> {
    serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "{plural} is forbidden: User \"system:serviceaccount:ferroplane-system:ferroplane\" cannot list resource \"{plural}\" at the cluster scope"
        ),
        "reason": "Forbidden",
        "details": {"kind": plural},
        "code": 403
    })
    .to_string()
    .into_bytes()
}

/// Whether `path` reads `plural` across all namespaces (`/apis/g/v/plural`, no namespace).
fn is_cluster_wide(path: &str, plural: &str) -> bool {
    !path.contains("/namespaces/") && path.ends_with(&format!("/{plural}"))
}

/// A response body that ends once the plan's watch generation moves past the one it was
/// opened in.
struct KillableBody<B> {
    /// `None`: the answer is `canned`, made here.
    inner: Option<Pin<Box<B>>>,
    canned: Option<Vec<u8>>,
    opened: u32,
    generation: Arc<AtomicU32>,
}

impl<B: http_body::Body> http_body::Body for KillableBody<B>
where
    B::Data: From<Vec<u8>>,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if self.generation.load(Ordering::SeqCst) != self.opened {
            return Poll::Ready(None);
        }
        match self.inner.as_mut() {
            Some(inner) => inner.as_mut().poll_frame(cx),
            None => Poll::Ready(
                self.canned
                    .take()
                    .map(|bytes| Ok(http_body::Frame::data(bytes.into()))),
            ),
        }
    }
}

struct FaultService<S> {
    inner: S,
    /// Writes to paths containing this (e.g. `/widgets`) are counted.
    counted: String,
    plan: Arc<Mutex<WritePlan>>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B> tower::Service<http::Request<kube::client::Body>> for FaultService<S>
where
    S: tower::Service<http::Request<kube::client::Body>, Response = http::Response<B>>
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: From<Vec<u8>>,
{
    type Response = http::Response<KillableBody<B>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: http::Request<kube::client::Body>) -> Self::Future {
        let is_counted_write =
            req.method() != http::Method::GET && req.uri().path().contains(&self.counted);
        let is_watch = req.uri().query().is_some_and(|q| q.contains("watch=true"));
        let mut fault = None;
        let generation;
        {
            let mut plan = self.plan.lock().unwrap_or_else(|p| p.into_inner());
            generation = plan.watch_generation.clone();
            if let Some(plural) = plan.forbid_cluster_wide.as_deref()
                && req.method() == http::Method::GET
                && is_cluster_wide(req.uri().path(), plural)
            {
                let body = KillableBody {
                    inner: None,
                    canned: Some(forbidden_status(plural)),
                    opened: generation.load(Ordering::SeqCst),
                    generation,
                };
                let response = http::Response::builder()
                    .status(http::StatusCode::FORBIDDEN)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(body)
                    .map_err(|e| -> BoxError { e.into() });
                return Box::pin(async move { response });
            }
            if is_watch && plan.fail_watches > 0 {
                plan.fail_watches -= 1;
                return Box::pin(async {
                    Err::<Self::Response, BoxError>("injected watch failure".into())
                });
            }
            if is_counted_write {
                plan.writes += 1;
                if let Some((n, f)) = plan.fail_at
                    && n == plan.writes
                {
                    fault = Some(f);
                }
            }
        }
        let opened = generation.load(Ordering::SeqCst);
        let fut = self.inner.call(req);
        Box::pin(async move {
            match fault {
                Some(WriteFault::Before) => Err("injected crash before write".into()),
                Some(WriteFault::After) => {
                    let _ = fut.await.map_err(Into::into)?;
                    Err("injected crash after write (response lost)".into())
                }
                None => {
                    let resp = fut.await.map_err(Into::into)?;
                    Ok(resp.map(|inner| KillableBody {
                        inner: Some(Box::pin(inner)),
                        canned: None,
                        opened,
                        generation,
                    }))
                }
            }
        })
    }
}

/// A client of the API server at `url` that fails as `plan` says; writes are counted for the
/// resource with this `plural` only.
pub fn faulty_client(url: &str, plural: &str, plan: Arc<Mutex<WritePlan>>) -> kube::Client {
    let url = url.parse().expect("valid url");
    let builder =
        kube::client::ClientBuilder::try_from(kube::Config::new(url)).expect("client builder");
    let counted = format!("/{plural}");
    builder
        .with_layer(&tower::layer::layer_fn(move |inner| FaultService {
            inner,
            counted: counted.clone(),
            plan: plan.clone(),
        }))
        .build()
}
