//! Object Storage Service (OSS): the V1 header signature ([`signature`]), a client of the
//! object calls ferroplane needs (PutObject, GetObject, HeadObject, ListObjects, DeleteObject,
//! plus PutBucket for tests, and signed GetObject URLs) ([`OssClient`]), and the XML of OSS answers ([`xml`]).
//!
//! OSS is not an RPC API: requests are REST verbs on `/<object>` of a bucket host
//! (`<bucket>.oss-<region>.aliyuncs.com`) or, for a custom endpoint such as the mock, on
//! `/<bucket>/<object>` of one host; the signature covers the bucket either way.

mod client;
pub mod signature;
pub mod xml;

pub use client::{
    Addressing, META_PREFIX, ObjectBody, ObjectHead, ObjectSummary, ObjectsPage, OssClient,
    OssError,
};
