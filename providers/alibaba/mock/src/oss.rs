//! A minimal OSS: buckets of objects in memory and the calls ferroplane makes (PutBucket,
//! PutObject with user metadata, GetObject, HeadObject, DeleteObject, ListObjects V1), each a pure function of the
//! store, answering OSS's error codes and HTTP statuses (looked up in OSS's reference):
//! `NoSuchBucket` 404, `NoSuchKey` 404, `BucketAlreadyExists` 409, `InvalidArgument` 400 for a
//! `max-keys` outside 1..=1000. Authentication is [`crate::oss_http`]'s.

use std::collections::BTreeMap;

use alibaba_sdk::oss::xml::escape;
use axum::body::Bytes;
use jiff::Timestamp;

/// One stored object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Shared, so that a GetObject of a large object copies nothing.
    pub bytes: Bytes,
    /// MD5 of the bytes, uppercase hex (OSS's ETag of a simple upload).
    pub etag: String,
    pub last_modified: Timestamp,
    /// User metadata: the `x-oss-meta-*` headers of the PutObject, names lowercased.
    pub meta: BTreeMap<String, String>,
}

/// Every bucket, by name.
#[derive(Default, Debug)]
pub struct OssStore {
    buckets: BTreeMap<String, BTreeMap<String, Object>>,
}

/// An OSS error answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OssFailure {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl OssFailure {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    /// The XML body OSS answers with.
    pub fn body(&self, request_id: &str, host: &str) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>\n  <Code>{}</Code>\n  <Message>{}</Message>\n  <RequestId>{request_id}</RequestId>\n  <HostId>{}</HostId>\n</Error>\n",
            self.code,
            escape(&self.message),
            escape(host)
        )
    }
}

fn no_such_bucket() -> OssFailure {
    OssFailure::new(404, "NoSuchBucket", "The specified bucket does not exist.")
}

/// One page of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    pub objects: Vec<(String, u64, String, Timestamp)>,
    pub next_marker: Option<String>,
}

impl OssStore {
    pub fn put_bucket(&mut self, bucket: &str) -> Result<(), OssFailure> {
        if self.buckets.contains_key(bucket) {
            return Err(OssFailure::new(
                409,
                "BucketAlreadyExists",
                "The requested bucket name is not available.",
            ));
        }
        self.buckets.insert(bucket.to_owned(), BTreeMap::new());
        Ok(())
    }

    /// Stores `bytes` as `key`; returns the ETag.
    pub fn put_object(
        &mut self,
        bucket: &str,
        key: &str,
        bytes: impl Into<Bytes>,
        meta: BTreeMap<String, String>,
        now: Timestamp,
    ) -> Result<String, OssFailure> {
        let bytes = bytes.into();
        let objects = self.buckets.get_mut(bucket).ok_or_else(no_such_bucket)?;
        let etag = hex_upper(&crate::md5::digest(&bytes));
        objects.insert(
            key.to_owned(),
            Object {
                bytes,
                etag: etag.clone(),
                last_modified: now,
                meta,
            },
        );
        Ok(etag)
    }

    pub fn get_object(&self, bucket: &str, key: &str) -> Result<&Object, OssFailure> {
        self.buckets
            .get(bucket)
            .ok_or_else(no_such_bucket)?
            .get(key)
            .ok_or_else(|| OssFailure::new(404, "NoSuchKey", "The specified key does not exist."))
    }

    /// Removes `key`; a missing key is no error (OSS answers 204 either way).
    pub fn delete_object(&mut self, bucket: &str, key: &str) -> Result<(), OssFailure> {
        self.buckets
            .get_mut(bucket)
            .ok_or_else(no_such_bucket)?
            .remove(key);
        Ok(())
    }

