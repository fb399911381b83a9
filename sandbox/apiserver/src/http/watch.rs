//! Watch streams: newline-delimited `{"type","object"}` events over a chunked response.
//!
//! A watch replays the history after its `resourceVersion` (or synthesises ADDED events for
//! `""`/`"0"` and `sendInitialEvents`), then follows the live broadcast without a gap, because
//! both are taken under the store lock. An expired start or a watcher too slow for the broadcast
//! gets an in-stream `ERROR` with a 410 Status, never an HTTP 410.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::app::App;
use crate::catalog::registry::ResourceDef;
use crate::catalog::table::IncludeObject;
use crate::error::{ApiError, ApiResult};
use crate::http::codec::{self, Shape};
use crate::http::render;
use crate::store::selector::Selectors;
use crate::store::state::{Change, ChangeKind};
use crate::store::views;
use crate::store::{Feed, WatchStart};

/// What a watch selects and how it encodes events.
#[derive(Debug, Clone)]
pub struct WatchSpec {
    pub def: Arc<ResourceDef>,
    pub namespace: Option<String>,
    pub selectors: Selectors,
    pub bookmarks: bool,
    pub timeout: Duration,
    pub shape: Shape,
    pub include: IncludeObject,
}

impl WatchSpec {
    fn selects(&self, view: &Value) -> bool {
        self.selectors.matches(view)
    }

    /// The event this watcher sees for a change, if any; selector watches turn objects that
    /// start or stop matching into ADDED or DELETED.
    fn event_for<'c>(&self, change: &'c Change) -> Option<(&'static str, Cow<'c, Value>)> {
        if change.key != self.def.store_key()
            || self
                .namespace
                .as_ref()
                .is_some_and(|ns| *ns != change.namespace)
        {
            return None;
        }
        let new_view = views::view_of(&self.def, &change.object);
        let new_match = self.selects(&new_view);
        let old_match = change
            .old
            .as_ref()
            .is_some_and(|o| self.selects(&views::view_of(&self.def, o)));
        let kind = match change.kind {
            ChangeKind::Added if new_match => "ADDED",
            ChangeKind::Modified if new_match && old_match => "MODIFIED",
            ChangeKind::Modified if new_match => "ADDED",
            ChangeKind::Modified if old_match => "DELETED",
            ChangeKind::Deleted if old_match || new_match => "DELETED",
            _ => return None,
        };
        Some((kind, new_view))
    }

    /// The line for a live or replayed change: full objects are encoded once per change and
    /// form, and shared with every other watcher that sends the same.
    fn encode_change(&self, change: &Change, kind: &'static str, object: &Value) -> Bytes {
        if self.shape != Shape::Object {
            return self.encode(kind, object);
        }
        change
            .encoded
            .get_or_encode(&self.def.api_version(), &self.def.kind, kind, || {
                self.encode(kind, object)
            })
    }

    fn encode(&self, kind: &str, object: &Value) -> Bytes {
        let shaped;
        let object = match self.shape {
            Shape::Table => {
                let rv = object
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                shaped = render::table(
                    &self.def,
                    std::slice::from_ref(object),
                    rv,
                    None,
                    self.include,
                );
                &shaped
            }
            Shape::Metadata => {
                shaped = codec::partial_metadata(object);
                &shaped
            }
            Shape::Object => object,
        };
        line(&WatchEvent { object, kind })
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let mut metadata = json!({"resourceVersion": rv.to_string(), "creationTimestamp": null});
        if initial_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        line(
            &json!({"type": "BOOKMARK", "object": {"kind": self.def.kind, "apiVersion": self.def.api_version(), "metadata": metadata}}),
        )
    }
}

/// One watch event; the fields in the order a JSON object with sorted keys has them, as
/// `{"type", "object"}` built as a `Value` would serialize.
#[derive(Serialize)]
struct WatchEvent<'a> {
    object: &'a Value,
    #[serde(rename = "type")]
    kind: &'a str,
}

