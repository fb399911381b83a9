//! The mock's OSS through alibaba-sdk's OSS client: a bucket, objects written, read, listed page
//! by page and deleted, and the answers OSS gives to a missing bucket or key, a wrong secret, an
//! unknown key and an unsigned request.

use std::time::Duration;

use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::oss::{Addressing, OssClient};
use ferroplane_testkit::mock_requests::*;

fn client(mock: &alibaba_mock::MockServer, id: &str, secret: &str) -> OssClient {
    OssClient::new(
        reqwest::Client::new(),
        url::Url::parse(&mock.endpoint()).expect("endpoint URL"),
        Addressing::Path,
        Credentials::new(id, secret),
    )
}

#[tokio::test]
async fn objects_round_trip_and_list_in_pages() {
    let mock = start(Duration::ZERO).await;
    let oss = client(&mock, AK, SECRET);
    let missing = oss
        .put_object("backups", "a", vec![1])
        .await
        .expect_err("no bucket yet");
    assert_eq!(missing.code(), Some("NoSuchBucket"), "{missing}");
    oss.put_bucket("backups").await.expect("bucket created");
    assert_eq!(
        oss.put_bucket("backups").await.expect_err("exists").code(),
        Some("BucketAlreadyExists")
    );
    let etag = oss
        .put_object("backups", "etcd/demo/snap 1.db", b"abc".to_vec())
        .await
        .expect("put");
    assert_eq!(
        etag, "900150983CD24FB0D6963F7D28E17F72",
        "the MD5 of the bytes"
    );
    assert_eq!(
        oss.get_object("backups", "etcd/demo/snap 1.db")
            .await
            .expect("get"),
        b"abc"
    );
    for i in 0..1002 {
        oss.put_object("backups", &format!("many/{i:05}"), vec![0; 3])
            .await
            .expect("put");
    }
    let first = oss
        .list_objects("backups", "many/", None)
        .await
        .expect("list");
    assert_eq!(first.objects.len(), 1000);
    assert_eq!(first.objects[0].key, "many/00000");
    assert_eq!(first.objects[0].size, 3);
    let marker = first.next_marker.expect("truncated");
    let rest = oss
        .list_objects("backups", "many/", Some(&marker))
        .await
        .expect("list");
    assert_eq!(rest.objects.len(), 2);
    assert_eq!(rest.next_marker, None);

    oss.delete_object("backups", "etcd/demo/snap 1.db")
        .await
        .expect("deleted");
    oss.delete_object("backups", "etcd/demo/snap 1.db")
        .await
        .expect("deleting a missing object answers 204 too");
    let gone = oss
        .get_object("backups", "etcd/demo/snap 1.db")
        .await
        .expect_err("gone");
    assert_eq!(gone.code(), Some("NoSuchKey"));
    mock.shutdown().await;
}

#[tokio::test]
async fn wrong_keys_and_unsigned_requests_are_refused_as_oss_does() {
    let mock = start(Duration::ZERO).await;
    client(&mock, AK, SECRET)
        .put_bucket("b")
        .await
        .expect("bucket created");
    let wrong_secret = client(&mock, AK, "not-the-secret")
        .get_object("b", "k")
        .await
        .expect_err("refused");
    assert_eq!(
        wrong_secret.code(),
        Some("SignatureDoesNotMatch"),
        "{wrong_secret}"
    );
    assert!(
        !wrong_secret.to_string().contains("not-the-secret"),
        "no secret in errors"
    );
    let unknown = client(&mock, "nobody", SECRET)
        .get_object("b", "k")
        .await
        .expect_err("refused");
    assert_eq!(unknown.code(), Some("InvalidAccessKeyId"));
    let unsigned = reqwest::Client::new()
        .get(format!("{}/b/k", mock.endpoint()))
        .send()
        .await
        .expect("answered");
    assert_eq!(unsigned.status(), 403);
    let body = unsigned.text().await.expect("body");
    assert!(body.contains("<Code>AccessDenied</Code>"), "{body}");
    let stale = reqwest::Client::new()
        .get(format!("{}/b/k", mock.endpoint()))
        .header("Date", "Sun, 22 Nov 2015 08:16:38 GMT")
        .header("Authorization", format!("OSS {AK}:c2lnbmF0dXJl"))
        .send()
        .await
        .expect("answered");
    assert_eq!(stale.status(), 403);
    assert!(
        stale
            .text()
            .await
            .expect("body")
            .contains("RequestTimeTooSkewed")
    );
    mock.shutdown().await;
}
