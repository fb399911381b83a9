//! Every in-place and restart-class ECSInstance field not edited by another e2e, one row each,
//! held to the provider's field table (a field of those classes that no e2e edits fails the
//! test): the row's edit is applied with `kubectl apply` on a Ready instance, the mock's
//! instance shows it, Synced is True for the new generation before the next row, and the edit
//! took its class's path (no StopInstance in place; exactly one for a restart-bound field,
//! `allowRestart` being true). Before each row's apply, `ferroplane plan` of the edited manifest
//! predicts the write calls the controller then makes, exactly (from the mock's counts), but for
//! the inputs ECS never reports back (`WRITE_ONLY_INPUTS`), which no read can compare. Then each
//! immutable field kubectl must refuse, with its message. The instance lives on an IPv6
//! network made with kubectl (VPC `enableIpv6`, two vSwitches of one zone with
//! `ipv6CidrBlock`, two security groups), a burstable type, so that every row has a field to
//! change. Other e2e edit the rest (`EDITED_ELSEWHERE`). The password
//! is changed twice: by pointing `passwordSecretRef` at another Secret, and by changing that
//! Secret. Last, the network's own in-place fields (name, description, tags of the VPC, a
//! vSwitch and a security group) are edited with kubectl and read back from the cloud.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use alibaba_mock::DiskSummary;
use alibaba_mock::InstanceSummary;
use base64::Engine as _;
use ferroplane::controllers::Kind;
use serde_json::{Value, json};

use crate::e2e_plan::{made_since, plan, predicted};
use crate::support::E2e;

/// Rows whose change no read shows: ECS takes a password and user data but never reports them,
/// and the controller compares them with digests it keeps in memory. `plan` predicts nothing
/// for them.
const WRITE_ONLY_INPUTS: [&str; 2] = ["userData", "passwordSecretRef"];

const ZONE: &str = "cn-beijing-a";
const WAIT: Duration = Duration::from_secs(60);
/// Logon passwords of the instance, in the order it gets them.
const PASSWORDS: [&str; 3] = ["First-pass1", "Second-pass2", "Third-pass3"];

fn password_secret(name: &str, password: &str) -> String {
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name},
        "stringData": {"password": password},
    })
    .to_string()
}

/// The network's objects, one JSON document each (kubectl reads a JSON stream only one object
/// at a time).
fn network() -> Vec<String> {
    let mut docs = vec![json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1", "kind": "VPC",
        "metadata": {"name": "v6"},
        "spec": {"forProvider": {"regionId": "cn-beijing", "cidrBlock": "10.40.0.0/16", "enableIpv6": true}},
    })];
    for (name, index) in [("v6-a", 1), ("v6-b", 2)] {
        docs.push(json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1", "kind": "VSwitch",
            "metadata": {"name": name},
            "spec": {"forProvider": {"regionId": "cn-beijing", "zoneId": ZONE,
                "cidrBlock": format!("10.40.{index}.0/24"), "ipv6CidrBlock": index,
                "vpcIdRef": {"name": "v6"}}},
        }));
    }
    for name in ["v6-fw-1", "v6-fw-2"] {
        docs.push(json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1", "kind": "SecurityGroup",
            "metadata": {"name": name},
            "spec": {"forProvider": {"regionId": "cn-beijing", "vpcIdRef": {"name": "v6"}}},
        }));
    }
    docs.iter().map(Value::to_string).collect()
}

fn instance(for_provider: &Value) -> String {
    json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1", "kind": "ECSInstance",
        "metadata": {"name": "every-field"},
        "spec": {"forProvider": for_provider},
    })
    .to_string()
}

/// What a row expects of the mock once its edit is applied.
type Check = Box<dyn Fn(&InstanceSummary, &[DiskSummary]) -> bool>;

fn system_disk<'a>(disks: &'a [DiskSummary], id: &str) -> Vec<&'a DiskSummary> {
    disks
        .iter()
        .filter(|d| d.instance_id.as_deref() == Some(id) && d.disk_type == "system")
        .collect()
}

