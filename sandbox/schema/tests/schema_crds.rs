//! The project's own CRDs (deploy/crds, generated from apis/) through the schema crate: every
//! schema compiles, every sample in deploy/samples is admitted, and broken variants are
//! rejected with the messages kube-apiserver would give.

use ferroplane_sandbox_schema::{CompiledSchema, FieldError};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(sub)
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    files
}

/// Every document of a (possibly multi-document) YAML file.
fn load_all(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.split("\n---\n")
        .filter(|doc| {
            doc.lines()
                .any(|l| !l.trim().is_empty() && !l.starts_with('#'))
        })
        .map(|doc| {
            serde_saphyr::from_str(doc)
                .unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
        })
        .collect()
}

fn load(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// `(apiVersion, kind)` → compiled schema, for every served version of every CRD.
fn schemas() -> BTreeMap<(String, String), CompiledSchema> {
    let mut out = BTreeMap::new();
    let files = yaml_files(&repo_dir("deploy/crds"));
    assert!(!files.is_empty(), "deploy/crds holds no CRDs");
    for file in files {
        let crd = load(&file);
        let group = crd["spec"]["group"]
            .as_str()
            .expect("spec.group")
            .to_owned();
        let kind = crd["spec"]["names"]["kind"]
            .as_str()
            .expect("spec.names.kind")
            .to_owned();
        for version in crd["spec"]["versions"].as_array().expect("spec.versions") {
            let name = version["name"].as_str().expect("version name");
            let schema = &version["schema"]["openAPIV3Schema"];
            let compiled = CompiledSchema::compile(schema)
                .unwrap_or_else(|e| panic!("{} {name}: {e}", file.display()));
            out.insert((format!("{group}/{name}"), kind.clone()), compiled);
        }
    }
    out
}

fn sample(name: &str) -> Value {
    load(&repo_dir("deploy/samples").join(name))
}

fn schema_for<'a>(
    schemas: &'a BTreeMap<(String, String), CompiledSchema>,
    object: &Value,
) -> &'a CompiledSchema {
    let key = (
        object["apiVersion"].as_str().unwrap_or_default().to_owned(),
        object["kind"].as_str().unwrap_or_default().to_owned(),
    );
    schemas
        .get(&key)
        .unwrap_or_else(|| panic!("no CRD for {key:?}"))
}

fn admit(schema: &CompiledSchema, object: &Value, old: Option<&Value>) -> Vec<String> {
    let mut object = object.clone();
    let mut old = old.cloned();
    if let Some(o) = old.as_mut() {
        schema.prune(o);
        schema.apply_defaults(o);
    }
    schema
        .admit(&mut object, old.as_ref())
        .iter()
        .map(FieldError::to_string)
        .collect()
}

/// RFC 7386 merge patch, to derive broken variants from the samples.
fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

fn patched(base: &Value, patch: Value) -> Value {
    let mut v = base.clone();
    merge(&mut v, &patch);
    v
}

#[test]
fn every_sample_is_admitted_and_defaulted() {
    let schemas = schemas();
    let files = yaml_files(&repo_dir("deploy/samples"));
    assert!(!files.is_empty(), "deploy/samples holds no samples");
    for file in files {
        for object in load_all(&file) {
            let schema = schema_for(&schemas, &object);
            let errors = admit(schema, &object, None);
            assert!(errors.is_empty(), "{}: {errors:?}", file.display());
            // Re-applying the same object is an update that changes nothing: transition rules
            // pass.
            let errors = admit(schema, &object, Some(&object));
            assert!(errors.is_empty(), "{} (update): {errors:?}", file.display());
        }
    }
}

#[test]
fn defaults_and_pruning_on_a_sample() {
    let schemas = schemas();
    let mut ecs = sample("ecsinstance.yaml");
    ecs["spec"]["forProvider"]["bogusField"] = json!(1);
    let schema = schema_for(&schemas, &ecs);
    assert!(schema.admit(&mut ecs, None).is_empty());
    assert_eq!(ecs["spec"]["deletionPolicy"], "Delete");
    assert!(ecs["spec"]["forProvider"].get("bogusField").is_none());
    assert_eq!(ecs["metadata"]["name"], "ins-0702");
}

