//! EtcdBackup's snapshot store in Alibaba Cloud OSS: [`OssStores`] implements provider-etcd's
//! `SnapshotStores` with provider-alibaba's ProviderConfig resolution (the binary links both;
//! the providers do not know each other) and alibaba-sdk's OSS client.
//!
//! Tenancy as for ECSInstance: `destination.oss.providerConfigRef` names a ProviderConfig of
//! the backup's namespace (its own Secrets only, never the controller's identity) or a
//! ClusterProviderConfig that admits the namespace. The OSS endpoint is chosen by the tenant,
//! so it must be on the controller's endpoint allow-list (Alibaba Cloud's `https://*.aliyuncs.com`
//! plus `--allow-endpoint`) whatever the configuration: otherwise a tenant could send an
//! administrator's signed requests to a host of their own.

use std::time::Duration;

use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::oss::{Addressing, ObjectBody, OssClient, OssError};
use ferroplane_runtime::ReconcileError;
use jiff::Timestamp;
use provider_alibaba::{ClientOverrides, ConfigResolver, EndpointAllowList};
use provider_etcd::backup::{
    SnapshotMeta, SnapshotStore, SnapshotStores, Spooled, StoreError, StoreLocation, Stored,
};

/// Metadata names of a snapshot object (`x-oss-meta-<name>`).
const META_SHA256: &str = "etcd-sha256";
const META_REVISION: &str = "etcd-revision";
const META_TAKEN_AT: &str = "etcd-taken-at";
const META_GENERATION: &str = "etcdbackup-generation";

/// Bytes read from the spooled snapshot at a time while it uploads.
const UPLOAD_BLOCK: usize = 256 * 1024;

/// Makes the OSS store of each backup.
#[derive(Clone)]
pub struct OssStores {
    resolver: ConfigResolver,
    endpoints: EndpointAllowList,
    http: reqwest::Client,
}

impl OssStores {
    /// Stores whose configurations are read through `kube`, and whose endpoints must be on
    /// `endpoints`.
    pub fn new(kube: kube::Client, endpoints: EndpointAllowList) -> Result<Self, reqwest::Error> {
        Ok(Self {
            resolver: ConfigResolver::new(kube).allow_endpoints(endpoints.clone()),
            endpoints,
            http: reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .timeout(Duration::from_secs(3600))
                .build()?,
        })
    }
}

/// The endpoint and addressing of a location: the given endpoint (allow-listed), else the
/// region's public one; a `*.aliyuncs.com` host takes the bucket as a subdomain, any other is
/// addressed path-style.
fn endpoint_of(
    location: &StoreLocation,
    allowed: &EndpointAllowList,
) -> Result<(url::Url, Addressing), ReconcileError> {
    let field = location.field;
    let text = match (&location.endpoint, &location.region) {
        (Some(endpoint), _) => endpoint.clone(),
        (None, Some(region)) => format!("https://oss-{region}.aliyuncs.com"),
        (None, None) => {
            return Err(ReconcileError::terminal(
                "InvalidDestination",
                format!("{field} needs region or endpoint"),
            ));
        }
    };
    let url = allowed.check(&text).map_err(|refusal| {
        ReconcileError::terminal(
            "EndpointNotAllowed",
            format!(
                "{field}.endpoint {text} is not allowed: {refusal}. Remove it to use the region's OSS endpoint, or ask the administrator to allow it (--allow-endpoint)"
            ),
        )
    })?;
    let aliyun = url
        .host_str()
        .is_some_and(|h| h == "aliyuncs.com" || h.ends_with(".aliyuncs.com"));
    Ok((
        url,
        if aliyun {
            Addressing::VirtualHosted
        } else {
            Addressing::Path
        },
    ))
}

impl SnapshotStores for OssStores {
    type Store = OssStore;

