//! SSH key pairs over HTTP: ImportKeyPair's format check and fingerprint, CreateKeyPair's
//! one-time private key, DescribeKeyPairs, AttachKeyPair / DetachKeyPair results per instance,
//! DeleteKeyPairs refused while an instance uses the pair, and RunInstances' KeyPairName check.

use std::time::Duration;

use ferroplane_testkit::mock_requests::*;

async fn ecs(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

/// A well-formed OpenSSH public key line, made by the mock's CreateKeyPair in another region.
async fn public_key_line(s: &Signer) -> String {
    s.ecs(
        "CreateKeyPair",
        &[("RegionId", "cn-beijing"), ("KeyPairName", "source")],
    )
    .await
    .ok();
    let r = s
        .ecs(
            "DescribeKeyPairs",
            &[
                ("RegionId", "cn-beijing"),
                ("KeyPairName", "source"),
                ("IncludePublicKey", "true"),
            ],
        )
        .await
        .ok();
    format!(
        "{} me@laptop",
        r["KeyPairs"]["KeyPair"][0]["PublicKey"].as_str().unwrap()
    )
}

#[tokio::test]
async fn import_describe_and_delete() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let line = public_key_line(&s).await;
    let r = ecs(
        &s,
        "ImportKeyPair",
        &[("KeyPairName", "web"), ("PublicKeyBody", &line)],
    )
    .await
    .ok();
    let fingerprint = r["KeyPairFingerPrint"].as_str().unwrap().to_owned();
    assert_eq!(fingerprint.split(':').count(), 16, "{fingerprint}");
    ecs(
        &s,
        "ImportKeyPair",
        &[("KeyPairName", "web"), ("PublicKeyBody", &line)],
    )
    .await
    .expect_error(400, "KeyPair.AlreadyExist");
    ecs(
        &s,
        "ImportKeyPair",
        &[
            ("KeyPairName", "bad"),
            ("PublicKeyBody", "ssh-rsa not-base64!"),
        ],
    )
    .await
    .expect_error(400, "InvalidPublicKeyBody.Malformed");
    ecs(
        &s,
        "ImportKeyPair",
        &[
            ("KeyPairName", "bad"),
            ("PublicKeyBody", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA=="),
        ],
    )
    .await
    .expect_error(400, "InvalidPublicKeyBody.Malformed");
    ecs(
        &s,
        "ImportKeyPair",
        &[("KeyPairName", "1bad"), ("PublicKeyBody", &line)],
    )
    .await
    .expect_error(400, "InvalidKeyPairName.Malformed");
    ecs(&s, "ImportKeyPair", &[("KeyPairName", "nokey")])
        .await
        .expect_error(400, "MissingParameter");
    let listed = ecs(&s, "DescribeKeyPairs", &[("KeyPairName", "w*")])
        .await
        .ok();
    assert_eq!(listed["TotalCount"], 1);
    assert_eq!(
        listed["KeyPairs"]["KeyPair"][0]["KeyPairFingerPrint"],
        fingerprint.as_str()
    );
    assert!(listed["KeyPairs"]["KeyPair"][0].get("PublicKey").is_none());
    // Tags through TagResources / UntagResources, the key pair's name as resource ID.
    ecs(
        &s,
        "TagResources",
        &[
            ("ResourceType", "keypair"),
            ("ResourceId.1", "web"),
            ("Tag.1.Key", "owner"),
            ("Tag.1.Value", "me"),
        ],
    )
    .await
    .ok();
    let tagged = ecs(
        &s,
        "DescribeKeyPairs",
        &[("Tag.1.Key", "owner"), ("Tag.1.Value", "me")],
    )
    .await
    .ok();
    assert_eq!(tagged["TotalCount"], 1);
    ecs(
        &s,
        "TagResources",
        &[
            ("ResourceType", "keypair"),
            ("ResourceId.1", "nope"),
            ("Tag.1.Key", "owner"),
        ],
    )
    .await
    .expect_error(404, "InvalidResourceId.NotFound");
    ecs(
        &s,
        "UntagResources",
        &[
            ("ResourceType", "keypair"),
            ("ResourceId.1", "web"),
            ("TagKey.1", "owner"),
        ],
    )
    .await
    .ok();
    let untagged = ecs(&s, "DescribeKeyPairs", &[("Tag.1.Key", "owner")])
        .await
        .ok();
    assert_eq!(untagged["TotalCount"], 0);
    ecs(&s, "DeleteKeyPairs", &[("KeyPairNames", "web")])
        .await
        .expect_error(400, "InvalidKeyPairNames.ValueNotSupported");
    ecs(
        &s,
        "DeleteKeyPairs",
        &[("KeyPairNames", "[\"web\",\"unknown\"]")],
    )
    .await
    .ok();
    assert_eq!(ecs(&s, "DescribeKeyPairs", &[]).await.ok()["TotalCount"], 0);
}

#[tokio::test]
async fn create_key_pair_returns_the_private_key_once() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let r = ecs(&s, "CreateKeyPair", &[("KeyPairName", "gen")])
        .await
        .ok();
    let private = r["PrivateKeyBody"].as_str().unwrap();
    assert!(
        private.starts_with("-----BEGIN PRIVATE KEY-----"),
        "{private}"
    );
    let listed = ecs(
        &s,
        "DescribeKeyPairs",
        &[("KeyPairName", "gen"), ("IncludePublicKey", "true")],
    )
    .await
    .ok();
    let text = listed.to_string();
    assert!(!text.contains("PRIVATE KEY"));
    assert!(
        listed["KeyPairs"]["KeyPair"][0]["PublicKey"]
            .as_str()
            .unwrap()
            .starts_with("ssh-rsa AAAA")
    );
    ecs(&s, "CreateKeyPair", &[("KeyPairName", "gen")])
        .await
        .expect_error(400, "KeyPair.AlreadyExist");
}