    /// Objects under `prefix` after `marker`, in key order, at most `max_keys`.
    pub fn list_objects(
        &self,
        bucket: &str,
        prefix: &str,
        marker: &str,
        max_keys: usize,
    ) -> Result<Listing, OssFailure> {
        if !(1..=1000).contains(&max_keys) {
            return Err(OssFailure::new(
                400,
                "InvalidArgument",
                "Argument max-keys must be an integer between 1 and 1000.",
            ));
        }
        let objects = self.buckets.get(bucket).ok_or_else(no_such_bucket)?;
        let mut matching = objects
            .iter()
            .filter(|(k, _)| k.starts_with(prefix) && k.as_str() > marker);
        let page: Vec<(String, u64, String, Timestamp)> = matching
            .by_ref()
            .take(max_keys)
            .map(|(k, o)| {
                (
                    k.clone(),
                    o.bytes.len() as u64,
                    o.etag.clone(),
                    o.last_modified,
                )
            })
            .collect();
        let truncated = matching.next().is_some();
        Ok(Listing {
            next_marker: truncated
                .then(|| page.last().map(|(k, ..)| k.clone()))
                .flatten(),
            objects: page,
        })
    }
}

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// The ListBucketResult XML of a page.
pub fn listing_xml(
    bucket: &str,
    prefix: &str,
    marker: &str,
    max_keys: usize,
    listing: &Listing,
) -> String {
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult>\n  <Name>{}</Name>\n  <Prefix>{}</Prefix>\n  <Marker>{}</Marker>\n  <MaxKeys>{max_keys}</MaxKeys>\n  <Delimiter></Delimiter>\n  <IsTruncated>{}</IsTruncated>\n",
        escape(bucket),
        escape(prefix),
        escape(marker),
        listing.next_marker.is_some()
    );
    if let Some(next) = &listing.next_marker {
        xml.push_str(&format!("  <NextMarker>{}</NextMarker>\n", escape(next)));
    }
    for (key, size, etag, modified) in &listing.objects {
        xml.push_str(&format!(
            "  <Contents>\n    <Key>{}</Key>\n    <LastModified>{}</LastModified>\n    <ETag>\"{etag}\"</ETag>\n    <Type>Normal</Type>\n    <Size>{size}</Size>\n    <StorageClass>Standard</StorageClass>\n  </Contents>\n",
            escape(key),
            modified.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        ));
    }
    xml.push_str("</ListBucketResult>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-26T09:00:00Z".parse().expect("ts")
    }

    #[test]
    fn objects_live_in_existing_buckets_only() {
        let mut store = OssStore::default();
        let err = store
            .put_object("b", "k", vec![1], BTreeMap::new(), now())
            .expect_err("no bucket");
        assert_eq!((err.status, err.code), (404, "NoSuchBucket"));
        store.put_bucket("b").expect("created");
        assert_eq!(
            store.put_bucket("b").expect_err("twice").code,
            "BucketAlreadyExists"
        );
        let etag = store
            .put_object("b", "k", b"abc".to_vec(), BTreeMap::new(), now())
            .expect("put");
        assert_eq!(etag, "900150983CD24FB0D6963F7D28E17F72");
        assert_eq!(store.get_object("b", "k").expect("get").bytes, b"abc"[..]);
        assert_eq!(
            store.get_object("b", "x").expect_err("missing").code,
            "NoSuchKey"
        );
        store.delete_object("b", "k").expect("deleted");
        store
            .delete_object("b", "k")
            .expect("deleting a missing key is fine");
    }

    #[test]
    fn listings_filter_by_prefix_and_page_by_marker() {
        let mut store = OssStore::default();
        store.put_bucket("b").expect("created");
        for key in ["a/1", "a/2", "a/3", "b/1"] {
            store
                .put_object("b", key, vec![0; 2], BTreeMap::new(), now())
                .expect("put");
        }
        let first = store.list_objects("b", "a/", "", 2).expect("list");
        let keys: Vec<&str> = first.objects.iter().map(|(k, ..)| k.as_str()).collect();
        assert_eq!(keys, ["a/1", "a/2"]);
        assert_eq!(first.next_marker.as_deref(), Some("a/2"));
        let rest = store.list_objects("b", "a/", "a/2", 2).expect("list");
        assert_eq!(rest.objects.len(), 1);
        assert_eq!(rest.next_marker, None);
        assert_eq!(
            store
                .list_objects("b", "", "", 1001)
                .expect_err("too many")
                .code,
            "InvalidArgument"
        );
        let xml = listing_xml("b", "a/", "", 2, &first);
        assert!(
            xml.contains("<IsTruncated>true</IsTruncated>")
                && xml.contains("<NextMarker>a/2</NextMarker>")
        );
    }
}
