//! Alibaba Cloud's official Python SDKs against the mock: the classic V1 SDK
//! (`aliyun-python-sdk-core`, `aliyun-python-sdk-ecs`) and the generated V3 SDK
//! (`alibabacloud_ecs20140526`), and the classic VPC SDK (`aliyun-python-sdk-vpc`). The script is
//! `tests/sdk/official_sdk.py`.
//!
//! The interpreter is `$FERROPLANE_SDK_PYTHON`, else `python3`. The test skips, with a notice,
//! only when no interpreter runs or none of the SDK packages is importable.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use ferroplane_testkit::mock_requests::*;

const SKIP: i32 = 77;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_python_sdks_work_against_the_mock() {
    let mock = start(Duration::from_millis(200)).await;
    let python = std::env::var("FERROPLANE_SDK_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/official_sdk.py");
    let child = tokio::process::Command::new(&python)
        .arg(&script)
        .env("MOCK_HOST", "127.0.0.1")
        .env("MOCK_PORT", mock.addr().port().to_string())
        .env("MOCK_AK", AK)
        .env("MOCK_SECRET", SECRET)
        .env("MOCK_VSWITCH", VSWITCH)
        .env("MOCK_SECURITY_GROUP", SECURITY_GROUP)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let child = match child {
        Ok(child) => child,
        Err(error) => {
            println!("SKIPPED official SDK test: cannot run {python}: {error}");
            return;
        }
    };
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("SDK script finishes within 2 minutes")
        .expect("SDK script output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(SKIP) {
        println!(
            "SKIPPED official SDK test: {} (pip install aliyun-python-sdk-core aliyun-python-sdk-ecs aliyun-python-sdk-vpc alibabacloud_ecs20140526)",
            stdout.trim()
        );
        return;
    }
    println!("{stdout}");
    assert!(
        output.status.success(),
        "SDK script failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(stdout.contains("all official SDK checks passed"));
    let stats = mock.stats();
    assert!(stats.calls_of("RunInstances") >= 2, "{stats:?}");
    if stdout.contains("classic SDK: DeleteKeyPairs") {
        for action in [
            "CreateDisk",
            "AttachDisk",
            "ResizeDisk",
            "DetachDisk",
            "DeleteDisk",
            "ImportKeyPair",
            "DescribeKeyPairs",
            "DeleteKeyPairs",
        ] {
            assert!(stats.calls_of(action) >= 1, "{action}: {stats:?}");
        }
    }
    if stdout.contains("VPC SDK: CreateVpc") {
        assert!(
            stats.calls_of("CreateVpc") >= 1 && stats.calls_of("DeleteVpc") >= 1,
            "{stats:?}"
        );
    }
}