async fn external_name(e2e: &E2e, what: &str) -> String {
    e2e.wait_jsonpath(
        what,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    e2e.jsonpath(
        what,
        "{.metadata.annotations.ferroplane\\.io/external-name}",
    )
    .await
}

const IN_PLACE: &str = "in place";
const RESTART: &str = "restart";

/// Fields in place or restart-bound that other end-to-end tests edit, and which test.
const EDITED_ELSEWHERE: &[(&str, &str)] = &[
    (
        "instanceType",
        "e2e_ecs::instance_type_change_waits_for_allow_restart",
    ),
    ("instanceName", "e2e_ecs::create_get_edit_stop_and_delete"),
    ("tags", "e2e_ecs::create_get_edit_stop_and_delete"),
    (
        "internetChargeType",
        "e2e_ecs_fields::in_place_edits_apply_and_immutable_edits_are_refused",
    ),
    (
        "httpTokens",
        "e2e_ecs_fields::in_place_edits_apply_and_immutable_edits_are_refused",
    ),
    (
        "httpPutResponseHopLimit",
        "e2e_ecs_fields::in_place_edits_apply_and_immutable_edits_are_refused",
    ),
    (
        "ramRoleName",
        "e2e_ecs_fields::in_place_edits_apply_and_immutable_edits_are_refused",
    ),
    (
        "resourceGroupId",
        "e2e_ecs_fields::in_place_edits_apply_and_immutable_edits_are_refused",
    ),
    (
        "deploymentSetId",
        "e2e_ecs_fields::in_place_edits_apply_and_immutable_edits_are_refused",
    ),
    (
        "keyPairName",
        "e2e_disks::a_disk_and_a_key_pair_through_their_whole_life",
    ),
];

/// The class of each field the rows edit, from the provider's field table; fails unless every
/// in-place and restart-bound field of the table is edited by a row here or listed in
/// [`EDITED_ELSEWHERE`], and every row edits a field of one of those two classes.
fn table_classes<'a>(edited: impl Iterator<Item = &'a str>) -> BTreeMap<&'a str, &'static str> {
    let table: BTreeMap<&str, &str> = provider_alibaba::ecs_instance_field_classes()
        .into_iter()
        .collect();
    let edited: BTreeSet<&str> = edited.collect();
    let mut classes = BTreeMap::new();
    for field in &edited {
        let class = table
            .get(field)
            .unwrap_or_else(|| panic!("row {field}: not a field of the table"));
        assert!(
            [IN_PLACE, RESTART].contains(class),
            "row {field}: its class is {class}, not in place or restart"
        );
        classes.insert(*field, *class);
    }
    let elsewhere: BTreeSet<&str> = EDITED_ELSEWHERE.iter().map(|(f, _)| *f).collect();
    let uncovered: Vec<&str> = table
        .iter()
        .filter(|(field, class)| {
            [IN_PLACE, RESTART].contains(class)
                && !edited.contains(*field)
                && !elsewhere.contains(*field)
        })
        .map(|(field, _)| *field)
        .collect();
    assert!(
        uncovered.is_empty(),
        "in-place or restart fields no end-to-end test edits: {uncovered:?}"
    );
    for field in &elsewhere {
        assert!(
            !edited.contains(field),
            "{field}: a row here and in EDITED_ELSEWHERE"
        );
        assert!(
            table.contains_key(field),
            "{field}: not a field of the table"
        );
    }
    classes
}

async fn wait_synced_generation(e2e: &E2e) {
    e2e.eventually("Synced=True for the new generation", WAIT, || async {
        let seen = e2e
            .jsonpath(
                "ecs/every-field",
                "{.metadata.generation}/{.status.observedGeneration}/{.status.conditions[?(@.type=='Synced')].status}",
            )
            .await;
        let parts: Vec<&str> = seen.split('/').collect();
        (parts.len() == 3 && parts[0] == parts[1] && parts[2] == "True").then_some(())
    })
    .await;
}

