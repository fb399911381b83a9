//! Waiting for something to become true: on a watch of one object, or on a predicate re-checked
//! until a deadline. A wait that times out panics with what it waited for and, where the probe
//! said so, the last thing it saw. Tests wait here instead of sleeping a fixed time and then
//! asserting.

use std::fmt::{self, Debug, Display};
use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use kube::Resource;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use serde::de::DeserializeOwned;
use tokio::time::Instant;

/// How long a wait lasts unless [`Wait::within`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a predicate is re-checked unless [`Wait::every`] says otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(50);

/// Starts describing a wait for `what` (the timeout message says it).
pub fn eventually(what: impl Into<String>) -> Wait {
    Wait {
        what: what.into(),
        timeout: DEFAULT_TIMEOUT,
        interval: DEFAULT_INTERVAL,
    }
}

/// A wait for one thing, with its deadline and re-check interval.
#[derive(Clone, Debug)]
#[must_use = "a wait does nothing until one of its `until` methods is awaited"]
pub struct Wait {
    what: String,
    timeout: Duration,
    interval: Duration,
}

/// What a probe answers: done (with a value) or not yet (maybe with what it saw).
pub trait Probe {
    type Value;
    /// `Err` carries a description of what was seen, for the timeout message.
    fn check(self) -> Result<Self::Value, Option<String>>;
}

impl Probe for bool {
    type Value = ();
    fn check(self) -> Result<(), Option<String>> {
        if self { Ok(()) } else { Err(None) }
    }
}

impl<T> Probe for Option<T> {
    type Value = T;
    fn check(self) -> Result<T, Option<String>> {
        self.ok_or(None)
    }
}

/// `Err(last)`: not yet, and `last` is what the probe saw.
impl<T, L: Debug> Probe for Result<T, L> {
    type Value = T;
    fn check(self) -> Result<T, Option<String>> {
        self.map_err(|last| Some(format!("{last:#?}")))
    }
}

/// What a probe saw, already worded: shown as it is (a `String` would be shown quoted).
pub struct Seen(pub String);

impl Debug for Seen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A wait that ran out of time.
#[derive(Debug)]
pub struct TimedOut {
    pub what: String,
    pub timeout: Duration,
    /// What the probe saw last, when it said.
    pub last: Option<String>,
}

impl Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "timed out after {:?} waiting for {}",
            self.timeout, self.what
        )?;
        if let Some(last) = &self.last {
            write!(f, "; last seen: {last}")?;
        }
        Ok(())
    }
}

impl Wait {
    /// Gives up after `timeout`.
    pub fn within(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Re-checks a predicate every `interval` (slow probes such as kubectl want more).
    pub fn every(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// Re-checks `probe` until it is done; panics at the deadline.
    pub async fn until<P: Probe>(self, mut probe: impl FnMut() -> P) -> P::Value {
        self.until_async(move || std::future::ready(probe())).await
    }

    /// Re-checks the asynchronous `probe` until it is done; panics at the deadline.
    pub async fn until_async<F, Fut>(self, probe: F) -> <Fut::Output as Probe>::Value
    where
        F: FnMut() -> Fut,
        Fut: Future,
        Fut::Output: Probe,
    {
        self.try_until_async(probe)
            .await
            .unwrap_or_else(|timed_out| panic!("{timed_out}"))
    }

    /// Like [`Wait::until_async`], but returns the timeout to the caller (to add what it knows).
    pub async fn try_until_async<F, Fut>(
        self,
        mut probe: F,
    ) -> Result<<Fut::Output as Probe>::Value, TimedOut>
    where
        F: FnMut() -> Fut,
        Fut: Future,
        Fut::Output: Probe,
    {
        let deadline = Instant::now() + self.timeout;
        loop {
            let last = match probe().await.check() {
                Ok(value) => return Ok(value),
                Err(last) => last,
            };
            if Instant::now() >= deadline {
                return Err(TimedOut {
                    what: self.what,
                    timeout: self.timeout,
                    last,
                });
            }
            tokio::time::sleep(self.interval).await;
        }
    }

    /// Watches object `name` until `condition` holds for it (`None`: the object does not
    /// exist) and returns it as it was then; panics at the deadline with the last version seen.
    pub async fn for_object<K>(
        self,
        api: &Api<K>,
        name: &str,
        condition: impl Fn(Option<&K>) -> bool,
    ) -> Option<K>
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        let what = format!("{} ({name})", self.what);
        let timeout = self.timeout;
        match self.try_for_object(api, name, condition).await {
            Ok(object) => object,
            Err(last) => panic!(
                "{}",
                TimedOut {
                    what,
                    timeout,
                    last: last.map(|object| format!("{object:#?}")),
                }
            ),
        }
    }

    /// Like [`Wait::for_object`], but at the deadline returns the last version seen (`None`
    /// when nothing was seen; `Some(None)` when the object did not exist).
    pub async fn try_for_object<K>(
        self,
        api: &Api<K>,
        name: &str,
        condition: impl Fn(Option<&K>) -> bool,
    ) -> Result<Option<K>, Option<Option<K>>>
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        let mut last: Option<Option<K>> = None;
        let watched = async {
            // A failed watch request is retried (with backoff) by the stream itself.
            let stream = watcher::watch_object(api.clone(), name)
                .default_backoff()
                .filter_map(|event| std::future::ready(event.ok()));
            let mut stream = std::pin::pin!(stream);
            while let Some(object) = stream.next().await {
                if condition(object.as_ref()) {
                    return object;
                }
                last = Some(object);
            }
            unreachable!("a watch with backoff never ends")
        };
        match tokio::time::timeout(self.timeout, watched).await {
            Ok(object) => Ok(object),
            Err(_) => Err(last),
        }
    }
}