#[tokio::test]
async fn key_pairs_on_instances() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    s.post(
        "RunInstances",
        ECS,
        &[
            ("RegionId", REGION),
            ("ImageId", IMAGE),
            ("InstanceType", TYPE),
            ("VSwitchId", VSWITCH),
            ("SecurityGroupId", SECURITY_GROUP),
            ("KeyPairName", "missing"),
        ],
    )
    .await
    .expect_error(404, "InvalidKeyPairName.NotFound");
    ecs(&s, "CreateKeyPair", &[("KeyPairName", "one")])
        .await
        .ok();
    ecs(&s, "CreateKeyPair", &[("KeyPairName", "two")])
        .await
        .ok();
    let ids = s.run(&[("KeyPairName", "one")]).await;
    assert_eq!(mock.instance_key_pair(&ids[0]).as_deref(), Some("one"));
    ecs(&s, "DeleteKeyPairs", &[("KeyPairNames", "[\"one\"]")])
        .await
        .expect_error(400, "InvalidParameter.KeypairAlreadyAttachedInstance");
    let instances = format!("[\"{}\",\"i-unknown\"]", ids[0]);
    let r = ecs(
        &s,
        "AttachKeyPair",
        &[("KeyPairName", "two"), ("InstanceIds", &instances)],
    )
    .await
    .ok();
    assert_eq!(
        (r["TotalCount"].as_str(), r["FailCount"].as_str()),
        (Some("2"), Some("1"))
    );
    let results = r["Results"]["Result"].as_array().unwrap();
    assert_eq!(
        (results[0]["Code"].as_str(), results[0]["Success"].as_str()),
        (Some("200"), Some("true"))
    );
    assert_eq!(results[1]["Code"], "InvalidInstanceId.NotFound");
    assert_eq!(mock.instance_key_pair(&ids[0]).as_deref(), Some("two"));
    let described = s
        .describe(&[("InstanceIds", &format!("[\"{}\"]", ids[0]))])
        .await;
    assert_eq!(described["Instances"]["Instance"][0]["KeyPairName"], "two");
    ecs(
        &s,
        "AttachKeyPair",
        &[("KeyPairName", "nope"), ("InstanceIds", &instances)],
    )
    .await
    .expect_error(400, "InvalidKeyPairName.NotFound");
    ecs(
        &s,
        "AttachKeyPair",
        &[("KeyPairName", "two"), ("InstanceIds", "i-1")],
    )
    .await
    .expect_error(400, "InvalidInstanceIds.ValueNotSupported");
    let one = format!("[\"{}\"]", ids[0]);
    ecs(
        &s,
        "DetachKeyPair",
        &[("KeyPairName", "two"), ("InstanceIds", &one)],
    )
    .await
    .ok();
    assert_eq!(mock.instance_key_pair(&ids[0]).as_deref(), Some(""));
    ecs(
        &s,
        "DeleteKeyPairs",
        &[("KeyPairNames", "[\"one\",\"two\"]")],
    )
    .await
    .ok();
    // Windows instances take no key pair.
    ecs(&s, "CreateKeyPair", &[("KeyPairName", "three")])
        .await
        .ok();
    s.post(
        "RunInstances",
        ECS,
        &[
            ("RegionId", REGION),
            (
                "ImageId",
                "win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd",
            ),
            ("InstanceType", TYPE),
            ("VSwitchId", VSWITCH),
            ("SecurityGroupId", SECURITY_GROUP),
            ("KeyPairName", "three"),
        ],
    )
    .await
    .expect_error(403, "DependencyViolation.WindowsInstance");
}