pub(crate) async fn every_field_class_is_applied_or_refused() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    for doc in network() {
        e2e.apply(&doc).await;
    }
    let vsw_a = external_name(&e2e, "vswitch/v6-a").await;
    let vsw_b = external_name(&e2e, "vswitch/v6-b").await;
    let fw_1 = external_name(&e2e, "securitygroup/v6-fw-1").await;
    let fw_2 = external_name(&e2e, "securitygroup/v6-fw-2").await;

    e2e.apply(&password_secret("logon-1", PASSWORDS[0])).await;
    e2e.apply(&password_secret("logon-2", PASSWORDS[1])).await;

    let mut spec = json!({
        "regionId": "cn-beijing", "zoneId": ZONE,
        "imageId": "aliyun_3_x64_20G_alibase_20240528.vhd",
        "instanceType": "ecs.t6-c1m1.large",
        "internetMaxBandwidthOut": 5,
        "vSwitchId": vsw_a, "securityGroupIds": [fw_1],
        "ipv6AddressCount": 1,
        "creditSpecification": "Standard",
        "systemDisk": {"category": "cloud_essd", "size": 40, "performanceLevel": "PL1"},
        "dataDisks": [{"category": "cloud_essd", "size": 20}],
        "passwordSecretRef": {"name": "logon-1", "key": "password"},
        "allowRestart": true,
    });
    e2e.apply(&instance(&spec)).await;
    let id = external_name(&e2e, "ecs/every-field").await;
    let launched = e2e.instance(&id).expect("in the mock");
    assert_eq!(
        launched.ipv6_addresses.len(),
        1,
        "Ipv6AddressCount at launch"
    );
    assert_eq!(
        launched.password_digest,
        Some(alibaba_mock::password_digest(PASSWORDS[0])),
        "the password at launch"
    );
    wait_synced_generation(&e2e).await;

    let user_data = "#!/bin/sh\necho edited\n";
    let encoded = base64::engine::general_purpose::STANDARD.encode(user_data);
    let other_image = "centos_7_9_x64_20G_alibase_20240628.vhd";
    let (vsw_b2, fw_2b) = (vsw_b.clone(), fw_2.clone());
    let id2 = id.clone();
    let rows: Vec<(&[&str], Value, Check)> = vec![
        (
            &["description"],
            json!({"description": "edited in place"}),
            Box::new(|i, _| i.description == "edited in place"),
        ),
        (
            &["securityGroupIds"],
            json!({"securityGroupIds": [fw_2]}),
            Box::new(move |i, _| i.security_group_ids == [fw_2b.clone()]),
        ),
        (
            &["internetMaxBandwidthOut"],
            json!({"internetMaxBandwidthOut": 10}),
            Box::new(|i, _| i.internet_max_bandwidth_out == 10),
        ),
        (
            &["httpEndpoint"],
            json!({"httpEndpoint": "disabled"}),
            Box::new(|i, _| i.http_endpoint == "disabled"),
        ),
        (
            &["creditSpecification"],
            json!({"creditSpecification": "Unlimited"}),
            Box::new(|i, _| i.credit_specification.as_deref() == Some("Unlimited")),
        ),
        (
            &["ipv6AddressCount"],
            json!({"ipv6AddressCount": 2}),
            Box::new(|i, _| i.ipv6_addresses.len() == 2),
        ),
        (
            &["systemDisk.size"],
            json!({"systemDisk": {"category": "cloud_essd", "size": 60, "performanceLevel": "PL1"}}),
            Box::new({
                let id = id2.clone();
                move |_, d| system_disk(d, &id).first().is_some_and(|d| d.size == 60)
            }),
        ),
        (
            &["systemDisk.performanceLevel"],
            json!({"systemDisk": {"category": "cloud_essd", "size": 60, "performanceLevel": "PL0"}}),
            Box::new({
                let id = id2.clone();
                move |_, d| {
                    system_disk(d, &id)
                        .first()
                        .is_some_and(|d| d.performance_level.as_deref() == Some("PL0"))
                }
            }),
        ),
        (
            &["deletionProtection"],
            json!({"deletionProtection": true}),
            Box::new(|i, _| i.deletion_protection),
        ),
        (
            &["deletionProtection"],
            json!({"deletionProtection": false}),
            Box::new(|i, _| !i.deletion_protection),
        ),
        (
            &["hostName"],
            json!({"hostName": "edited-host"}),
            Box::new(|i, _| i.host_name == "edited-host" && i.status == "Running"),
        ),
        (
            &["userData"],
            json!({"userData": user_data}),
            Box::new(move |i, _| {
                i.user_data.as_deref() == Some(encoded.as_str()) && i.status == "Running"
            }),
        ),
        (
            &["privateIpAddress"],
            json!({"privateIpAddress": "10.40.1.50"}),
            Box::new(|i, _| i.private_ip_address == "10.40.1.50" && i.status == "Running"),
        ),
        // ECS moves an instance to another vSwitch only without the old block's IPv6
        // addresses: the same apply releases them (in place, before the restart).
        (
            &["vSwitchId"],
            json!({"vSwitchId": vsw_b, "privateIpAddress": "10.40.2.50", "ipv6AddressCount": 0}),
            Box::new(move |i, _| {
                i.vswitch_id == vsw_b2
                    && i.private_ip_address == "10.40.2.50"
                    && i.ipv6_addresses.is_empty()
                    && i.status == "Running"
            }),
        ),
        (
            &["passwordSecretRef"],
            json!({"passwordSecretRef": {"name": "logon-2", "key": "password"}}),
            Box::new(|i, _| {
                i.password_digest == Some(alibaba_mock::password_digest(PASSWORDS[1]))
                    && !i.password_pending
                    && i.status == "Running"
            }),
        ),
        (
            &["imageId"],
            json!({"imageId": other_image}),
            Box::new({
                let id = id2.clone();
                move |i, d| {
                    let system = system_disk(d, &id);
                    i.image_id == other_image
                        && i.status == "Running"
                        && system.len() == 1
                        && system[0].size == 60
                }
            }),
        ),
        (
            &["instanceChargeType"],
            json!({"instanceChargeType": "PrePaid", "period": 1, "periodUnit": "Month"}),
            Box::new(|i, _| i.instance_charge_type == "PrePaid"),
        ),
        (
            &["autoRenew", "autoRenewPeriod"],
            json!({"autoRenew": true, "autoRenewPeriod": 2}),
            Box::new(|i, _| i.auto_renew == Some((true, 2))),
        ),
    ];
    let classes = table_classes(
        rows.iter()
            .flat_map(|(fields, _, _)| fields.iter().copied()),
    );
    let manifests = tempfile::tempdir().unwrap();
    let manifest = manifests.path().join("every-field.json");
    let mut predicted_rows = 0;
    for (fields, edit, check) in &rows {
        let field = fields.join(", ");
        let restart = fields.iter().any(|f| classes[f] == RESTART);
        let Value::Object(edit) = edit else {
            unreachable!("rows are objects")
        };
        for (k, v) in edit {
            spec[k] = v.clone();
        }
        std::fs::write(&manifest, instance(&spec)).unwrap();
        let (_, planned) = plan(&e2e, &manifest).await;
        let object = &planned["objects"][0];
        let calls_before = e2e.mock().stats().calls;
        let stops = e2e.mock().stats().calls_of("StopInstance");
        e2e.apply(&instance(&spec)).await;
        e2e.eventually(
            &format!("{field}: the mock's instance changed"),
            WAIT,
            || async {
                let i = e2e.instance(&id)?;
                check(&i, &e2e.mock().disks()).then_some(())
            },
        )
        .await;
        wait_synced_generation(&e2e).await;
        // The path its class says: in place never stops the instance; a restart-bound edit
        // (allowRestart is true) stops it exactly once.
        let stopped = e2e.mock().stats().calls_of("StopInstance") - stops;
        assert_eq!(
            stopped,
            u64::from(restart),
            "{field} ({}): StopInstance called {stopped} times",
            if restart { RESTART } else { IN_PLACE }
        );
        let made = made_since(&calls_before, &e2e.mock().stats().calls);
        if fields.iter().any(|f| WRITE_ONLY_INPUTS.contains(f)) {
            assert_eq!(object["changes"], json!([]), "{field}: {object:#}");
        } else {
            assert_eq!(made, predicted(object), "{field}: planned {object:#}");
            predicted_rows += 1;
        }
    }
    assert_eq!(predicted_rows, rows.len() - WRITE_ONLY_INPUTS.len());
    let system = system_disk(&e2e.mock().disks(), &id).len();
    assert_eq!(system, 1, "the replaced system disk is released");

    // The referenced Secret changes: the spec does not, the password does (through a restart).
    e2e.apply(&password_secret("logon-2", PASSWORDS[2])).await;
    e2e.eventually(
        "the Secret's new password is the instance's",
        WAIT,
        || async {
            let i = e2e.instance(&id)?;
            (i.password_digest == Some(alibaba_mock::password_digest(PASSWORDS[2]))
                && !i.password_pending
                && i.status == "Running")
                .then_some(())
        },
    )
    .await;
    wait_synced_generation(&e2e).await;

    // Each immutable field: kubectl apply refuses the edited file with the message.
    let refusals: Vec<(&str, Value, &str)> = vec![
        (
            "regionId",
            json!({"regionId": "cn-hangzhou"}),
            "regionId is immutable",
        ),
        (
            "zoneId",
            json!({"zoneId": "cn-beijing-b"}),
            "zoneId is immutable",
        ),
        (
            "dataDisks",
            json!({"dataDisks": [{"category": "cloud_essd", "size": 30}]}),
            "dataDisks are immutable",
        ),
        ("period", json!({"period": 2}), "period is immutable"),
        (
            "periodUnit",
            json!({"periodUnit": "Week"}),
            "periodUnit is immutable",
        ),
    ];
    for (field, edit, message) in &refusals {
        let mut edited = spec.clone();
        let Value::Object(edit) = edit else {
            unreachable!("rows are objects")
        };
        for (k, v) in edit {
            edited[k] = v.clone();
        }
        let out = e2e
            .kubectl(&["apply", "-f", "-"], Some(&instance(&edited)))
            .await;
        assert!(!out.success(), "{field}: kubectl apply should fail");
        assert!(
            out.stderr.contains(message),
            "{field}: expected {message:?} in:\n{}",
            out.stderr
        );
    }
    let vpc_edit = network()[0].replace("\"enableIpv6\":true", "\"enableIpv6\":false");
    let out = e2e.kubectl(&["apply", "-f", "-"], Some(&vpc_edit)).await;
    assert!(
        !out.success()
            && out
                .stderr
                .contains("enableIpv6 is set when the VPC is created"),
        "{}",
        out.stderr
    );
    let vsw_edit = network()[2].replace("\"ipv6CidrBlock\":2", "\"ipv6CidrBlock\":3");
    let out = e2e.kubectl(&["apply", "-f", "-"], Some(&vsw_edit)).await;
    assert!(
        !out.success()
            && out
                .stderr
                .contains("ipv6CidrBlock is set when the VSwitch is created"),
        "{}",
        out.stderr
    );
    network_attributes_change_in_place(&e2e).await;

    // Back to pay-as-you-go (ModifyInstanceChargeType), so the instance can be released.
    for key in ["period", "periodUnit", "autoRenew", "autoRenewPeriod"] {
        spec.as_object_mut().expect("an object").remove(key);
    }
    spec["instanceChargeType"] = json!("PostPaid");
    e2e.apply(&instance(&spec)).await;
    e2e.eventually("instanceChargeType: back to PostPaid", WAIT, || async {
        (e2e.instance(&id)?.instance_charge_type == "PostPaid").then_some(())
    })
    .await;
    wait_synced_generation(&e2e).await;
    println!(
        "{} field edits applied in place or through a restart, {} immutable edits refused",
        rows.len(),
        refusals.len() + 2
    );
    // Nothing it read or wrote shows a password.
    let described = e2e.k(&["get", "ecs", "every-field", "-o", "yaml"]).await;
    for password in PASSWORDS {
        assert!(!described.contains(password), "a password in the object");
    }
    e2e.k(&["delete", "ecs", "every-field", "--wait=true"])
        .await;
    assert!(e2e.instance(&id).is_none());
    e2e.finish().await;
}

