//! The import against the ECS mock, in process: what each selector takes, rules the spec cannot
//! list, key pairs with their public keys; and, ignored by default, the time for 10,000
//! instances (`cargo test -p ferroplane --bin ferroplane ten_thousand -- --ignored --nocapture`).

use std::time::{Duration, Instant};

use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec, MockConfig, MockServer};
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::{CreateSecurityGroupRequest, Direction, EcsClient, Rule};
use alibaba_sdk::endpoint::parse_endpoint;
use alibaba_sdk::rpc::Params;
use alibaba_sdk::vpc::{CreateVSwitchRequest, CreateVpcRequest, VpcClient};
use ferroplane_apis::common::ProviderConfigReference;

use super::import;
use super::manifest::{Common, Management, Manifest};
use super::selector::{Selector, TagFilter};

const REGION: &str = "cn-beijing";
const ZONE: &str = "cn-beijing-h";

async fn mock() -> (MockServer, EcsClient, VpcClient) {
    let mock = MockServer::start(
        MockConfig::new("LTAIimporttest", "import-test-secret")
            .with_transition_delay(Duration::ZERO)
            .with_visibility_lag(Duration::ZERO),
    )
    .await
    .unwrap();
    let ecs = EcsClient::builder(REGION)
        .credentials(Credentials::new("LTAIimporttest", "import-test-secret"))
        .endpoint(mock.endpoint())
        .build()
        .unwrap();
    let vpc = VpcClient::with_settings_of(&ecs, parse_endpoint(&mock.endpoint()).unwrap()).unwrap();
    (mock, ecs, vpc)
}

fn common() -> Common {
    Common {
        namespace: Some("shop".into()),
        management: Management::ObserveOnly,
        provider_config: ProviderConfigReference::default(),
    }
}

fn of_kind<'a>(manifests: &'a [Manifest], kind: &str) -> Vec<&'a Manifest> {
    manifests.iter().filter(|m| m.kind == kind).collect()
}

/// A VPC with a vSwitch, groups `web` (one rule from group `lb`) and `lb`, key pair `deploy`,
/// and three instances named `web`, the last tagged `team=checkout`; returns the instance IDs.
async fn account(mock: &MockServer, ecs: &EcsClient, vpc: &VpcClient) -> Vec<String> {
    let vpc_id = vpc
        .create_vpc(&CreateVpcRequest {
            cidr_block: Some("10.0.0.0/8".into()),
            vpc_name: Some("shop".into()),
            ..CreateVpcRequest::default()
        })
        .await
        .unwrap()
        .vpc_id;
    let vswitch = vpc
        .create_vswitch(&CreateVSwitchRequest {
            vpc_id: vpc_id.clone(),
            zone_id: ZONE.into(),
            cidr_block: "10.1.0.0/16".into(),
            ..CreateVSwitchRequest::default()
        })
        .await
        .unwrap()
        .vswitch_id;
    let group = |name: &str| CreateSecurityGroupRequest {
        vpc_id: Some(vpc_id.clone()),
        security_group_name: Some(name.into()),
        ..CreateSecurityGroupRequest::default()
    };
    let web = ecs
        .create_security_group(&group("web"))
        .await
        .unwrap()
        .security_group_id;
    let lb = ecs
        .create_security_group(&group("lb"))
        .await
        .unwrap()
        .security_group_id;
    let https = Rule {
        ip_protocol: "tcp".into(),
        port_range: "443/443".into(),
        cidr_ip: "0.0.0.0/0".into(),
        policy: "accept".into(),
        priority: 1,
        description: String::new(),
    };
    ecs.authorize_security_group(&web, Direction::Ingress, &[https])
        .await
        .unwrap();
    let mut from_lb = Params::new();
    from_lb
        .set("SecurityGroupId", &web)
        .set("IpProtocol", "tcp")
        .set("PortRange", "8080/8080")
        .set("SourceGroupId", &lb);
    ecs.call("AuthorizeSecurityGroup", &from_lb).await.unwrap();
    ecs.create_key_pair("deploy", &[]).await.unwrap();
    let mut ids = Vec::new();
    for n in 0..3 {
        let mut spec = LaunchSpec::new(
            REGION,
            "centos_7_8_x64_20G_alibase_20200519.vhd",
            "ecs.g6.large",
        );
        spec.zone_id = Some(ZONE.into());
        spec.vswitch_id = Some(vswitch.clone());
        spec.security_group_ids = vec![web.clone()];
        spec.instance_name = Some("web".into());
        spec.key_pair_name = Some("deploy".into());
        if n == 2 {
            spec.tags = vec![("team".into(), "checkout".into())];
        }
        ids.extend(mock.create_instances(DEFAULT_ACCOUNT_ID, &spec, 1).unwrap());
    }
    ids
}

