//! Alibaba Cloud's official Python SDKs against the mock: the classic V1 SDK
//! (`aliyun-python-sdk-core`, `aliyun-python-sdk-ecs`) and the generated V3 SDK
//! (`alibabacloud_ecs20140526`), and the classic VPC SDK (`aliyun-python-sdk-vpc`). The script is
//! `tests/sdk/official_sdk.py` (with `stack_reads.py`: the reads and in-place changes of a
//! Terraform stack; `nat_sdk.py`: the NAT gateway lifecycle with its SNAT and DNAT entries).
//!
//! The interpreter is `$FERROPLANE_SDK_PYTHON`, else that of the SDK venv, made when missing (see
//! `sdk_python`). The test fails, never skips, when the SDKs cannot be had.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use ferroplane_testkit::mock_requests::*;

use crate::sdk_python::sdk_python;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_python_sdks_work_against_the_mock() {
    let python = tokio::task::spawn_blocking(sdk_python)
        .await
        .expect("SDK venv task")
        .unwrap_or_else(|error| panic!("no Python with Alibaba Cloud's official SDKs: {error}"));
    let mock = start(Duration::from_millis(200)).await;
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
    let child = child.unwrap_or_else(|error| panic!("cannot run {}: {error}", python.display()));
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("SDK script finishes within 2 minutes")
        .expect("SDK script output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "SDK script failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(stdout.contains("all official SDK checks passed"));
    let stats = mock.stats();
    assert!(stats.calls_of("RunInstances") >= 2, "{stats:?}");
    for action in [
        "CreateDisk",
        "AttachDisk",
        "ResizeDisk",
        "DetachDisk",
        "DeleteDisk",
        "ImportKeyPair",
        "DescribeKeyPairs",
        "DeleteKeyPairs",
        "DescribeVpcAttribute",
        "DescribeVSwitchAttributes",
        "DescribeRouteTableList",
        "DescribeUserData",
        "DescribeNetworkInterfaces",
        "DescribeInstanceMaintenanceAttributes",
        "DescribeInstanceAttachmentAttributes",
        "JoinSecurityGroup",
        "LeaveSecurityGroup",
        "ModifySecurityGroupRule",
        "DescribeAvailableResource",
        "DescribeImages",
        "GetCallerIdentity",
        "CreateNatGateway",
        "CreateSnatEntry",
        "ModifySnatEntry",
        "CreateForwardEntry",
        "DeleteForwardEntry",
        "DeleteSnatEntry",
        "DeleteNatGateway",
    ] {
        assert!(stats.calls_of(action) >= 1, "{action}: {stats:?}");
    }
    assert!(
        stats.calls_of("CreateVpc") >= 1 && stats.calls_of("DeleteVpc") >= 1,
        "{stats:?}"
    );
}
