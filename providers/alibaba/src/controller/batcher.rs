//! The observation batcher: every instance observed through one [`Batcher`] (one per
//! credentials version, endpoint and region) within a short window is described by shared
//! `DescribeInstances` calls of up to 100 IDs, so N instances cost ceil(N/100) calls per poll
//! round instead of N. Callers asking for the same ID wait on the same call. An instance absent
//! from the answer is gone (ECS omits unknown IDs instead of failing).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroplane_runtime::ExternalCalls;
use tokio::sync::oneshot;

use crate::client::EcsClient;
use crate::client::ecs::{DescribeInstancesRequest, MAX_INSTANCE_IDS_PER_CALL};
use crate::client::model::Instance;
use crate::error::Error;

/// What one caller gets: the instance, `None` when ECS does not know it, or the error of the
/// shared call.
pub type Described = Result<Option<Instance>, Arc<Error>>;

#[derive(Default)]
struct Pending {
    waiters: HashMap<String, Vec<oneshot::Sender<Described>>>,
    flush_scheduled: bool,
}

/// Coalesces `DescribeInstances` for one client.
pub struct Batcher {
    client: EcsClient,
    window: Duration,
    calls: ExternalCalls,
    pending: Mutex<Pending>,
}

impl fmt::Debug for Batcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batcher")
            .field("endpoint", &self.client.endpoint().as_str())
            .field("region", &self.client.region())
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl Batcher {
    /// A batcher that collects IDs for `window` before calling.
    pub fn new(client: EcsClient, window: Duration, calls: ExternalCalls) -> Self {
        Self {
            client,
            window,
            calls,
            pending: Mutex::new(Pending::default()),
        }
    }

    /// Describes one instance as part of the next shared call.
    pub async fn describe(self: &Arc<Self>, instance_id: &str) -> Described {
        let (tx, rx) = oneshot::channel();
        let schedule = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending
                .waiters
                .entry(instance_id.to_owned())
                .or_default()
                .push(tx);
            !std::mem::replace(&mut pending.flush_scheduled, true)
        };
        if schedule {
            let this = Arc::clone(self);
            tokio::spawn(async move {
                tokio::time::sleep(this.window).await;
                this.flush().await;
            });
        }
        rx.await.unwrap_or_else(|_| {
            Err(Arc::new(Error::InvalidRequest {
                action: "DescribeInstances".into(),
                reason: "the shared call was abandoned (the process is shutting down)".into(),
            }))
        })
    }

    async fn flush(&self) {
        let waiters = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.flush_scheduled = false;
            std::mem::take(&mut pending.waiters)
        };
        let ids: Vec<String> = waiters.keys().cloned().collect();
        let calls = ids
            .chunks(MAX_INSTANCE_IDS_PER_CALL)
            .map(|chunk| async move {
                let request = DescribeInstancesRequest {
                    instance_ids: chunk.to_vec(),
                    ..DescribeInstancesRequest::default()
                };
                let result = self.client.describe_instances(&request).await;
                self.calls.record(
                    "DescribeInstances",
                    match &result {
                        Ok(_) => "success",
                        Err(e) => e.code().unwrap_or(e.reason()),
                    },
                );
                (chunk, result)
            });
        let mut waiters = waiters;
        for (chunk, result) in futures::future::join_all(calls).await {
            match result {
                Ok(instances) => {
                    let mut found: HashMap<String, Instance> = instances
                        .into_iter()
                        .map(|i| (i.instance_id.clone(), i))
                        .collect();
                    for id in chunk {
                        let instance = found.remove(id);
                        for tx in waiters.remove(id).unwrap_or_default() {
                            let _ = tx.send(Ok(instance.clone()));
                        }
                    }
                }
                Err(error) => {
                    let error = Arc::new(error);
                    for id in chunk {
                        for tx in waiters.remove(id).unwrap_or_default() {
                            let _ = tx.send(Err(Arc::clone(&error)));
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::Credentials;
    use crate::mock::{DEFAULT_ACCOUNT_ID, LaunchSpec, MockConfig, MockServer};

    #[tokio::test]
    async fn concurrent_observations_share_calls_of_100() {
        let mock = MockServer::start(MockConfig::new("ak", "sk-batcher"))
            .await
            .unwrap();
        let spec = LaunchSpec {
            region_id: "cn-beijing".into(),
            image_id: "aliyun_3_x64_20G_alibase_20240528.vhd".into(),
            instance_type: "ecs.g6.large".into(),
            ..LaunchSpec::default()
        };
        let ids = mock
            .create_instances(DEFAULT_ACCOUNT_ID, &spec, 150)
            .unwrap();
        let client = EcsClient::builder("cn-beijing")
            .credentials(Credentials::new("ak", "sk-batcher"))
            .endpoint(mock.endpoint())
            .build()
            .unwrap();
        let calls = ferroplane_runtime::Metrics::new().external_calls("ECSInstance");
        let batcher = Arc::new(Batcher::new(client, Duration::from_millis(20), calls));
        let before = mock.stats().calls_of("DescribeInstances");
        let mut asked: Vec<String> = ids.clone();
        asked.push(ids[0].clone());
        asked.push("i-does-not-exist".into());
        let results = futures::future::join_all(asked.iter().map(|id| {
            let b = Arc::clone(&batcher);
            let id = id.clone();
            async move { (id.clone(), b.describe(&id).await) }
        }))
        .await;
        assert_eq!(mock.stats().calls_of("DescribeInstances") - before, 2);
        for (id, result) in results {
            let found = result.unwrap();
            if id == "i-does-not-exist" {
                assert!(found.is_none());
            } else {
                assert_eq!(found.unwrap().instance_id, id);
            }
        }
        mock.shutdown().await;
    }
}
