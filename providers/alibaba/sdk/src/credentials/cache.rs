//! [`CachingProvider`]: reuse temporary credentials until shortly before they expire.

use std::sync::{PoisonError, RwLock};
use std::time::Duration;

use tokio::sync::Mutex;

use crate::error::CredentialsError;
use crate::signing_credentials::{Credentials, CredentialsFuture, CredentialsProvider};

/// How long before expiry credentials are refreshed (what Alibaba's SDKs do).
pub const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(180);

/// Caches another provider's credentials. Credentials without an expiry are kept until
/// [`CredentialsProvider::invalidate`]; others are refreshed once less than
/// [`REFRESH_BEFORE_EXPIRY`] is left. One caller refreshes at a time: while it does, others
/// keep using the cached credentials as long as they have not expired, and wait otherwise. When
/// a refresh fails while the cached credentials are still valid, those are used and the failure
/// is logged.
#[derive(Debug)]
pub struct CachingProvider<P> {
    inner: P,
    refresh_before: Duration,
    cached: RwLock<Option<Credentials>>,
    refreshing: Mutex<()>,
}

impl<P: CredentialsProvider> CachingProvider<P> {
    /// Caches `inner` with the default refresh margin.
    pub fn new(inner: P) -> Self {
        Self::with_refresh_before(inner, REFRESH_BEFORE_EXPIRY)
    }

    /// Caches `inner`, refreshing when less than `refresh_before` is left.
    pub fn with_refresh_before(inner: P, refresh_before: Duration) -> Self {
        Self {
            inner,
            refresh_before,
            cached: RwLock::new(None),
            refreshing: Mutex::new(()),
        }
    }

    fn is_fresh(&self, credentials: &Credentials, now: jiff::Timestamp) -> bool {
        credentials.expiration.is_none_or(|expiry| {
            let margin = jiff::SignedDuration::try_from(self.refresh_before)
                .unwrap_or(jiff::SignedDuration::MAX);
            now.checked_add(margin)
                .is_ok_and(|deadline| deadline < expiry)
        })
    }

    fn snapshot(&self) -> Option<Credentials> {
        self.cached
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn store(&self, credentials: Option<Credentials>) {
        *self.cached.write().unwrap_or_else(PoisonError::into_inner) = credentials;
    }

    async fn get(&self) -> Result<Credentials, CredentialsError> {
        let now = jiff::Timestamp::now();
        let cached = self.snapshot();
        if let Some(credentials) = cached.as_ref().filter(|c| self.is_fresh(c, now)) {
            return Ok(credentials.clone());
        }
        let usable = cached.filter(|c| c.expiration.is_some_and(|expiry| now < expiry));
        let _guard = match (self.refreshing.try_lock(), usable) {
            (Ok(guard), _) => guard,
            // Someone else is refreshing and ours still work: no need to wait.
            (Err(_), Some(usable)) => return Ok(usable),
            (Err(_), None) => self.refreshing.lock().await,
        };
        // The refresh we waited for may have stored fresh credentials already.
        let now = jiff::Timestamp::now();
        let cached = self.snapshot();
        if let Some(credentials) = cached.as_ref().filter(|c| self.is_fresh(c, now)) {
            return Ok(credentials.clone());
        }
        match self.inner.credentials().await {
            Ok(fresh) => {
                tracing::debug!(
                    access_key_id = %fresh.access_key_id,
                    expiration = ?fresh.expiration,
                    "obtained credentials"
                );
                self.store(Some(fresh.clone()));
                Ok(fresh)
            }
            Err(error) => match cached {
                Some(stale) if stale.expiration.is_some_and(|expiry| now < expiry) => {
                    tracing::warn!(
                        %error,
                        "credentials refresh failed; using the cached ones until they expire"
                    );
                    Ok(stale)
                }
                _ => Err(error),
            },
        }
    }
}

impl<P: CredentialsProvider> CredentialsProvider for CachingProvider<P> {
    fn credentials(&self) -> CredentialsFuture<'_> {
        Box::pin(self.get())
    }

