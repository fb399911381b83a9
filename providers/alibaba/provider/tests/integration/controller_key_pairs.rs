//! The KeyPair kind against the mock: an imported key used by an ECSInstance through
//! `keyPairNameRef`, kept while the instance uses it and deleted after; a generated key whose
//! private key goes into the connection Secret only, and stays there across later polls.

use ferroplane_apis::alibabacloud::{KeyPair, KeyPairParameters, KeyPairSpec};
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::EXTERNAL_NAME;
use ferroplane_apis::common::{DeletionPolicy, LocalSecretReference, default_management_policies};
use ferroplane_apis::references::Reference;
use ferroplane_runtime::EXISTS_UNMANAGED;
use ferroplane_testkit::conditions::{condition, has_condition, is_ready};
use ferroplane_testkit::eventually;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};

use alibaba_mock::DEFAULT_ACCOUNT_ID;

use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::EcsClient;

use crate::controller_support::{AK, Env, NS, REGION, SK, WAIT, external_name, instance};

/// An OpenSSH public key made with ssh-keygen (private half discarded) and its MD5 fingerprint.
const PUBLIC_KEY: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCssLvIevGFoGOuVcTzca6vQAfctErHt+jxk4nFH4uJdjJInbAuR9q27Vq62pZN9pBEyjT/x8zDZSTTmSm9QdFPOUjzAANRPN0p0x0cw2wVgtujX9fAWFxqh5jyv+EIORKGvPfftnUlv55Flzl5C0M2nawKpscHg30pmYgaSR5i73Z8CMllaLJBCySAqxmVnHpxlKYuQIDIZ9j8+myd3y37HEMcKvG4v59MOh8XtvLQ4At4MtKfTh6vA02iH5UpM0OuD1T4gesLhfT3/e4QCZ8agSUAhFMAEmPuAbC1bZjZNRzL0yDEg2wM8Kl0cB+ab6I8sG6wN9MdQ48b0tNOMB8n test";
const FINGERPRINT: &str = "92:19:96:01:1e:1c:fd:e7:db:39:da:20:85:57:ca:31";

