//! [`Options`]: how the controllers of this provider run, and the ECS client settings they
//! override ([`ClientOverrides`]).

use std::time::Duration;

use alibaba_sdk::credentials::EnvLookup;
use alibaba_sdk::rpc::RetryPolicy;
use ferroplane_runtime::requeue::RequeuePolicy;
use kube::{Api, Resource};

use crate::config_resolution::EndpointAllowList;

/// How the controllers run. `Default` watches every namespace, polls every 60 s and batches
/// observations.
#[derive(Clone, Debug)]
pub struct Options {
    /// Namespace to watch; `None` watches all of them.
    pub namespace: Option<String>,
    /// How often an instance is observed when nothing happens.
    pub poll_interval: Duration,
    /// How often an instance is observed while it starts, stops or is released; never less
    /// often than `poll_interval`.
    pub transition_interval: Duration,
    /// ECSInstance reconciles running at once.
    pub max_concurrent_reconciles: u16,
    /// Coalesce observations into shared `DescribeInstances` calls of up to 100 IDs. When false
    /// every observation makes its own call (what other providers do; for benchmarks).
    pub batching: bool,
    /// How long the batcher collects IDs before it calls `DescribeInstances`.
    pub batch_window: Duration,
    /// Overrides of the ECS client settings.
    pub client: ClientOverrides,
    /// Endpoints a namespaced ProviderConfig may name in `endpoint` or `stsEndpoint` besides
    /// Alibaba Cloud's `https://*.aliyuncs.com` (`ferroplane run --allow-endpoint`).
    pub allowed_endpoints: EndpointAllowList,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            namespace: None,
            poll_interval: Duration::from_secs(60),
            transition_interval: Duration::from_secs(5),
            max_concurrent_reconciles: 16,
            batching: true,
            batch_window: Duration::from_millis(5),
            client: ClientOverrides::default(),
            allowed_endpoints: EndpointAllowList::default(),
        }
    }
}

/// ECS client settings that replace the defaults for every configuration.
#[derive(Clone, Debug, Default)]
pub struct ClientOverrides {
    /// Time allowed for one attempt of a call.
    pub request_timeout: Option<Duration>,
    /// Time allowed to connect.
    pub connect_timeout: Option<Duration>,
    /// Retries of throttling, 5xx and network failures inside one call.
    pub retry: Option<RetryPolicy>,
    /// STS endpoint for `RamRoleArn` and `RRSA` credentials, instead of
    /// `https://sts.<region>.aliyuncs.com` (e.g. the ECS mock, which serves STS too). A
    /// configuration's own `stsEndpoint` still wins.
    pub sts_endpoint: Option<String>,
    /// Where the credential sources that stand for the controller read `ALIBABA_CLOUD_*`
    /// variables and `HOME` (default: the process environment; tests pass their own).
    pub environment: EnvLookup,
    /// The ECS metadata service for source `InstanceRole`, instead of
    /// `http://100.100.100.200` (tests point it at a local stand-in).
    pub metadata_endpoint: Option<String>,
}

impl Options {
    pub(crate) fn requeue_policy(&self) -> RequeuePolicy {
        RequeuePolicy {
            poll_interval: self.poll_interval,
            // A transition is never watched less often than an object at rest.
            transition_interval: self.transition_interval.min(self.poll_interval),
            backoff_max: RequeuePolicy::default().backoff_max.max(self.poll_interval),
            min_poll_interval: RequeuePolicy::default()
                .min_poll_interval
                .min(self.poll_interval),
            ..RequeuePolicy::default()
        }
    }

    pub(crate) fn api<K>(&self, client: &kube::Client) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        match &self.namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_map_to_a_requeue_policy() {
        let options = Options {
            poll_interval: Duration::from_secs(2),
            ..Options::default()
        };
        let policy = options.requeue_policy();
        assert_eq!(policy.poll_interval, Duration::from_secs(2));
        assert_eq!(policy.min_poll_interval, Duration::from_secs(2));
        assert_eq!(policy.transition_interval, Duration::from_secs(2));
    }
}
