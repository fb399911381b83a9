//! Stopping a kube-runtime controller that is told to stop before its first list completed.
//!
//! kube-runtime's graceful shutdown ends the controller's watches at once and then waits for its
//! runner to drain. The runner holds every reconcile until the controller's store has seen a
//! first complete list, and with the watches gone that never happens: the controller would wait
//! forever (a process stopped within a second of starting hung until killed). No reconcile can
//! have started before that first list, so there is nothing to wait for.

use std::future::Future;

use futures::FutureExt as _;
use kube::Resource;
use kube::runtime::reflector::Store;

/// Completes when `shutdown` has completed while `store` had not seen its first list; never
/// completes otherwise (the graceful shutdown then drains the running reconciles).
pub async fn stopped_before_ready<K>(store: Store<K>, shutdown: impl Future<Output = ()>)
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    shutdown.await;
    if matches!(store.wait_until_ready().now_or_never(), Some(Ok(()))) {
        futures::future::pending::<()>().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::reflector;
    use kube::runtime::watcher;

    #[tokio::test]
    async fn an_unready_store_stops_at_once_a_ready_one_waits() {
        let (reader, _writer) = reflector::store::<ConfigMap>();
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            stopped_before_ready(reader, async {}),
        )
        .await
        .expect("an unready store stops at once");

        let (reader, mut writer) = reflector::store::<ConfigMap>();
        writer.apply_watcher_event(&watcher::Event::Init);
        writer.apply_watcher_event(&watcher::Event::InitDone);
        let waiting = stopped_before_ready(reader, async {});
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(50), waiting)
                .await
                .is_err(),
            "a ready store leaves the draining to the graceful shutdown"
        );
    }
}