fn key_pair(name: &str, public_key: Option<&str>, secret: Option<&str>) -> KeyPair {
    let mut obj = KeyPair::new(
        name,
        KeyPairSpec {
            deletion_policy: DeletionPolicy::Delete,
            management_policies: default_management_policies(),
            provider_config_ref: Default::default(),
            write_connection_secret_to_ref: secret.map(|s| LocalSecretReference { name: s.into() }),
            for_provider: KeyPairParameters {
                region_id: REGION.into(),
                public_key: public_key.map(str::to_owned),
                ..KeyPairParameters::default()
            },
        },
    );
    obj.metadata.namespace = Some(NS.into());
    obj
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_key_pair_is_used_by_reference_and_deleted_after_its_instance() {
    let env = Env::start().await;
    let pairs: Api<KeyPair> = Api::namespaced(env.client.clone(), NS);
    // The instance first: it waits for its reference.
    let mut vm = instance("vm-k");
    vm.spec.for_provider.key_pair_name_ref = Some(Reference {
        name: "laptop".into(),
    });
    env.create(&vm).await;
    pairs
        .create(
            &PostParams::default(),
            &key_pair("laptop", Some(PUBLIC_KEY), None),
        )
        .await
        .expect("KeyPair created");
    let kp = eventually("KeyPair laptop: Ready")
        .within(WAIT)
        .for_object(&pairs, "laptop", |o| o.is_some_and(is_ready))
        .await
        .expect("exists");
    assert_eq!(external_name(&kp).as_deref(), Some("laptop"));
    let observed = kp
        .status
        .as_ref()
        .map(|s| s.observed())
        .expect("atProvider");
    assert_eq!(observed.finger_print.as_deref(), Some(FINGERPRINT));
    let vm = env.wait_ready("vm-k").await;
    assert_eq!(
        vm.spec.for_provider.key_pair_name.as_deref(),
        Some("laptop")
    );
    let id = external_name(&vm).expect("instance ID");
    assert_eq!(env.mock().instance_key_pair(&id).as_deref(), Some("laptop"));

    // ECS refuses to delete a key pair in use: the KeyPair waits for its instance.
    pairs
        .delete("laptop", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("a WaitingToDelete event for the KeyPair")
        .within(WAIT)
        .until_async(|| async {
            let reasons = ferroplane_testkit::events::reasons(&env.client, NS, "laptop").await;
            if reasons.iter().any(|r| r == "WaitingToDelete") {
                Ok(())
            } else {
                Err(Box::new(reasons))
            }
        })
        .await;
    assert_eq!(
        env.mock().key_pair_names(DEFAULT_ACCOUNT_ID, REGION),
        ["laptop"]
    );
    env.delete("vm-k").await;
    eventually("KeyPair laptop: gone")
        .within(WAIT)
        .for_object(&pairs, "laptop", |o| o.is_none())
        .await;
    assert!(
        env.mock()
            .key_pair_names(DEFAULT_ACCOUNT_ID, REGION)
            .is_empty()
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_private_key_goes_to_the_connection_secret_only() {
    let env = Env::start().await;
    let pairs: Api<KeyPair> = Api::namespaced(env.client.clone(), NS);
    pairs
        .create(
            &PostParams::default(),
            &key_pair("gen", None, Some("gen-key")),
        )
        .await
        .expect("KeyPair created");
    let kp = eventually("KeyPair gen: Ready")
        .within(WAIT)
        .for_object(&pairs, "gen", |o| o.is_some_and(is_ready))
        .await
        .expect("exists");
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), NS);
    let private_key = |s: &Secret| {
        s.data
            .as_ref()
            .and_then(|d| d.get("privateKey"))
            .map(|v| String::from_utf8_lossy(&v.0).into_owned())
    };
    let secret = eventually("Secret gen-key with the private key")
        .within(WAIT)
        .for_object(&secrets, "gen-key", |s| {
            s.and_then(private_key)
                .is_some_and(|k| k.starts_with("-----BEGIN PRIVATE KEY-----"))
        })
        .await
        .expect("exists");
    let key = private_key(&secret).expect("private key");
    // Nowhere else: not in the status, not in the events.
    let status = serde_json::to_string(&kp.status).expect("status");
    assert!(!status.contains("PRIVATE KEY"), "{status}");
    let events = ferroplane_testkit::events::about(&env.client, NS, "gen").await;
    assert!(
        events.iter().all(|(_, note)| !note.contains("PRIVATE KEY")),
        "{events:?}"
    );
    // Later polls (which cannot see the private key) keep it in the Secret.
    let seen = env.mock().stats().calls_of("DescribeKeyPairs");
    eventually("two more polls of the key pair")
        .within(WAIT)
        .until(|| {
            let now = env.mock().stats().calls_of("DescribeKeyPairs");
            if now >= seen + 2 {
                Ok(())
            } else {
                Err(Box::new(now))
            }
        })
        .await;
    let again = secrets.get("gen-key").await.expect("Secret");
    assert_eq!(private_key(&again).as_deref(), Some(key.as_str()));
    env.stop().await;
}

/// The `ferroplane.io/uid` tag of the key pair `name` in the mock, if any.
async fn owner_tag(ecs: &EcsClient, name: &str) -> Option<String> {
    let found = ecs
        .describe_key_pair(name)
        .await
        .expect("describe")
        .expect("exists");
    found
        .tags
        .items
        .iter()
        .find(|t| t.key == ferroplane_runtime::UID_TAG)
        .map(|t| t.value.clone())
}

/// Issue 32, defect 4: a KeyPair whose name matched an unmanaged key pair became Ready (even with
/// another public key), and deleting the object deleted the pair.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_named_key_pair_is_never_taken_over_unless_imported() {
    let env = Env::start().await;
    let ecs = EcsClient::builder(REGION)
        .credentials(Credentials::new(AK, SK))
        .endpoint(env.mock().endpoint())
        .build()
        .expect("ECS client");
    ecs.import_key_pair("shared", PUBLIC_KEY, &[])
        .await
        .expect("imported outside ferroplane");
    let pairs: Api<KeyPair> = Api::namespaced(env.client.clone(), NS);

    // A name match is not a request to take it over: refused, untouched, and not deleted with
    // the object.
    pairs
        .create(
            &PostParams::default(),
            &key_pair("shared", None, Some("s-key")),
        )
        .await
        .expect("KeyPair created");
    let refused = eventually("KeyPair shared: Synced=False/ExternalResourceExists")
        .within(WAIT)
        .for_object(&pairs, "shared", |o| {
            o.is_some_and(|o| has_condition(o, "Synced", ConditionStatus::False, EXISTS_UNMANAGED))
        })
        .await
        .expect("exists");
    assert!(!is_ready(&refused));
    assert_eq!(external_name(&refused), None);
    let message = &condition(&refused, "Synced").expect("Synced").message;
    assert!(
        message.contains("ferroplane.io/external-name: shared"),
        "{message}"
    );
    assert_eq!(owner_tag(&ecs, "shared").await, None);
    // Only the test's own import: ferroplane made no key pair.
    assert_eq!(env.mock().stats().calls_of("ImportKeyPair"), 1);
    assert_eq!(env.mock().stats().calls_of("CreateKeyPair"), 0);
    pairs
        .delete("shared", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("KeyPair shared: gone")
        .within(WAIT)
        .for_object(&pairs, "shared", |o| o.is_none())
        .await;
    assert_eq!(
        env.mock().key_pair_names(DEFAULT_ACCOUNT_ID, REGION),
        ["shared"]
    );
    assert_eq!(owner_tag(&ecs, "shared").await, None);

    // Imported on purpose (the external name set), it is managed; matching its spec, it is not
    // written (the UID tag is taken right before a first change: the framework's
    // `an_import_that_matches_its_spec_is_not_written_until_the_spec_asks_for_a_change`).
    let mut import = key_pair("shared", Some(PUBLIC_KEY), None);
    import.metadata.annotations = Some([(EXTERNAL_NAME.to_owned(), "shared".to_owned())].into());
    pairs
        .create(&PostParams::default(), &import)
        .await
        .expect("KeyPair created");
    eventually("KeyPair shared: Ready")
        .within(WAIT)
        .for_object(&pairs, "shared", |o| o.is_some_and(is_ready))
        .await;
    assert_eq!(
        owner_tag(&ecs, "shared").await,
        None,
        "a matching import is not written"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_refuses_a_generated_key_without_a_secret_and_a_changed_public_key() {
    let env = Env::start().await;
    let pairs: Api<KeyPair> = Api::namespaced(env.client.clone(), NS);
    let refused = pairs
        .create(&PostParams::default(), &key_pair("lost", None, None))
        .await
        .expect_err("a generated key without a connection Secret is refused");
    assert!(
        refused
            .to_string()
            .contains("set writeConnectionSecretToRef"),
        "{refused}"
    );
    pairs
        .create(
            &PostParams::default(),
            &key_pair("fixed", Some(PUBLIC_KEY), None),
        )
        .await
        .expect("KeyPair created");
    eventually("KeyPair fixed: Ready")
        .within(WAIT)
        .for_object(&pairs, "fixed", |o| o.is_some_and(is_ready))
        .await;
    let changed = pairs
        .patch(
            "fixed",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({
                "spec": {"forProvider": {"publicKey": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQC other"}}
            })),
        )
        .await
        .expect_err("publicKey is immutable");
    assert!(
        changed.to_string().contains("publicKey is immutable"),
        "{changed}"
    );
    env.stop().await;
}

/// Issue 32, defect 3: a generated key pair whose connection Secret's name was taken lost its
/// private key for good (created anyway; after the conflict was cleared it went Ready with a
/// Secret without `privateKey`). Now no key pair is created until the Secret can be written,
/// and the private key then lands in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_key_waits_for_its_secret_name_and_keeps_its_private_key() {
    let env = Env::start().await;
    env.put_secret("taken-key", &[("someone", "else's")]).await;
    let pairs: Api<KeyPair> = Api::namespaced(env.client.clone(), NS);
    pairs
        .create(
            &PostParams::default(),
            &key_pair("later", None, Some("taken-key")),
        )
        .await
        .expect("KeyPair created");
    let refused = eventually("KeyPair later: Synced=False/ConnectionSecretNotControlled")
        .within(WAIT)
        .for_object(&pairs, "later", |o| {
            o.is_some_and(|o| {
                has_condition(
                    o,
                    "Synced",
                    ConditionStatus::False,
                    "ConnectionSecretNotControlled",
                )
            })
        })
        .await
        .expect("exists");
    assert!(!is_ready(&refused));
    assert_eq!(env.mock().stats().calls_of("ImportKeyPair"), 0);
    assert!(
        env.mock()
            .key_pair_names(DEFAULT_ACCOUNT_ID, REGION)
            .is_empty()
    );

    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), NS);
    secrets
        .delete("taken-key", &DeleteParams::default())
        .await
        .expect("conflict cleared");
    eventually("KeyPair later: Ready")
        .within(WAIT)
        .for_object(&pairs, "later", |o| o.is_some_and(is_ready))
        .await;
    let secret = secrets
        .get("taken-key")
        .await
        .expect("the connection Secret");
    let private_key = secret
        .data
        .as_ref()
        .and_then(|d| d.get("privateKey"))
        .map(|v| String::from_utf8_lossy(&v.0).into_owned())
        .unwrap_or_default();
    assert!(
        private_key.starts_with("-----BEGIN PRIVATE KEY-----"),
        "the private key is stored"
    );
    assert_eq!(env.mock().stats().calls_of("ImportKeyPair"), 1);
    env.stop().await;
}