#[test]
fn broken_variants_are_rejected() {
    let schemas = schemas();
    let ecs = sample("ecsinstance.yaml");
    let etcd = sample("etcdcluster.yaml");
    let pc = sample("providerconfig.yaml");
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "unknown deletion policy",
            patched(&ecs, json!({"spec": {"deletionPolicy": "Keep"}})),
            "spec.deletionPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Orphan\"",
        ),
        (
            "missing region",
            patched(&ecs, json!({"spec": {"forProvider": {"regionId": null}}})),
            "spec.forProvider.regionId: Required value",
        ),
        (
            "instance name that is a URL",
            patched(
                &ecs,
                json!({"spec": {"forProvider": {"instanceName": "http://web"}}}),
            ),
            "spec.forProvider.instanceName: Invalid value: \"string\": instanceName must not start with http:// or https://",
        ),
        (
            "reserved tag key",
            patched(
                &ecs,
                json!({"spec": {"forProvider": {"tags": {"aliyun-x": "y"}}}}),
            ),
            "spec.forProvider.tags: Invalid value: \"object\": each tag key must be 1 to 128 characters, must not start with 'aliyun' or 'acs:' (in any case), must not contain 'http://' or 'https://', and must not be 'ferroplane.io/uid' (ferroplane sets it)",
        ),
        (
            "tag value too long",
            patched(
                &ecs,
                json!({"spec": {"forProvider": {"tags": {"team": "x".repeat(129)}}}}),
            ),
            "spec.forProvider.tags.team: Too long: may not be more than 128 bytes",
        ),
        (
            "malformed security group",
            patched(
                &ecs,
                json!({"spec": {"forProvider": {"securityGroupIds": ["default"]}}}),
            ),
            "spec.forProvider.securityGroupIds[0]: Invalid value: \"default\": spec.forProvider.securityGroupIds[0] in body should match '^sg-[a-z0-9]+$'",
        ),
        (
            "bandwidth as a string",
            patched(
                &ecs,
                json!({"spec": {"forProvider": {"internetMaxBandwidthOut": "5"}}}),
            ),
            "spec.forProvider.internetMaxBandwidthOut: Invalid value: \"string\": spec.forProvider.internetMaxBandwidthOut in body must be of type integer: \"string\"",
        ),
        (
            "etcd too large",
            patched(&etcd, json!({"spec": {"size": 12}})),
            "spec.size: Invalid value: 12: spec.size in body should be less than or equal to 9",
        ),
        (
            "etcd empty",
            patched(&etcd, json!({"spec": {"size": 0}})),
            "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
        ),
        (
            "secret source without secretRef",
            patched(&pc, json!({"spec": {"credentials": {"secretRef": null}}})),
            "source Secret needs secretRef",
        ),
    ];
    for (what, object, want) in cases {
        let schema = schema_for(&schemas, &object);
        let errors = admit(schema, &object, None);
        assert!(
            errors.iter().any(|e| e == want || e.ends_with(want)),
            "{what}: expected {want:?} among {errors:?}"
        );
    }
}

#[test]
fn immutable_fields_are_rejected_on_update() {
    let schemas = schemas();
    let ecs = sample("ecsinstance.yaml");
    let on_demand = patched(
        &ecs,
        json!({"spec": {"forProvider": {"spotStrategy": "NoSpot"}}}),
    );
    let etcd = sample("etcdcluster.yaml");
    let cases: Vec<(&str, &Value, Value, &str)> = vec![
        (
            "region change",
            &ecs,
            json!({"spec": {"forProvider": {"regionId": "cn-hangzhou"}}}),
            "spec.forProvider.regionId: Invalid value: \"string\": regionId is immutable; create a new ECSInstance in the other region",
        ),
        (
            "spot strategy change",
            &on_demand,
            json!({"spec": {"forProvider": {"spotStrategy": "SpotAsPriceGo"}}}),
            "spec.forProvider.spotStrategy: Invalid value: \"string\": spotStrategy is immutable: ECS fixes it at creation; create a new ECSInstance with the other strategy",
        ),
        (
            "etcd storage size change",
            &etcd,
            json!({"spec": {"storage": {"size": "2Gi"}}}),
            "storage.size is immutable",
        ),
    ];
    for (what, old, patch, want) in cases {
        let new = patched(old, patch);
        let schema = schema_for(&schemas, &new);
        let errors = admit(schema, &new, Some(old));
        assert!(
            errors.iter().any(|e| e == want || e.ends_with(want)),
            "{what}: expected {want:?} among {errors:?}"
        );
        // The same change is fine on create: transition rules need an old object.
        assert!(
            admit(schema, &new, None).is_empty(),
            "{what}: must be accepted on create"
        );
    }
    // Changing a mutable field is fine.
    let renamed = patched(
        &ecs,
        json!({"spec": {"forProvider": {"instanceName": "web-2"}}}),
    );
    assert!(admit(schema_for(&schemas, &renamed), &renamed, Some(&ecs)).is_empty());
}