#[tokio::test]
async fn each_selector_takes_what_it_names_and_what_that_stands_on() {
    let (mock, ecs, vpc) = mock().await;
    let ids = account(&mock, &ecs, &vpc).await;

    let one = import(
        &ecs,
        &vpc,
        &Selector::Instances(vec![ids[0].clone()]),
        REGION,
        &common(),
    )
    .await
    .unwrap();
    let kinds: Vec<(&str, usize)> = ["VPC", "VSwitch", "SecurityGroup", "KeyPair", "ECSInstance"]
        .iter()
        .map(|k| (*k, of_kind(&one.manifests, k).len()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("VPC", 1),
            ("VSwitch", 1),
            ("SecurityGroup", 1),
            ("KeyPair", 1),
            ("ECSInstance", 1)
        ]
    );
    // The rule from group `lb` cannot be listed: the group keeps it as Additive, with a note.
    let web = &of_kind(&one.manifests, "SecurityGroup")[0].object["spec"]["forProvider"];
    assert_eq!(web["rulesPolicy"], "Additive");
    assert_eq!(web["ingress"].as_array().unwrap().len(), 1);
    assert!(
        one.notes.iter().any(|n| n.contains("Additive")),
        "{:?}",
        one.notes
    );
    // The key pair carries its public key, so it needs no connection Secret.
    let key = &of_kind(&one.manifests, "KeyPair")[0].object["spec"];
    assert!(
        key["forProvider"]["publicKey"]
            .as_str()
            .unwrap()
            .starts_with("ssh-")
    );
    assert!(key.get("writeConnectionSecretToRef").is_none());
    assert_eq!(
        of_kind(&one.manifests, "ECSInstance")[0].object["metadata"]["namespace"],
        "shop"
    );

    let tagged = Selector::Tags(vec![TagFilter {
        key: "team".into(),
        value: "checkout".into(),
    }]);
    let tagged = import(&ecs, &vpc, &tagged, REGION, &common())
        .await
        .unwrap();
    let instances = of_kind(&tagged.manifests, "ECSInstance");
    assert_eq!(instances.len(), 1);
    assert_eq!(
        instances[0].object["metadata"]["annotations"]["ferroplane.io/external-name"],
        ids[2].as_str()
    );

    let all = import(&ecs, &vpc, &Selector::All, REGION, &common())
        .await
        .unwrap();
    let names: std::collections::BTreeSet<&str> = of_kind(&all.manifests, "ECSInstance")
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(
        names.len(),
        3,
        "three instances named `web` get three names"
    );
    assert!(names.iter().all(|n| n.starts_with("web-i-")), "{names:?}");
    mock.shutdown().await;
}

/// Not a test of behaviour but a figure: `--all` over 10,000 instances in the mock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a timing: run by hand with --ignored --nocapture"]
async fn ten_thousand_instances_are_imported() {
    let (mock, ecs, vpc) = mock().await;
    let spec = LaunchSpec::new(
        REGION,
        "centos_7_8_x64_20G_alibase_20200519.vhd",
        "ecs.g6.large",
    )
    .with_default_network();
    mock.create_instances(DEFAULT_ACCOUNT_ID, &spec, 10_000)
        .unwrap();
    let started = Instant::now();
    let all = import(&ecs, &vpc, &Selector::All, REGION, &common())
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let mut out = Vec::new();
    super::output::write_stream(&all.manifests, &mut out).unwrap();
    let stats = mock.stats();
    println!(
        "imported {} objects ({} ECSInstance) in {:.1}s (with YAML: {:.1}s, {} MB); DescribeInstances calls: {}",
        all.manifests.len(),
        of_kind(&all.manifests, "ECSInstance").len(),
        elapsed.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        out.len() / 1_000_000,
        stats.calls_of("DescribeInstances"),
    );
    assert_eq!(of_kind(&all.manifests, "ECSInstance").len(), 10_000);
    mock.shutdown().await;
}