/// The VPC's, a vSwitch's and a security group's name, description and tags are edited with
/// kubectl apply and change in the cloud (ModifyVpcAttribute, ModifyVSwitchAttribute,
/// ModifySecurityGroupAttribute and the tag actions), each Synced for its new generation.
async fn network_attributes_change_in_place(e2e: &E2e) {
    let (ecs, vpc_api) = e2e.cloud();
    let vpc_id = external_name(e2e, "vpc/v6").await;
    let vsw_id = external_name(e2e, "vswitch/v6-a").await;
    let sg_id = external_name(e2e, "securitygroup/v6-fw-1").await;
    let docs = network();
    let edits = [
        (
            0,
            "vpc/v6",
            json!({"vpcName": "v6-renamed", "description": "edited VPC"}),
        ),
        (
            1,
            "vswitch/v6-a",
            json!({"vSwitchName": "v6-a-renamed", "description": "edited vSwitch"}),
        ),
        (
            3,
            "securitygroup/v6-fw-1",
            json!({"securityGroupName": "v6-fw-1-renamed", "description": "edited group"}),
        ),
    ];
    for (index, _, fields) in &edits {
        let mut doc: Value = serde_json::from_str(&docs[*index]).expect("a network document");
        let Value::Object(fields) = fields else {
            unreachable!("edits are objects")
        };
        for (k, v) in fields {
            doc["spec"]["forProvider"][k] = v.clone();
        }
        doc["spec"]["forProvider"]["tags"] = json!({"tier": "edited"});
        e2e.apply(&doc.to_string()).await;
    }
    e2e.eventually("the VPC is renamed, described and tagged", WAIT, || async {
        let v = vpc_api
            .describe_vpcs(std::slice::from_ref(&vpc_id), &[])
            .await
            .ok()?;
        let v = v.first()?;
        (v.vpc_name == "v6-renamed"
            && v.description == "edited VPC"
            && v.tag("tier") == Some("edited"))
        .then_some(())
    })
    .await;
    e2e.eventually(
        "the vSwitch is renamed, described and tagged",
        WAIT,
        || async {
            let v = vpc_api
                .describe_vswitches(Some(&vsw_id), None, &[])
                .await
                .ok()?;
            let v = v.first()?;
            (v.vswitch_name == "v6-a-renamed"
                && v.description == "edited vSwitch"
                && v.tag("tier") == Some("edited"))
            .then_some(())
        },
    )
    .await;
    e2e.eventually(
        "the security group is renamed, described and tagged",
        WAIT,
        || async {
            let g = ecs
                .describe_security_groups(std::slice::from_ref(&sg_id), &[])
                .await
                .ok()?;
            let g = g.first()?;
            (g.security_group_name == "v6-fw-1-renamed"
                && g.description == "edited group"
                && g.tag("tier") == Some("edited"))
            .then_some(())
        },
    )
    .await;
    for (_, what, _) in &edits {
        e2e.eventually(&format!("{what}: Synced=True for the new generation"), WAIT, || async {
            let seen = e2e
                .jsonpath(
                    what,
                    "{.metadata.generation}/{.status.observedGeneration}/{.status.conditions[?(@.type=='Synced')].status}",
                )
                .await;
            let parts: Vec<&str> = seen.split('/').collect();
            (parts.len() == 3 && parts[0] == parts[1] && parts[2] == "True").then_some(())
        })
        .await;
    }
}
