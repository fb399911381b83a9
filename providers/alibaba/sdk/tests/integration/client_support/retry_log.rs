//! The retries a client schedules, read from its own `retrying Alibaba Cloud API call` events:
//! the evidence of a wait that does not depend on how fast the machine ran the test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

const RETRY_MESSAGE: &str = "retrying Alibaba Cloud API call";

/// The delays of the retries scheduled while the guard from [`RetryLog::capture`] lives, on the
/// current thread (a `#[tokio::test]` runs the client and the server on it).
#[derive(Clone, Default)]
pub struct RetryLog {
    delays: Arc<Mutex<Vec<Duration>>>,
}

impl RetryLog {
    pub fn capture() -> (Self, tracing::subscriber::DefaultGuard) {
        let log = Self::default();
        let subscriber = Registry::default().with(log.clone());
        (log, tracing::subscriber::set_default(subscriber))
    }

    /// Each scheduled retry's delay, in order.
    pub fn delays(&self) -> Vec<Duration> {
        self.delays.lock().unwrap().clone()
    }
}

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

impl<S: tracing::Subscriber> Layer<S> for RetryLog {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut seen = RetryEvent::default();
        event.record(&mut seen);
        if seen.is_retry {
            let delay_ms = seen
                .delay_ms
                .expect("a retry event names its delay in delay_ms");
            self.delays
                .lock()
                .unwrap()
                .push(Duration::from_millis(delay_ms));
        }
    }
}