fn line(value: &impl Serialize) -> Bytes {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

fn error_line(error: &ApiError) -> Bytes {
    line(&json!({"type": "ERROR", "object": error.status()}))
}

/// Where a watch starts: `sendInitialEvents=true`, else its `resourceVersion`.
pub fn start(resource_version: Option<&str>, send_initial_events: bool) -> ApiResult<WatchStart> {
    if send_initial_events {
        return Ok(WatchStart::InitialEvents);
    }
    match resource_version.unwrap_or_default() {
        "" | "0" => Ok(WatchStart::Current),
        rv => rv
            .parse()
            .map(WatchStart::After)
            .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv:?}"))),
    }
}

/// Starts a watch and returns the streaming response.
pub fn serve(app: Arc<App>, spec: WatchSpec, start: WatchStart) -> Response {
    let feed = app
        .store
        .watch(&spec.def.store_key(), spec.namespace.as_deref(), start);
    let mut first: Vec<Bytes> = Vec::new();
    let (receiver, current_rv) = match feed {
        Feed::Current { objects, rv, live } => {
            for object in &objects {
                let view = views::view_of(&spec.def, object);
                if spec.selects(&view) {
                    first.push(spec.encode("ADDED", &view));
                }
            }
            if start == WatchStart::InitialEvents {
                first.push(spec.bookmark(rv, true));
            }
            (Some(live), rv)
        }
        Feed::Replay { changes, rv, live } => {
            for change in changes {
                if let Some((kind, object)) = spec.event_for(&change) {
                    first.push(spec.encode_change(&change, kind, &object));
                }
            }
            (Some(live), rv)
        }
        Feed::Expired { requested, oldest } => {
            first.push(error_line(&ApiError::expired(requested, oldest)));
            (None, requested)
        }
    };
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let content_type = match spec.shape {
        Shape::Table => codec::TABLE_CONTENT_TYPE,
        _ => "application/json",
    };
    tokio::spawn(pump(app, spec, first, receiver, current_rv, tx));
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<Bytes, std::convert::Infallible>(chunk), rx))
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, content_type)],
        Body::from_stream(stream),
    )
        .into_response()
}