    async fn for_location(&self, location: &StoreLocation) -> Result<OssStore, ReconcileError> {
        let (endpoint, addressing) = endpoint_of(location, &self.endpoints)?;
        let config = self
            .resolver
            .resolve(&location.provider_config_ref, &location.namespace)
            .await
            .map_err(|e| e.into_reconcile())?;
        let provider = config
            .credentials_provider(&ClientOverrides::default())
            .map_err(|e| e.into_reconcile())?;
        let credentials: Credentials = provider.credentials().await.map_err(|e| {
            ReconcileError::dependency(
                "CredentialsUnavailable",
                format!("{}: cannot get credentials: {e}", config.display),
            )
        })?;
        Ok(OssStore {
            client: OssClient::new(self.http.clone(), endpoint, addressing, credentials),
            bucket: location.bucket.clone(),
            config: config.display.clone(),
        })
    }
}

/// One backup's bucket, with the credentials of its configuration.
pub struct OssStore {
    client: OssClient,
    bucket: String,
    /// The configuration's name, for messages.
    config: String,
}

impl OssStore {
    /// The store of `bucket` through a client made elsewhere (the snapshot benchmark), named
    /// `config` in messages.
    pub fn with_client(client: OssClient, bucket: &str, config: &str) -> Self {
        Self {
            client,
            bucket: bucket.to_owned(),
            config: config.to_owned(),
        }
    }

    /// An OSS failure as a condition reason (OSS's code) and an actionable message.
    fn error(&self, e: OssError) -> StoreError {
        let (reason, retryable) = match &e {
            OssError::Api { status, code, .. } => (code.clone(), *status >= 500 || *status == 429),
            OssError::Transport { .. } => ("OSSUnreachable".to_owned(), true),
            OssError::Decode { .. } => ("OSSAnswerNotUnderstood".to_owned(), true),
        };
        let hint = match reason.as_str() {
            "NoSuchBucket" => format!(
                "; create bucket {} in the destination's region, or fix spec.destination.oss.bucket",
                self.bucket
            ),
            "AccessDenied" => format!(
                "; allow the key of {} oss:PutObject, oss:GetObject, oss:ListObjects and oss:DeleteObject on bucket {}",
                self.config, self.bucket
            ),
            "InvalidAccessKeyId" | "SignatureDoesNotMatch" => format!(
                "; check the AccessKey in the credentials Secret of {}",
                self.config
            ),
            _ => String::new(),
        };
        StoreError {
            reason,
            message: format!("{e}{hint}"),
            retryable,
        }
    }
}

fn meta_of(meta: &std::collections::BTreeMap<String, String>) -> Option<SnapshotMeta> {
    Some(SnapshotMeta {
        sha256: meta.get(META_SHA256)?.clone(),
        revision: meta.get(META_REVISION).and_then(|r| r.parse().ok()),
        taken_at: meta.get(META_TAKEN_AT)?.parse().ok()?,
        generation: meta.get(META_GENERATION).and_then(|g| g.parse().ok()),
    })
}

impl SnapshotStore for OssStore {
    async fn put(
        &self,
        key: &str,
        snapshot: &Spooled,
        meta: &SnapshotMeta,
    ) -> Result<(), StoreError> {
        let taken_at = meta.taken_at.to_string();
        let revision = meta.revision.map(|r| r.to_string());
        let generation = meta.generation.map(|g| g.to_string());
        let mut headers = vec![
            (META_SHA256, meta.sha256.as_str()),
            (META_TAKEN_AT, &taken_at),
        ];
        if let Some(revision) = &revision {
            headers.push((META_REVISION, revision));
        }
        if let Some(generation) = &generation {
            headers.push((META_GENERATION, generation));
        }
        let file = snapshot.reader().map_err(|e| StoreError {
            reason: provider_etcd::reasons::SNAPSHOT_FAILED.to_owned(),
            message: format!("cannot read the spooled snapshot back for {key}: {e}"),
            retryable: true,
        })?;
        // Read in large blocks: a 1 GiB snapshot is 4096 reads, not 262144.
        let stream = tokio_util::io::ReaderStream::with_capacity(file, UPLOAD_BLOCK);
        let body = ObjectBody::stream(reqwest::Body::wrap_stream(stream), snapshot.size());
        self.client
            .put_object_with_meta(&self.bucket, key, body, &headers)
            .await
            .map(|_| ())
            .map_err(|e| self.error(e))
    }