#[test]
fn cluster_provider_config_needs_secret_namespace() {
    let schemas = schemas();
    let cpc = sample("clusterproviderconfig.yaml");
    let broken = patched(
        &cpc,
        json!({"spec": {"credentials": {"secretRef": {"namespace": null}}}}),
    );
    let errors = admit(schema_for(&schemas, &broken), &broken, None);
    assert_eq!(
        errors,
        vec![
            "spec: Invalid value: \"object\": a ClusterProviderConfig must name the Secret's namespace in credentials.secretRef.namespace"
        ]
    );
    let pc = sample("providerconfig.yaml");
    let broken = patched(&pc, json!({"spec": {"credentials": {"secretRef": null}}}));
    assert_eq!(
        admit(schema_for(&schemas, &broken), &broken, None),
        vec!["spec.credentials: Invalid value: \"object\": source Secret needs secretRef"]
    );
}

#[test]
fn subscription_stopped_mode_and_user_data_rules() {
    let schemas = schemas();
    let ecs = sample("ecsinstance.yaml");
    let schema = schema_for(&schemas, &ecs);
    let errors_of = |patch: Value| admit(schema, &patched(&ecs, patch), None);

    let prepaid = |extra: Value| {
        let mut fp = json!({"instanceChargeType": "PrePaid"});
        merge(&mut fp, &extra);
        json!({"spec": {"forProvider": fp}})
    };
    for ok in [
        json!({"period": 1}),
        json!({"period": 60, "autoRenew": true, "autoRenewPeriod": 12}),
        json!({"period": 4, "periodUnit": "Week", "autoRenew": true, "autoRenewPeriod": 3}),
    ] {
        assert_eq!(errors_of(prepaid(ok.clone())), Vec::<String>::new(), "{ok}");
    }
    let cases: Vec<(Value, &str)> = vec![
        (
            prepaid(json!({"period": 10})),
            "period must be 1-4 when periodUnit is Week",
        ),
        (
            prepaid(json!({"period": 5, "periodUnit": "Week"})),
            "period must be 1-4 when periodUnit is Week",
        ),
        (
            prepaid(
                json!({"period": 1, "periodUnit": "Week", "autoRenew": true, "autoRenewPeriod": 4}),
            ),
            "autoRenewPeriod must be 1-3 when periodUnit is Week",
        ),
        (
            prepaid(json!({"period": 1, "autoRenewPeriod": 1})),
            "autoRenewPeriod needs autoRenew: true",
        ),
        (
            json!({"spec": {"forProvider": {"period": 1}}}),
            "period, periodUnit, autoRenew and autoRenewPeriod apply only to instanceChargeType: PrePaid",
        ),
        (
            prepaid(json!({"period": 1, "stoppedMode": "StopCharging"})),
            "stoppedMode StopCharging (economical mode) applies only to pay-as-you-go (PostPaid) instances",
        ),
        (
            json!({"spec": {"forProvider": {"stoppedMode": "Paused"}}}),
            "spec.forProvider.stoppedMode: Unsupported value: \"Paused\": supported values: \"KeepCharging\", \"StopCharging\"",
        ),
        (
            json!({"spec": {"forProvider": {"desiredStatus": "Paused"}}}),
            "spec.forProvider.desiredStatus: Unsupported value: \"Paused\": supported values: \"Running\", \"Stopped\"",
        ),
        (
            // 11,000 three-byte characters: under the length limit, over 32 KiB of UTF-8.
            json!({"spec": {"forProvider": {"userData": "€".repeat(11_000)}}}),
            "userData must be at most 32 KiB (32768 bytes of UTF-8) before Base64 encoding",
        ),
    ];
    for (patch, want) in cases {
        let errors = errors_of(patch.clone());
        assert!(
            errors.iter().any(|e| e.contains(want)),
            "{patch}: expected {want:?} among {errors:?}"
        );
        assert!(
            errors.iter().all(|e| !e.contains("null")),
            "{patch}: {errors:?}"
        );
    }
    assert_eq!(
        errors_of(
            json!({"spec": {"forProvider": {"stoppedMode": "StopCharging", "userData": "#!/bin/sh\n"}}})
        ),
        Vec::<String>::new()
    );
}