async fn pump(
    app: Arc<App>,
    spec: WatchSpec,
    first: Vec<Bytes>,
    receiver: Option<broadcast::Receiver<Arc<Change>>>,
    mut last_rv: u64,
    tx: mpsc::Sender<Bytes>,
) {
    for chunk in batched(first) {
        if tx.send(chunk).await.is_err() {
            return;
        }
    }
    let Some(mut receiver) = receiver else { return };
    app.watches_started.started();
    let mut shutdown = app.shutdown.clone();
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    let mut bookmarks = tokio::time::interval(app.config.bookmark_interval);
    bookmarks.reset();
    loop {
        let chunk = tokio::select! {
            _ = shutdown.changed() => return,
            () = tx.closed() => return,
            () = &mut deadline => return,
            _ = bookmarks.tick(), if spec.bookmarks => spec.bookmark(last_rv, false),
            received = receiver.recv() => match received {
                Ok(change) => {
                    last_rv = change.rv;
                    let first = spec
                        .event_for(&change)
                        .map(|(kind, object)| spec.encode_change(&change, kind, &object));
                    let (chunk, tail) = follow_burst(&spec, &mut receiver, &mut last_rv, first);
                    if let Some(chunk) = chunk
                        && tx.send(chunk).await.is_err()
                    {
                        return;
                    }
                    match tail {
                        Tail::Open => continue,
                        Tail::Lagged => {
                            let _ = tx
                                .send(error_line(&ApiError::expired(last_rv, last_rv + 1)))
                                .await;
                            return;
                        }
                        Tail::Closed => return,
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let _ = tx.send(error_line(&ApiError::expired(last_rv, last_rv + 1))).await;
                    return;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        if tx.send(chunk).await.is_err() {
            return;
        }
    }
}

/// Upper bound of a chunk that joins several events' lines.
const MAX_CHUNK: usize = 64 * 1024;

/// Lines joined into chunks of up to [`MAX_CHUNK`] bytes (a longer line stays one chunk).
fn batched(lines: Vec<Bytes>) -> Vec<Bytes> {
    let mut chunks = Vec::new();
    let mut current = BytesMut::new();
    for line in lines {
        if !current.is_empty() && current.len() + line.len() > MAX_CHUNK {
            chunks.push(current.split().freeze());
        }
        current.extend_from_slice(&line);
    }
    if !current.is_empty() {
        chunks.push(current.freeze());
    }
    chunks
}

/// How the broadcast stood after a burst was taken.
enum Tail {
    Open,
    /// The watcher fell behind the broadcast: it gets a 410 after what it was sent.
    Lagged,
    Closed,
}

/// `first` (the line of the change just received, if this watch sends one) followed by the
/// lines of the changes already waiting, up to [`MAX_CHUNK`] bytes: a burst of writes reaches
/// the client as one chunk, one write to the socket, instead of one per event. The byte stream
/// is the same.
fn follow_burst(
    spec: &WatchSpec,
    receiver: &mut broadcast::Receiver<Arc<Change>>,
    last_rv: &mut u64,
    first: Option<Bytes>,
) -> (Option<Bytes>, Tail) {
    let mut joined: Option<BytesMut> = None;
    let mut tail = Tail::Open;
    loop {
        let size = joined
            .as_ref()
            .map_or_else(|| first.as_ref().map_or(0, Bytes::len), BytesMut::len);
        if size >= MAX_CHUNK {
            break;
        }
        match receiver.try_recv() {
            Ok(change) => {
                *last_rv = change.rv;
                if let Some((kind, object)) = spec.event_for(&change) {
                    let line = spec.encode_change(&change, kind, &object);
                    joined
                        .get_or_insert_with(|| BytesMut::from(first.as_deref().unwrap_or_default()))
                        .extend_from_slice(&line);
                }
            }
            Err(broadcast::error::TryRecvError::Empty) => break,
            Err(broadcast::error::TryRecvError::Lagged(_)) => {
                tail = Tail::Lagged;
                break;
            }
            Err(broadcast::error::TryRecvError::Closed) => {
                tail = Tail::Closed;
                break;
            }
        }
    }
    (joined.map(BytesMut::freeze).or(first), tail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::registry::Registry;
    use crate::store::state::State;

    fn config_map(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}, "data": {"k": name}})
    }

    #[test]
    fn lines_are_batched_without_changing_the_stream() {
        let lines: Vec<Bytes> = (0..10)
            .map(|i| Bytes::from(format!("{i}{}\n", "x".repeat(MAX_CHUNK / 4 - 2))))
            .collect();
        let chunks = batched(lines.clone());
        assert_eq!(chunks.concat(), lines.concat());
        assert_eq!(chunks.len(), 3, "4 + 4 + 2 lines");
        assert!(chunks.iter().all(|c| c.len() <= MAX_CHUNK));
        let long = Bytes::from(vec![b'y'; MAX_CHUNK * 2]);
        assert_eq!(batched(vec![long.clone()]), vec![long]);
        assert!(batched(Vec::new()).is_empty());
    }

    #[test]
    fn a_burst_is_one_chunk_with_every_line_in_order() {
        let def = Registry::default()
            .find("", "v1", "configmaps")
            .expect("served");
        let spec = WatchSpec {
            def: def.clone(),
            namespace: None,
            selectors: Selectors::default(),
            bookmarks: false,
            timeout: Duration::from_secs(1),
            shape: Shape::Object,
            include: IncludeObject::default(),
        };
        let mut state = State::new(100);
        let mut receiver = state.subscribe();
        let key = def.store_key();
        let stored: Vec<Arc<Value>> = (0..3)
            .map(|i| state.insert(&key, config_map(&format!("c{i}"))))
            .collect();
        let first = receiver.try_recv().expect("first change");
        let first_line = spec
            .event_for(&first)
            .map(|(k, o)| spec.encode_change(&first, k, &o));
        let mut last_rv = first.rv;
        let (chunk, tail) = follow_burst(&spec, &mut receiver, &mut last_rv, first_line);
        assert!(matches!(tail, Tail::Open));
        let expected: Vec<u8> = stored
            .iter()
            .flat_map(|o| line(&json!({"type": "ADDED", "object": **o})).to_vec())
            .collect();
        assert_eq!(chunk.expect("lines").to_vec(), expected);
        assert_eq!(last_rv, state.resource_version());
        // Nothing waiting: the first line alone.
        let (chunk, _) = follow_burst(&spec, &mut receiver, &mut last_rv, None);
        assert!(chunk.is_none());
    }
}
