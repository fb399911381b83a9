//! The retries a client schedules, read from its own `retrying Alibaba Cloud API call` events:
//! the evidence of a wait that does not depend on how fast the machine ran the test.
//!
//! One process-wide subscriber hands each event to the log of the thread it happens on. A
//! per-test scoped subscriber would not do: tracing caches whether a callsite is of interest,
//! and a test thread without a subscriber can settle that as "never" while another test's
//! subscriber is alive (a CI run lost a retry event that way).

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

const RETRY_MESSAGE: &str = "retrying Alibaba Cloud API call";

thread_local! {
    static CURRENT: RefCell<Option<RetryLog>> = const { RefCell::new(None) };
}

/// The delays of the retries scheduled on the current thread while the guard from
/// [`RetryLog::capture`] lives (a `#[tokio::test]` runs the client and the server on it).
#[derive(Clone, Default)]
pub struct RetryLog {
    delays: Arc<Mutex<Vec<Duration>>>,
}

/// Stops the capture when dropped.
pub struct Capture(());

impl Drop for Capture {
    fn drop(&mut self) {
        CURRENT.with(|current| current.borrow_mut().take());
    }
}

impl RetryLog {
    pub fn capture() -> (Self, Capture) {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            tracing::subscriber::set_global_default(Registry::default().with(ThreadRouter))
                .expect("no other global tracing subscriber in the client tests");
        });
        let log = Self::default();
        CURRENT.with(|current| *current.borrow_mut() = Some(log.clone()));
        (log, Capture(()))
    }

    /// Each scheduled retry's delay, in order.
    pub fn delays(&self) -> Vec<Duration> {
        self.delays.lock().unwrap().clone()
    }
}

/// Sends every retry event to the capturing log of its thread, if any.
struct ThreadRouter;

#[derive(Default)]
struct RetryEvent {
    is_retry: bool,
    delay_ms: Option<u64>,
}

impl Visit for RetryEvent {
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "delay_ms" {
            self.delay_ms = Some(value);
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.is_retry = value == RETRY_MESSAGE;
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.is_retry = format!("{value:?}") == RETRY_MESSAGE;
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for ThreadRouter {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut seen = RetryEvent::default();
        event.record(&mut seen);
        if !seen.is_retry {
            return;
        }
        let delay_ms = seen
            .delay_ms
            .expect("a retry event names its delay in delay_ms");
        CURRENT.with(|current| {
            if let Some(log) = current.borrow().as_ref() {
                log.delays
                    .lock()
                    .unwrap()
                    .push(Duration::from_millis(delay_ms));
            }
        });
    }
}
