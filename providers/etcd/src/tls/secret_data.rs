//! What the TLS Secrets hold, in one place for every module that reads or writes them: the
//! data keys of a `kubernetes.io/tls` Secret and the annotations ferroplane records on the
//! generated ones. A ground floor of `tls`.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;

/// Annotation of a generated Secret: when its certificate (of the CA Secret: the signing CA)
/// expires (RFC 3339).
pub const NOT_AFTER_ANNOTATION: &str = "etcd.ferroplane.io/not-after";
/// Annotation of a generated leaf Secret: the host names its certificate is valid for.
pub const HOSTS_ANNOTATION: &str = "etcd.ferroplane.io/hosts";
/// Annotation of a generated leaf Secret: the fingerprint of the CA that issued it.
pub const ISSUER_ANNOTATION: &str = "etcd.ferroplane.io/issuer";
/// Annotation of the client Secret: the subject its certificate was issued with.
pub const SUBJECT_ANNOTATION: &str = "etcd.ferroplane.io/subject";
pub(crate) const CERT: &str = "tls.crt";
pub(crate) const KEY: &str = "tls.key";
pub(crate) const CA: &str = "ca.crt";

/// The UTF-8 text under `key` of `secret`.
pub(crate) fn text(secret: &Secret, key: &str) -> Option<String> {
    secret
        .data
        .as_ref()?
        .get(key)
        .and_then(|b| String::from_utf8(b.0.clone()).ok())
}

/// When the certificate of a generated Secret expires (its annotation).
pub(crate) fn not_after(secret: &Secret) -> Option<Timestamp> {
    secret
        .annotations()
        .get(NOT_AFTER_ANNOTATION)
        .and_then(|t| t.parse().ok())
}
