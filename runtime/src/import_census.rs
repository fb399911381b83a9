//! Which live objects of a kind import which external resource, from consistent lists of the
//! kind's object metadata in every namespace, shared by the importers that ask at once.
//!
//! The rule of [`crate::ownership::earlier_importer`] (of two objects importing one unowned
//! resource, only the one created strictly first takes it over) needs, for each importer, a
//! list the API server *started* after the importer decided to claim: a rival that exists then
//! is in it. A list started after the request is as good as one of the importer's own, so the
//! importers asking while a list is running all take the next one. N objects imported at once
//! cost a handful of lists instead of N lists of N objects each (10,000 imported instances
//! made 10,000 lists of 10,000 objects, and their first reconciles took minutes).
//!
//! The lists run in a task of their own, so an importer whose reconcile is cancelled never
//! leaves the others waiting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tokio::sync::watch;

use crate::error::ReconcileError;

/// One live object that names an external resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Importer {
    pub uid: String,
    pub namespace: String,
    pub name: String,
    /// Seconds since the epoch; `None` when the server did not say.
    pub created: Option<i64>,
    pub deleting: bool,
}

impl Importer {
    pub(crate) fn from_meta(meta: &ObjectMeta) -> Self {
        Self {
            uid: meta.uid.clone().unwrap_or_default(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            created: meta.creation_timestamp.as_ref().map(|t| t.0.as_second()),
            deleting: meta.deletion_timestamp.is_some(),
        }
    }
}

/// The importers of every external name, as one list found them.
pub(crate) type Importers = HashMap<String, Vec<Importer>>;

/// Why a list has no answer.
#[derive(Debug)]
pub(crate) enum CensusFailure {
    /// The controller may not list every namespace (a namespaced install).
    Forbidden,
    /// Any other failure of the list, as the reconcile reports it.
    Failed(ReconcileError),
}

impl CensusFailure {
    /// The failure for one importer (each gets its own copy).
    fn for_one(&self) -> Self {
        match self {
            Self::Forbidden => Self::Forbidden,
            Self::Failed(e) => Self::Failed(ReconcileError::new(
                e.reason().to_owned(),
                e.message(),
                e.retry(),
            )),
        }
    }
}

/// Lists the importers of every namespace once.
pub(crate) type Lister =
    Arc<dyn Fn() -> BoxFuture<'static, Result<Importers, CensusFailure>> + Send + Sync>;

/// The answer of list number `number`, shared by everyone who waited for it.
#[derive(Clone)]
struct Published {
    number: u64,
    answer: Result<Arc<Importers>, Arc<CensusFailure>>,
}

#[derive(Default)]
struct Progress {
    /// The highest list number an importer waits for.
    wanted: u64,
    /// Lists started so far (the number of the running or last list).
    started: u64,
    /// Whether the listing task runs.
    running: bool,
}

/// The shared lists of one kind.
pub(crate) struct ImportCensus {
    lister: Lister,
    progress: Arc<Mutex<Progress>>,
    published: watch::Sender<Option<Published>>,
}

impl ImportCensus {
    pub(crate) fn new(lister: Lister) -> Self {
        Self {
            lister,
            progress: Arc::default(),
            published: watch::channel(None).0,
        }
    }

    /// The importers as a list started after this call found them.
    pub(crate) async fn list_started_after_now(&self) -> Result<Arc<Importers>, CensusFailure> {
        let mut answers = self.published.subscribe();
        let wanted = {
            let mut progress = lock(&self.progress);
            // The running list (number `started`) began before this call: the next one did not.
            let wanted = progress.started + 1;
            progress.wanted = progress.wanted.max(wanted);
            if !progress.running {
                progress.running = true;
                self.spawn_lists();
            }
            wanted
        };
        let published = answers
            .wait_for(|p| p.as_ref().is_some_and(|p| p.number >= wanted))
            .await
            .map_err(|_| {
                CensusFailure::Failed(ReconcileError::retryable(
                    crate::reasons::KUBERNETES_API_ERROR,
                    "the importers' list stopped",
                ))
            })?
            .clone()
            .expect("waited for an answer");
        match published.answer {
            Ok(importers) => Ok(importers),
            Err(failure) => Err(failure.for_one()),
        }
    }

