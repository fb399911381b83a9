//! Bad input catalogue: what a user sees for each mistake they can make. Schema mistakes are
//! refused by `kubectl apply` itself (as on a real cluster); mistakes only the cloud or the
//! credentials can reveal end in `Synced=False` with a message naming the problem, and a retry
//! with backoff — never a crash. A `ferroplane.io/paused` value that is not exactly "true" or
//! "false" leaves the object alone and says so.

use std::cell::RefCell;
use std::time::Duration;

use crate::support::{ACCESS_KEY_ID, ACCESS_KEY_SECRET, E2e};
use alibaba_mock::{AccessKey, DEFAULT_ACCOUNT_ID};
use ferroplane::controllers::Kind;
use ferroplane_testkit::eventually;

const VALID: &str = r#"
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ECSInstance
metadata:
  name: NAME
spec:
  forProvider:
    regionId: cn-beijing
    imageId: centos_7_8_x64_20G_alibase_20200519.vhd
    instanceType: ecs.g6.large
    instanceName: web-server
    vSwitchId: vsw-eafxvpknkjnma5xpiqaf0w
    securityGroupIds: [sg-y2fkm5jxbput7ntjcm6tbw]
"#;

fn ecs(name: &str, replace: &[(&str, &str)], extra_for_provider: &str) -> String {
    let mut yaml = VALID.replace("NAME", name);
    for (from, to) in replace {
        assert!(yaml.contains(from), "{from} is in the template");
        yaml = yaml.replace(from, to);
    }
    yaml + extra_for_provider
}

/// A manifest of the Alibaba `kind` (no `namespace`) whose `forProvider` is `for_provider`, a
/// YAML block indented by four spaces.
fn alibaba(kind: &str, name: &str, for_provider: &str) -> String {
    format!(
        "apiVersion: alibabacloud.ferroplane.io/v1alpha1\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n  forProvider:\n    regionId: cn-beijing\n{for_provider}"
    )
}

/// Tags ECS and VPC refuse, on every Alibaba kind: refused by the schema, not by a failed call.
fn tag_cases() -> Vec<(&'static str, String, &'static str)> {
    const KEYS: &str = "each tag key must be 1 to 128 characters";
    const VALUES: &str = "tag values must not start with 'acs:'";
    vec![
        (
            "empty tag key",
            ecs("t1", &[], "    tags:\n      \"\": x\n"),
            KEYS,
        ),
        (
            "tag key with a URL",
            alibaba("VPC", "t2", "    tags:\n      see-https://example.com: x\n"),
            KEYS,
        ),
        (
            "tag key with an upper-case reserved prefix",
            alibaba("KeyPair", "t3", "    tags:\n      ALIYUN-team: x\n"),
            KEYS,
        ),
        (
            "ferroplane's UID tag",
            alibaba(
                "SecurityGroup",
                "t4",
                "    vpcId: vpc-1\n    tags:\n      ferroplane.io/uid: x\n",
            ),
            KEYS,
        ),
        (
            "tag key of 129 characters",
            alibaba(
                "VSwitch",
                "t5",
                &format!(
                    "    vpcId: vpc-1\n    zoneId: cn-beijing-a\n    cidrBlock: 10.0.0.0/24\n    tags:\n      {}: x\n",
                    "k".repeat(129)
                ),
            ),
            KEYS,
        ),
        (
            "tag value starting with acs:",
            alibaba(
                "Disk",
                "t6",
                "    zoneId: cn-beijing-a\n    size: 40\n    tags:\n      team: acs:web\n",
            ),
            VALUES,
        ),
        (
            "tag value with a URL",
            ecs("t7", &[], "    tags:\n      docs: http://example.com\n"),
            VALUES,
        ),
        (
            "tag value of 129 characters",
            alibaba(
                "VPC",
                "t8",
                &format!("    tags:\n      team: {}\n", "v".repeat(129)),
            ),
            "spec.forProvider.tags.team",
        ),
    ]
}

