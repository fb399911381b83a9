//! How the sandbox suites start their server: one per test, with a quick workload simulator.

use std::time::Duration;

use ferroplane_sandbox::SandboxConfig;
use ferroplane_testkit::TestCluster;

/// A server whose simulator marks Deployments and StatefulSets ready after 50 ms.
pub async fn start() -> TestCluster {
    TestCluster::start_with(SandboxConfig {
        workload_delay: Duration::from_millis(50),
        ..SandboxConfig::default()
    })
    .await
}