    fn invalidate(&self) {
        self.store(None);
        self.inner.invalidate();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Issues credentials that expire `lifetime` after issue, counting calls; fails when asked.
    #[derive(Debug)]
    struct Counting {
        calls: AtomicUsize,
        lifetime: Option<jiff::SignedDuration>,
        fail_after: usize,
    }

    impl CredentialsProvider for Counting {
        fn credentials(&self) -> CredentialsFuture<'_> {
            Box::pin(async move {
                let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
                if n > self.fail_after {
                    return Err(CredentialsError::Invalid {
                        reason: "source down".into(),
                    });
                }
                let mut c = Credentials::new(format!("AK{n}"), "s").with_security_token("t");
                c.expiration = self.lifetime.map(|l| jiff::Timestamp::now() + l);
                Ok(c)
            })
        }
    }

    fn counting(lifetime: Option<i64>, fail_after: usize) -> Counting {
        Counting {
            calls: AtomicUsize::new(0),
            lifetime: lifetime.map(jiff::SignedDuration::from_secs),
            fail_after,
        }
    }

    #[tokio::test]
    async fn keeps_credentials_with_more_than_the_margin_left() {
        let cache = CachingProvider::new(counting(Some(3600), usize::MAX));
        assert_eq!(cache.credentials().await.unwrap().access_key_id, "AK1");
        assert_eq!(cache.credentials().await.unwrap().access_key_id, "AK1");
        assert_eq!(cache.inner.calls.load(Ordering::SeqCst), 1);
        cache.invalidate();
        assert_eq!(cache.credentials().await.unwrap().access_key_id, "AK2");
    }

    #[tokio::test]
    async fn refreshes_with_less_than_180_seconds_left() {
        let cache = CachingProvider::new(counting(Some(179), usize::MAX));
        assert_eq!(cache.credentials().await.unwrap().access_key_id, "AK1");
        assert_eq!(cache.credentials().await.unwrap().access_key_id, "AK2");
    }

    #[tokio::test]
    async fn concurrent_callers_share_one_refresh() {
        let cache = Arc::new(CachingProvider::new(counting(Some(3600), usize::MAX)));
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let cache = cache.clone();
                tokio::spawn(async move { cache.credentials().await.unwrap().access_key_id })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap(), "AK1");
        }
        assert_eq!(cache.inner.calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn uses_unexpired_credentials_when_refresh_fails() {
        let cache = CachingProvider::new(counting(Some(60), 1));
        assert_eq!(cache.credentials().await.unwrap().access_key_id, "AK1");
        // Inside the margin: a refresh is attempted, fails, and the still-valid value is used.
        assert_eq!(cache.credentials().await.unwrap().access_key_id, "AK1");
        cache.invalidate();
        assert!(cache.credentials().await.is_err());
    }

    /// Takes `delay` to issue credentials valid for 120 s (inside the refresh margin).
    #[derive(Debug)]
    struct Slow {
        calls: AtomicUsize,
        delay: std::time::Duration,
    }

    impl CredentialsProvider for Slow {
        fn credentials(&self) -> CredentialsFuture<'_> {
            Box::pin(async move {
                let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
                tokio::time::sleep(self.delay).await;
                Ok(Credentials::new(format!("AK{n}"), "s")
                    .with_expiration(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(120)))
            })
        }
    }

    // On tokio's paused clock: the refresher's 300 ms only pass when every task waits on time,
    // so a second caller that waited for it would see the clock move.
    #[tokio::test(start_paused = true)]
    async fn valid_credentials_are_served_while_another_caller_refreshes() {
        let cache = Arc::new(CachingProvider::new(Slow {
            calls: AtomicUsize::new(0),
            delay: std::time::Duration::from_millis(300),
        }));
        assert_eq!(cache.credentials().await.unwrap().access_key_id, "AK1");
        let refresher = tokio::spawn({
            let cache = cache.clone();
            async move { cache.credentials().await.unwrap().access_key_id }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let started = tokio::time::Instant::now();
        assert_eq!(cache.credentials().await.unwrap().access_key_id, "AK1");
        assert_eq!(
            started.elapsed(),
            std::time::Duration::ZERO,
            "served without waiting"
        );
        assert!(!refresher.is_finished(), "the refresh was still running");
        assert_eq!(refresher.await.unwrap(), "AK2");
        assert_eq!(cache.inner.calls.load(Ordering::SeqCst), 2);
    }
}