/// (case, manifest, text the refusal must contain)
fn schema_cases() -> Vec<(&'static str, String, &'static str)> {
    let many_tags: String = (0..20).map(|i| format!("      k{i}: v\n")).collect();
    vec![
        ("missing regionId", ecs("c1", &[("    regionId: cn-beijing\n", "")], ""), "spec.forProvider.regionId: Required value"),
        ("missing imageId", ecs("c2", &[("    imageId: centos_7_8_x64_20G_alibase_20200519.vhd\n", "")], ""), "spec.forProvider.imageId: Required value"),
        ("missing instanceType", ecs("c3", &[("    instanceType: ecs.g6.large\n", "")], ""), "spec.forProvider.instanceType: Required value"),
        ("instance type without ecs. prefix", ecs("c4", &[("ecs.g6.large", "m5.large")], ""), "spec.forProvider.instanceType in body should match"),
        ("bandwidth above 100", ecs("c5", &[], "    internetMaxBandwidthOut: 101\n"), "should be less than or equal to 100"),
        ("negative bandwidth", ecs("c6", &[], "    internetMaxBandwidthOut: -1\n"), "should be greater than or equal to 0"),
        ("unknown deletionPolicy", ecs("c7", &[("spec:\n", "spec:\n  deletionPolicy: Keep\n")], ""), "Unsupported value: \"Keep\""),
        ("unknown desiredStatus", ecs("c8", &[], "    desiredStatus: Paused\n"), "Unsupported value: \"Paused\""),
        ("unknown instanceChargeType", ecs("c9", &[], "    instanceChargeType: Monthly\n"), "Unsupported value: \"Monthly\""),
        ("malformed region ID", ecs("c10", &[("cn-beijing", "Beijing")], ""), "spec.forProvider.regionId in body should match"),
        ("one-character instance name", ecs("c11", &[("web-server", "x")], ""), "spec.forProvider.instanceName"),
        ("instance name that is a URL", ecs("c12", &[("web-server", "http://web")], ""), "instanceName must not start with http://"),
        ("reserved tag prefix", ecs("c13", &[], "    tags:\n      aliyun-team: x\n"), "must not start with 'aliyun'"),
        ("too many tags", ecs("c14", &[], &format!("    tags:\n{many_tags}")), "spec.forProvider.tags"),
        ("huge userData", ecs("c15", &[], &format!("    userData: \"{}\"\n", "x".repeat(33_000))), "spec.forProvider.userData"),
        ("unknown management policy", ecs("c16", &[("spec:\n", "spec:\n  managementPolicies: [Sometimes]\n")], ""), "Unsupported value: \"Sometimes\""),
        ("malformed vSwitchId", ecs("c17", &[], "    vSwitchId: subnet-1\n"), "spec.forProvider.vSwitchId in body should match"),
        ("malformed security group", ecs("c18", &[], "    securityGroupIds: [default]\n"), "should match '^sg-"),
        ("system disk too small", ecs("c19", &[], "    systemDisk:\n      size: 10\n"), "should be greater than or equal to 20"),
        ("unicode name", ecs("实例", &[], ""), "RFC 1123"),
        ("etcd of size 0", "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: e0\nspec:\n  size: 0\n".into(), "should be greater than or equal to 1"),
        ("etcd of size 10", "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: e10\nspec:\n  size: 10\n".into(), "should be less than or equal to 9"),
        ("application port out of range", "apiVersion: apps.ferroplane.io/v1alpha1\nkind: Application\nmetadata:\n  name: a1\nspec:\n  image: nginx\n  port: 70000\n".into(), "should be less than or equal to 65535"),
        ("unknown credentials source", "apiVersion: alibabacloud.ferroplane.io/v1alpha1\nkind: ProviderConfig\nmetadata:\n  name: p1\nspec:\n  credentials:\n    source: Vault\n".into(), "Unsupported value: \"Vault\""),
        ("Secret source without secretRef", "apiVersion: alibabacloud.ferroplane.io/v1alpha1\nkind: ProviderConfig\nmetadata:\n  name: p2\nspec:\n  credentials:\n    source: Secret\n".into(), "source Secret needs secretRef"),
        ("cluster config without Secret namespace", "apiVersion: alibabacloud.ferroplane.io/v1alpha1\nkind: ClusterProviderConfig\nmetadata:\n  name: p3\nspec:\n  credentials:\n    source: Secret\n    secretRef:\n      name: creds\n".into(), "must name the Secret's namespace"),
    ]
    .into_iter()
    .chain(tag_cases())
    .collect()
}

pub(crate) async fn schema_mistakes_are_refused_at_apply_time() {
    let e2e = E2e::start(&[]).await;
    let cases = schema_cases();
    for (case, manifest, expected) in &cases {
        let out = e2e.kubectl(&["apply", "-f", "-"], Some(manifest)).await;
        let stderr = out.stderr.clone();
        assert!(!out.success(), "{case}: kubectl apply should fail");
        assert!(
            stderr.contains(expected),
            "{case}: expected {expected:?} in:\n{stderr}"
        );
    }

    // Immutable fields: edits are refused by the schema's transition rules.
    e2e.apply(&ecs("immutable", &[], "    zoneId: cn-beijing-a\n"))
        .await;
    let edits = [
        (
            "regionId",
            r#"{"spec":{"forProvider":{"regionId":"cn-shanghai"}}}"#,
            "regionId is immutable",
        ),
        (
            "vSwitchId removed",
            r#"{"spec":{"forProvider":{"vSwitchId":null}}}"#,
            "vSwitchId cannot be removed",
        ),
        (
            "zoneId",
            r#"{"spec":{"forProvider":{"zoneId":"cn-beijing-b"}}}"#,
            "zoneId is immutable",
        ),
        (
            "zoneId removed",
            r#"{"spec":{"forProvider":{"zoneId":null}}}"#,
            "zoneId cannot be removed",
        ),
    ];
    for (case, patch, expected) in edits {
        let out = e2e
            .kubectl(
                &["patch", "ecs", "immutable", "--type", "merge", "-p", patch],
                None,
            )
            .await;
        let stderr = out.stderr.clone();
        assert!(!out.success(), "editing {case} should fail");
        assert!(
            stderr.contains(expected),
            "{case}: expected {expected:?} in:\n{stderr}"
        );
    }
    println!(
        "{} schema cases and {} immutable-field edits refused with the expected message",
        cases.len(),
        edits.len()
    );
    e2e.finish().await;
}