#[test]
fn network_kinds_refuse_what_their_apis_cannot_change() {
    let schemas = schemas();
    let docs = load_all(&repo_dir("deploy/samples").join("network.yaml"));
    let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(kinds, ["VPC", "VSwitch", "SecurityGroup", "ECSInstance"]);
    let (vpc, vswitch, group) = (&docs[0], &docs[1], &docs[2]);
    let cases: Vec<(&Value, Value, &str)> = vec![
        (
            vpc,
            json!({"spec": {"forProvider": {"cidrBlock": "10.30.0.0/16"}}}),
            "cidrBlock is immutable",
        ),
        (
            vswitch,
            json!({"spec": {"forProvider": {"zoneId": "cn-beijing-a"}}}),
            "zoneId is immutable",
        ),
        (
            vswitch,
            json!({"spec": {"forProvider": {"cidrBlock": "10.20.2.0/24"}}}),
            "cidrBlock is immutable",
        ),
    ];
    for (base, patch, want) in cases {
        let schema = schema_for(&schemas, base);
        let errors = admit(schema, &patched(base, patch.clone()), Some(base));
        assert!(
            errors.iter().any(|e| e.contains(want)),
            "{patch}: expected {want:?} among {errors:?}"
        );
    }
    // vpcId, once resolved, stays.
    let resolved = patched(
        vswitch,
        json!({"spec": {"forProvider": {"vpcId": "vpc-abc"}}}),
    );
    let schema = schema_for(&schemas, vswitch);
    assert!(admit(schema, &resolved, Some(vswitch)).is_empty());
    let moved = patched(
        &resolved,
        json!({"spec": {"forProvider": {"vpcId": "vpc-def"}}}),
    );
    assert!(
        admit(schema, &moved, Some(&resolved))
            .iter()
            .any(|e| e.contains("vpcId is immutable"))
    );
    // The VPC must be named one way or another.
    let nameless = patched(
        vswitch,
        json!({"spec": {"forProvider": {"vpcIdRef": null}}}),
    );
    assert!(
        admit(schema, &nameless, None)
            .iter()
            .any(|e| e.contains("set the VPC: vpcId, vpcIdRef or vpcIdSelector"))
    );
    // A rule's port range follows its protocol.
    let schema = schema_for(&schemas, group);
    let bad = patched(
        group,
        json!({"spec": {"forProvider": {"ingress": [
            {"ipProtocol": "icmp", "portRange": "22/22", "sourceCidrIp": "0.0.0.0/0"}
        ]}}}),
    );
    assert!(
        admit(schema, &bad, None)
            .iter()
            .any(|e| e.contains("-1/-1 for icmp, gre and all"))
    );
}

#[test]
fn an_eip_association_names_a_network_interface_one_way() {
    let schemas = schemas();
    let docs = load_all(&repo_dir("deploy/samples").join("eip-eni.yaml"));
    let association = docs
        .iter()
        .find(|d| d["kind"] == "EIPAssociation")
        .expect("eip-eni.yaml has an EIPAssociation");
    let schema = schema_for(&schemas, association);
    let refused = |patch: Value, old: Option<&Value>, want: &str| {
        let errors = admit(schema, &patched(association, patch.clone()), old);
        assert!(
            errors.iter().any(|e| e.contains(want)),
            "{patch}: expected {want:?} among {errors:?}"
        );
    };
    refused(
        json!({"spec": {"forProvider": {"instanceType": "EcsInstance"}}}),
        None,
        "networkInterfaceIdRef and networkInterfaceIdSelector need instanceType NetworkInterface",
    );
    refused(
        json!({"spec": {"forProvider": {"networkInterfaceIdRef": null, "instanceIdRef": {"name": "web"}}}}),
        None,
        "instanceType NetworkInterface takes instanceId (eni-...), networkInterfaceIdRef or networkInterfaceIdSelector",
    );
    refused(
        json!({"spec": {"forProvider": {"networkInterfaceIdRef": null, "instanceId": "i-abc"}}}),
        None,
        "a network interface ID (eni-...) goes with instanceType NetworkInterface",
    );
    refused(
        json!({"spec": {"forProvider": {
            "networkInterfaceIdRef": null, "instanceType": null, "instanceId": "eni-abc",
        }}}),
        None,
        "a network interface ID (eni-...) goes with instanceType NetworkInterface",
    );
    refused(
        json!({"spec": {"forProvider": {
            "networkInterfaceIdRef": null, "instanceType": "Nat", "instanceId": "ngw-abc",
            "privateIpAddress": "10.0.0.5",
        }}}),
        None,
        "privateIpAddress needs instanceType NetworkInterface",
    );
    // Once written (by the user or from the cloud), the private IP stays.
    let resolved = patched(
        association,
        json!({"spec": {"forProvider": {"instanceId": "eni-abc", "privateIpAddress": "10.0.0.5"}}}),
    );
    assert!(admit(schema, &resolved, Some(association)).is_empty());
    refused(
        json!({"spec": {"forProvider": {"instanceId": "eni-abc", "privateIpAddress": "10.0.0.6"}}}),
        Some(&resolved),
        "privateIpAddress is immutable",
    );
    refused(
        json!({"spec": {"forProvider": {"instanceId": "eni-abc"}}}),
        Some(&resolved),
        "privateIpAddress cannot be removed once set",
    );
}
