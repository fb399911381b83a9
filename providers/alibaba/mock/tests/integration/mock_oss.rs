//! The mock's OSS through alibaba-sdk's OSS client: a bucket, objects written, read, listed page
//! by page and deleted, and the answers OSS gives to a missing bucket or key, a wrong secret, an
//! unknown key and an unsigned request.

use std::time::Duration;

use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::oss::{Addressing, ObjectBody, OssClient};
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

#[tokio::test]
async fn a_streamed_body_of_known_length_is_stored_and_a_short_one_is_not() {
    let mock = start(Duration::ZERO).await;
    let oss = client(&mock, AK, SECRET);
    oss.put_bucket("b").await.expect("bucket created");
    let bytes: Vec<u8> = (0..(5u32 << 20)).map(|i| (i % 251) as u8).collect();
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        bytes.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
    let body = ObjectBody::stream(
        reqwest::Body::wrap_stream(futures::stream::iter(chunks)),
        bytes.len() as u64,
    );
    oss.put_object_with_meta("b", "big.db", body, &[("etcd-sha256", "00")])
        .await
        .expect("5 MiB streamed");
    assert_eq!(
        oss.head_object("b", "big.db").await.expect("head").size,
        5 << 20
    );
    assert_eq!(oss.get_object("b", "big.db").await.expect("get"), bytes);

    let short: Vec<Result<Vec<u8>, std::io::Error>> = vec![Ok(vec![1u8; 10])];
    let promised_more = ObjectBody::stream(
        reqwest::Body::wrap_stream(futures::stream::iter(short)),
        100,
    );
    oss.put_object_with_meta("b", "short.db", promised_more, &[])
        .await
        .expect_err("a body shorter than its length never becomes an object");
    let missing = oss
        .head_object("b", "short.db")
        .await
        .expect_err("not stored");
    assert_eq!(missing.code(), Some("NoSuchKey"), "{missing}");
    mock.shutdown().await;
}

#[tokio::test]
async fn user_metadata_comes_back_from_head_object() {
    let mock = start(Duration::ZERO).await;
    let oss = client(&mock, AK, SECRET);
    oss.put_bucket("b").await.expect("bucket created");
    oss.put_object_with_meta(
        "b",
        "snap.db",
        b"abcd".to_vec(),
        &[("etcd-sha256", "00ff"), ("Etcd-Revision", "42")],
    )
    .await
    .expect("put with metadata");
    let head = oss.head_object("b", "snap.db").await.expect("head");
    assert_eq!(head.size, 4);
    assert_eq!(
        head.meta.get("etcd-sha256").map(String::as_str),
        Some("00ff")
    );
    assert_eq!(
        head.meta.get("etcd-revision").map(String::as_str),
        Some("42"),
        "names are lowercased"
    );
    let missing = oss
        .head_object("b", "other")
        .await
        .expect_err("no such key");
    assert_eq!(missing.code(), Some("NoSuchKey"), "{missing}");
    mock.shutdown().await;
}

#[tokio::test]
async fn a_signed_url_reads_until_it_expires_and_only_with_its_signature() {
    let mock = start(Duration::ZERO).await;
    let oss = client(&mock, AK, SECRET);
    oss.put_bucket("b").await.expect("bucket created");
    oss.put_object("b", "dir/snap 1.db", b"snapshot".to_vec())
        .await
        .expect("put");
    let http = reqwest::Client::new();
    let later = jiff::Timestamp::now() + jiff::SignedDuration::from_mins(5);
    let url = oss.presign_get("b", "dir/snap 1.db", later).expect("url");
    assert!(
        !url.as_str().contains(SECRET),
        "the URL carries a signature, never the secret"
    );
    let read = http.get(url.clone()).send().await.expect("answered");
    assert_eq!(read.status(), 200);
    assert_eq!(read.bytes().await.expect("body").as_ref(), b"snapshot");

    let expired = oss
        .presign_get(
            "b",
            "dir/snap 1.db",
            jiff::Timestamp::now() - jiff::SignedDuration::from_secs(1),
        )
        .expect("url");
    let refused = http.get(expired).send().await.expect("answered");
    assert_eq!(refused.status(), 403);
    let body = refused.text().await.expect("body");
    assert!(
        body.contains("<Code>AccessDenied</Code>") && body.contains("expired"),
        "{body}"
    );

    let other_key = url.as_str().replace("snap%201.db", "other.db");
    let refused = http.get(other_key).send().await.expect("answered");
    assert_eq!(refused.status(), 403);
    assert!(
        refused
            .text()
            .await
            .expect("body")
            .contains("<Code>SignatureDoesNotMatch</Code>")
    );

    let both = http
        .get(url)
        .header("Authorization", format!("OSS {AK}:c2lnbmF0dXJl"))
        .send()
        .await
        .expect("answered");
    assert_eq!(both.status(), 400, "a signature in the URL and the header");
    mock.shutdown().await;
}