/// A ProviderConfig named `name` using `secret_yaml`'s Secret (or none) and `endpoint`.
fn provider_config(name: &str, secret_ref: &str, endpoint: &str) -> String {
    format!(
        "apiVersion: alibabacloud.ferroplane.io/v1alpha1\nkind: ProviderConfig\nmetadata:\n  name: {name}\nspec:\n  credentials:\n    source: Secret\n    secretRef:\n{secret_ref}\n  endpoint: {endpoint}\n"
    )
}

fn secret(name: &str, string_data: &str) -> String {
    format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\nstringData:\n{string_data}\n")
}

fn using(config: &str, name: &str, replace: &[(&str, &str)]) -> String {
    ecs(name, replace, "").replace(
        "spec:\n",
        &format!("spec:\n  providerConfigRef:\n    name: {config}\n"),
    )
}

pub(crate) async fn runtime_mistakes_end_in_an_actionable_condition() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    let endpoint = e2e.mock().endpoint();
    e2e.mock().add_access_key(AccessKey::new(
        "LTAIdisabledkey01",
        "disabled-secret-1",
        DEFAULT_ACCOUNT_ID,
    ));
    assert!(
        e2e.mock()
            .set_access_key_enabled("LTAIdisabledkey01", false)
    );
    let other_ns = format!("{}-other", e2e.namespace);
    e2e.k(&["create", "namespace", &other_ns]).await;
    e2e.k(&[
        "create",
        "secret",
        "generic",
        "creds",
        "-n",
        &other_ns,
        &format!("--from-literal=accessKeyId={ACCESS_KEY_ID}"),
        &format!("--from-literal=accessKeySecret={ACCESS_KEY_SECRET}"),
    ])
    .await;

    let setup = [
        secret("no-secret-key", &format!("  accessKeyId: {ACCESS_KEY_ID}")),
        secret("bad-json", "  credentials: '{\"access_key\": \"LTAI'"),
        secret(
            "unknown-key",
            "  accessKeyId: LTAIdoesnotexist01\n  accessKeySecret: whatever-secret-9",
        ),
        secret(
            "disabled-key",
            "  accessKeyId: LTAIdisabledkey01\n  accessKeySecret: disabled-secret-1",
        ),
        provider_config("pc-missing-secret", "      name: does-not-exist", &endpoint),
        provider_config("pc-missing-key", "      name: no-secret-key", &endpoint),
        provider_config(
            "pc-bad-json",
            "      name: bad-json\n      key: credentials",
            &endpoint,
        ),
        provider_config("pc-unknown-key", "      name: unknown-key", &endpoint),
        provider_config("pc-disabled-key", "      name: disabled-key", &endpoint),
        provider_config(
            "pc-other-namespace",
            &format!("      name: creds\n      namespace: {other_ns}"),
            &endpoint,
        ),
        provider_config(
            "pc-refused",
            "      name: alibabacloud-credentials",
            "http://127.0.0.1:9",
        ),
    ]
    .join("---\n");
    e2e.apply(&setup).await;

    // (object, manifest, text Synced's message must contain)
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "unknown-region",
            ecs("unknown-region", &[("cn-beijing", "xx-nowhere-1")], ""),
            "InvalidRegionId.NotFound",
        ),
        (
            "unknown-image",
            ecs(
                "unknown-image",
                &[(
                    "centos_7_8_x64_20G_alibase_20200519.vhd",
                    "no_such_image.vhd",
                )],
                "",
            ),
            "InvalidImageId.NotFound",
        ),
        (
            "unknown-type",
            ecs("unknown-type", &[("ecs.g6.large", "ecs.zz9.huge")], ""),
            "InvalidInstanceType.ValueNotSupported",
        ),
        (
            "no-stock",
            ecs("no-stock", &[("ecs.g6.large", "ecs.gn6i-c4g1.xlarge")], ""),
            "OperationDenied.NoStock",
        ),
        (
            "missing-config",
            using("pc-nowhere", "missing-config", &[]),
            "pc-nowhere",
        ),
        (
            "missing-secret",
            using("pc-missing-secret", "missing-secret", &[]),
            "does-not-exist",
        ),
        (
            "missing-key",
            using("pc-missing-key", "missing-key", &[]),
            "accessKeySecret",
        ),
        ("bad-json", using("pc-bad-json", "bad-json", &[]), "JSON"),
        (
            "unknown-key",
            using("pc-unknown-key", "unknown-key", &[]),
            "InvalidAccessKeyId.NotFound",
        ),
        (
            "disabled-key",
            using("pc-disabled-key", "disabled-key", &[]),
            "InvalidAccessKeyId.Inactive",
        ),
        (
            "other-namespace",
            using("pc-other-namespace", "other-namespace", &[]),
            "own namespace",
        ),
        (
            "refused",
            using("pc-refused", "refused", &[]),
            "127.0.0.1:9",
        ),
        (
            "paused-misspelt",
            ecs(
                "paused-misspelt",
                &[(
                    "  name: paused-misspelt\n",
                    "  name: paused-misspelt\n  annotations:\n    ferroplane.io/paused: \"True\"\n",
                )],
                "",
            ),
            "annotation ferroplane.io/paused is not understood",
        ),
    ];
    for (_, manifest, _) in &cases {
        e2e.apply(manifest).await;
    }
    // A case leaves `pending` once its object said so.
    let pending = RefCell::new(cases.iter().collect::<Vec<_>>());
    let waited = eventually("every object to name its ProviderConfig's failure")
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(300))
        .try_until_async(|| async {
            let mut reached = Vec::new();
            let waiting = pending.borrow().clone();
            for case in waiting {
                let (name, _, expected) = case;
                let message = e2e
                    .jsonpath(
                        &format!("ecs/{name}"),
                        "{.status.conditions[?(@.type=='Synced')].message}",
                    )
                    .await;
                if message.contains(expected) {
                    reached.push(*name);
                }
            }
            let mut pending = pending.borrow_mut();
            pending.retain(|(name, _, _)| !reached.contains(name));
            pending.is_empty()
        })
        .await;
    if waited.is_err() {
        let mut report = Vec::new();
        let left = pending.borrow().clone();
        for (name, _, expected) in left {
            let conditions = e2e
                .jsonpath(&format!("ecs/{name}"), "{.status.conditions}")
                .await;
            report.push(format!("{name}: expected {expected:?}, got {conditions:?}"));
        }
        panic!("conditions not reached:\n{}", report.join("\n"));
    }
    for (name, _, _) in &cases {
        let synced = e2e
            .jsonpath(
                &format!("ecs/{name}"),
                "{.status.conditions[?(@.type=='Synced')].status}",
            )
            .await;
        assert_eq!(synced, "False", "{name}");
        let events = e2e
            .k(&[
                "get",
                "events",
                "--field-selector",
                &format!("involvedObject.name={name}"),
            ])
            .await;
        assert!(
            events.contains("Warning"),
            "{name}: a Warning event, got {events}"
        );
        let described = e2e.k(&["describe", "ecs", name]).await;
        for secret in [ACCESS_KEY_SECRET, "whatever-secret-9", "disabled-secret-1"] {
            assert!(
                !described.contains(secret),
                "{name}: a secret in kubectl describe"
            );
        }
    }
    assert_eq!(
        e2e.mock().stats().instances_live,
        0,
        "no failed case created an instance"
    );

    // Deletion protection: the delete waits, says why, and goes through once protection is off.
    e2e.apply(&ecs("protected", &[], "    deletionProtection: true\n"))
        .await;
    e2e.wait_jsonpath(
        "ecs/protected",
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    e2e.k(&["delete", "ecs", "protected", "--wait=false"]).await;
    e2e.eventually(
        "the deletion-protection condition",
        Duration::from_secs(30),
        || async {
            let m = e2e
                .jsonpath(
                    "ecs/protected",
                    "{.status.conditions[?(@.type=='Synced')].message}",
                )
                .await;
            m.contains("deletion protection").then_some(())
        },
    )
    .await;
    assert_eq!(
        e2e.mock().stats().instances_live,
        1,
        "a protected instance is not released"
    );
    e2e.k(&[
        "patch",
        "ecs",
        "protected",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"forProvider":{"deletionProtection":false}}}"#,
    ])
    .await;
    e2e.k(&["wait", "--for=delete", "ecs/protected", "--timeout=60s"])
        .await;
    assert_eq!(e2e.mock().stats().instances_live, 0);

    // A cleanup of every failed object must not hang: nothing was created for them.
    e2e.k(&["delete", "ecs", "--all", "--timeout=60s"]).await;
    println!(
        "{} runtime cases reported with the expected message, plus deletion protection",
        cases.len()
    );
    e2e.finish().await;
}
