//! A global token bucket shared by every controller of the process, so that a burst of
//! reconciles (startup, a ProviderConfig change that requeues thousands of objects) cannot
//! exceed what the Kubernetes API server and the clouds tolerate.

use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// Token bucket: `rate` reconciles per second on average, bursts up to `burst`.
#[derive(Debug)]
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    state: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

impl RateLimiter {
    /// `rate` per second (values ≤ 0 mean unlimited) with bursts of `burst` (at least 1).
    pub fn new(rate: f64, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            rate,
            burst,
            state: Mutex::new(Bucket {
                tokens: burst,
                last: Instant::now(),
            }),
        }
    }

    /// Waits for one token. Waiters are served in order (tokio's Mutex is fair).
    pub async fn acquire(&self) {
        if self.rate <= 0.0 {
            return;
        }
        let mut bucket = self.state.lock().await;
        loop {
            let now = Instant::now();
            let elapsed = now.duration_since(bucket.last).as_secs_f64();
            bucket.tokens = (bucket.tokens + elapsed * self.rate).min(self.burst);
            bucket.last = now;
            if bucket.tokens >= 1.0 {
                bucket.tokens -= 1.0;
                return;
            }
            let wait = (1.0 - bucket.tokens) / self.rate;
            tokio::time::sleep(Duration::from_secs_f64(wait)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn burst_then_rate() {
        let limiter = RateLimiter::new(10.0, 5);
        let start = Instant::now();
        for _ in 0..5 {
            limiter.acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO, "burst is free");
        for _ in 0..10 {
            limiter.acquire().await;
        }
        let elapsed = start.elapsed();
        assert!(
            elapsed >= Duration::from_millis(990) && elapsed <= Duration::from_millis(1010),
            "{elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn zero_rate_is_unlimited() {
        let limiter = RateLimiter::new(0.0, 1);
        let start = Instant::now();
        for _ in 0..1000 {
            limiter.acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}
