//! Tests of `restore`.

use super::*;

#[tokio::test]
async fn objects_of_another_owner_are_refused() {
    // A client that is never called: `refuse_foreign` only reads metadata.
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("url"));
    let kube = Client::try_from(config).expect("client");
    let names = ClusterNames::new("db", "team");
    let restorer = Restorer {
        kube: &kube,
        names: &names,
        sources: None,
        tools_image: "tools",
        recovery: None,
    };
    let owned = kube::api::ObjectMeta {
        owner_references: Some(vec![
            k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                uid: "u1".into(),
                ..Default::default()
            },
        ]),
        ..Default::default()
    };
    restorer
        .refuse_foreign("Secret", "db-restore-source", &owned, "u1")
        .expect("ours");
    let refused = restorer
        .refuse_foreign("Secret", "db-restore-source", &owned, "u2")
        .expect_err("another cluster's");
    assert_eq!(refused.reason(), CHILD_NOT_OURS);
    let unowned = kube::api::ObjectMeta::default();
    assert!(
        restorer
            .refuse_foreign("Job", "db-restore-0", &unowned, "u1")
            .is_err(),
        "a hand-made Job is never taken for the restore's"
    );
}

#[test]
fn a_restore_holds_the_members_until_every_volume_is_restored() {
    let status = |done| EtcdRestoreStatus {
        done,
        ..EtcdRestoreStatus::default()
    };
    assert!(
        Progress::Wait {
            why: String::new(),
            status: status(false)
        }
        .holds_members()
    );
    assert!(
        !Progress::Act {
            what: String::new(),
            status: status(true)
        }
        .holds_members()
    );
    assert!(!Progress::Done(None).holds_members());
}