    async fn list(
        &self,
        folder: &str,
        known: &(dyn Fn(&str) -> Option<SnapshotMeta> + Sync),
    ) -> Result<Vec<Stored>, StoreError> {
        let mut stored = Vec::new();
        let mut marker: Option<String> = None;
        loop {
            let page = self
                .client
                .list_objects(&self.bucket, folder, marker.as_deref())
                .await
                .map_err(|e| self.error(e))?;
            for object in page.objects {
                let meta = match known(&object.key) {
                    Some(meta) => Some(meta),
                    None => match self.client.head_object(&self.bucket, &object.key).await {
                        Ok(head) => meta_of(&head.meta),
                        // Deleted between the listing and now: not stored any more.
                        Err(e) if e.code() == Some("NoSuchKey") => continue,
                        Err(e) => return Err(self.error(e)),
                    },
                };
                stored.push(Stored {
                    key: object.key,
                    size: object.size,
                    meta,
                });
            }
            match page.next_marker {
                Some(next) => marker = Some(next),
                None => return Ok(stored),
            }
        }
    }

    async fn delete(&self, key: &str) -> Result<(), StoreError> {
        self.client
            .delete_object(&self.bucket, key)
            .await
            .map_err(|e| self.error(e))
    }

    async fn head(&self, key: &str) -> Result<Option<(i64, Option<SnapshotMeta>)>, StoreError> {
        match self.client.head_object(&self.bucket, key).await {
            Ok(head) => Ok(Some((
                i64::try_from(head.size).unwrap_or(i64::MAX),
                meta_of(&head.meta),
            ))),
            Err(e) if e.code() == Some("NoSuchKey") => Ok(None),
            Err(e) => Err(self.error(e)),
        }
    }

    fn signed_get_url(&self, key: &str, expires: Timestamp) -> Result<String, StoreError> {
        self.client
            .presign_get(&self.bucket, key, expires)
            .map(String::from)
            .map_err(|e| self.error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::etcd_backup::{
        BackupDestination, EtcdBackup, EtcdBackupSpec, EtcdClusterReference, OssDestination,
    };

    fn backup(region: Option<&str>, endpoint: Option<&str>) -> EtcdBackup {
        EtcdBackup::new(
            "b",
            EtcdBackupSpec {
                deletion_policy: Default::default(),
                management_policies: ferroplane_apis::common::default_management_policies(),
                cluster_ref: EtcdClusterReference { name: "c".into() },
                destination: BackupDestination {
                    pvc: None,
                    oss: Some(OssDestination {
                        bucket: "bucket".into(),
                        prefix: String::new(),
                        region: region.map(str::to_owned),
                        endpoint: endpoint.map(str::to_owned),
                        provider_config_ref: Default::default(),
                    }),
                },
                schedule: None,
                keep: 1,
                trigger: None,
            },
        )
    }

    fn at(region: Option<&str>, endpoint: Option<&str>) -> StoreLocation {
        StoreLocation::of_backup(&backup(region, endpoint)).expect("an OSS destination")
    }

    #[test]
    fn endpoints_are_the_regions_or_an_allowed_one() {
        let allowed = EndpointAllowList::default()
            .with("http://127.0.0.1:9000")
            .expect("allowed");
        let (url, addressing) =
            endpoint_of(&at(Some("cn-hangzhou"), None), &allowed).expect("regional");
        assert_eq!(url.as_str(), "https://oss-cn-hangzhou.aliyuncs.com/");
        assert_eq!(addressing, Addressing::VirtualHosted);
        let (_, addressing) =
            endpoint_of(&at(None, Some("http://127.0.0.1:9000")), &allowed).expect("listed");
        assert_eq!(addressing, Addressing::Path);
        let refused = endpoint_of(&at(None, Some("https://evil.example.com")), &allowed)
            .expect_err("not listed");
        assert_eq!(refused.reason(), "EndpointNotAllowed");
        assert!(
            endpoint_of(
                &at(None, Some("http://oss-cn-hangzhou.aliyuncs.com")),
                &allowed
            )
            .is_err(),
            "Alibaba Cloud's endpoints only over https"
        );
    }
}