    /// Runs lists, one after another, while importers wait for one not started yet.
    fn spawn_lists(&self) {
        let lister = Arc::clone(&self.lister);
        let progress = Arc::clone(&self.progress);
        let published = self.published.clone();
        tokio::spawn(async move {
            loop {
                let number = {
                    let mut p = lock(&progress);
                    if p.wanted <= p.started {
                        p.running = false;
                        return;
                    }
                    p.started += 1;
                    p.started
                };
                let answer = lister().await.map(Arc::new).map_err(Arc::new);
                published.send_replace(Some(Published { number, answer }));
            }
        });
    }
}

fn lock(progress: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    progress.lock().unwrap_or_else(|p| p.into_inner())
}

/// A kube list failure as the census reports it.
pub(crate) fn failure(err: kube::Error) -> CensusFailure {
    match &err {
        kube::Error::Api(status) if status.code == 403 => CensusFailure::Forbidden,
        _ => CensusFailure::Failed(ReconcileError::kube(
            "cannot check which objects import the external resource",
            err,
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use super::*;

    /// A lister that takes `took` per list and records, for each list, the number of
    /// requests made before it started.
    fn lister(took: Duration, requests: Arc<AtomicU64>, starts: Arc<Mutex<Vec<u64>>>) -> Lister {
        Arc::new(move || {
            let requests = Arc::clone(&requests);
            let starts = Arc::clone(&starts);
            Box::pin(async move {
                let seen = requests.load(Ordering::SeqCst);
                starts.lock().unwrap().push(seen);
                tokio::time::sleep(took).await;
                let mut importers = Importers::new();
                importers.insert(
                    "i-1".into(),
                    vec![Importer {
                        uid: format!("u-{seen}"),
                        namespace: "ns".into(),
                        name: "web".into(),
                        created: Some(1),
                        deleting: false,
                    }],
                );
                Ok(importers)
            })
        })
    }

    #[tokio::test(start_paused = true)]
    async fn importers_asking_at_once_share_a_list_started_after_each_asked() {
        let requests = Arc::new(AtomicU64::new(0));
        let starts = Arc::new(Mutex::new(Vec::new()));
        let census = Arc::new(ImportCensus::new(lister(
            Duration::from_millis(100),
            Arc::clone(&requests),
            Arc::clone(&starts),
        )));
        let mut asks = Vec::new();
        for n in 0..200u64 {
            let census = Arc::clone(&census);
            let requests = Arc::clone(&requests);
            asks.push(tokio::spawn(async move {
                // Asked over 500 ms, while lists of 100 ms each run.
                tokio::time::sleep(Duration::from_millis(n * 5 / 2)).await;
                let asked = requests.fetch_add(1, Ordering::SeqCst) + 1;
                let importers = census.list_started_after_now().await.unwrap();
                let uid = &importers["i-1"][0].uid;
                let seen: u64 = uid.trim_start_matches("u-").parse().unwrap();
                // The list that answered started after this request was made.
                assert!(
                    seen >= asked,
                    "request {asked} answered by a list started after {seen}"
                );
            }));
        }
        for ask in asks {
            ask.await.unwrap();
        }
        let lists = starts.lock().unwrap().len();
        // 500 ms of requests, lists of 100 ms one after another: about six, never 200.
        assert!((2..=8).contains(&lists), "{lists} lists for 200 importers");
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_list_fails_its_waiters_and_the_next_request_lists_again() {
        let calls = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&calls);
        let census = ImportCensus::new(Arc::new(move || {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                if n == 0 {
                    Err(CensusFailure::Forbidden)
                } else {
                    Ok(Importers::new())
                }
            })
        }));
        assert!(matches!(
            census.list_started_after_now().await,
            Err(CensusFailure::Forbidden)
        ));
        assert!(census.list_started_after_now().await.unwrap().is_empty());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
