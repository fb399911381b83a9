//! What a reconcile reads besides its own writes: the instance (through the batcher, by ID, or
//! by its owner tag), the login password from its Secret, and the settings ECS reports through
//! other calls (RAM role, disks, auto-renewal), each only when the spec manages it.

use std::sync::Arc;
use std::time::Duration;

use alibaba_sdk::ecs::{DescribeInstancesRequest, Disk, Instance, InstanceRenewAttribute, Tag};
use alibaba_sdk::{Error, Secret};
use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_runtime::{ReconcileError, UID_TAG};
use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::{Api, ResourceExt};

use super::super::extra_reads;
use super::EcsExternal;
use crate::call_metrics::record_call;
use crate::cloud_error::read_error;
use crate::reasons::{
    INVALID_PASSWORD, KUBERNETES_API_ERROR, PASSWORD_KEY_MISSING, PASSWORD_SECRET_NOT_FOUND,
};

impl EcsExternal {
    /// The instance `id`, or `None` when a successful answer does not list it. An error answer
    /// is an error, whatever its code (even `Forbidden.InstanceNotFound` or
    /// `InvalidInstanceId.NotFound`): the call asked about many instances at once, and taking its
    /// failure for "gone" would create a second instance for each of them.
    pub(super) async fn describe(&self, id: &str) -> Result<Option<Instance>, ReconcileError> {
        self.describe_within(id, Duration::ZERO).await
    }

    /// [`describe`](Self::describe) for a look that can wait up to `wait` to share a call.
    pub(super) async fn describe_within(
        &self,
        id: &str,
        wait: Duration,
    ) -> Result<Option<Instance>, ReconcileError> {
        let result = match &self.client.batcher {
            Some(batcher) => batcher
                .describe_within(id, wait)
                .await
                .map_err(ErrorRef::Shared),
            None => {
                let ids = [id.to_owned()];
                let result = self.client.ecs.describe_instances_by_ids(&ids).await;
                record_call(&self.calls, "DescribeInstances", &result);
                result
                    .map(|found| found.into_iter().find(|i| i.instance_id == id))
                    .map_err(ErrorRef::Owned)
            }
        };
        result.map_err(|e| read_error(e.get(), &self.config))
    }

    /// The instance an earlier create made for this object, found by its UID tag: through the
    /// search shared by every object of this client, or with a call of its own.
    pub(super) async fn find_by_uid(&self, uid: &str) -> Result<Option<Instance>, ReconcileError> {
        let Some(owners) = &self.client.owners else {
            return self.search_by_uid(uid).await;
        };
        let id = owners
            .find(uid)
            .await
            .map_err(|e| read_error(&e, &self.config))?;
        match id {
            Some(id) => self.describe(&id).await,
            None => Ok(None),
        }
    }

    /// One `DescribeInstances` by the object's UID tag.
    async fn search_by_uid(&self, uid: &str) -> Result<Option<Instance>, ReconcileError> {
        let request = DescribeInstancesRequest {
            tags: vec![Tag::new(UID_TAG, uid)],
            ..DescribeInstancesRequest::default()
        };
        let mut found = self
            .call(
                "DescribeInstances",
                self.client.ecs.describe_instances(&request),
            )
            .await?;
        // Oldest first: if two ever existed, the first one is the one to keep.
        found.sort_by_key(|i| i.creation_time);
        Ok(found.into_iter().next())
    }

    /// The login password from `passwordSecretRef`, if set.
    pub(super) async fn password(
        &self,
        mr: &ECSInstance,
    ) -> Result<Option<Secret>, ReconcileError> {
        let Some(selector) = &mr.spec.for_provider.password_secret_ref else {
            return Ok(None);
        };
        let ns = mr.namespace().unwrap_or_default();
        let api: Api<KubeSecret> = Api::namespaced(self.kube.clone(), &ns);
        let secret = api
            .get_opt(&selector.name)
            .await
            .map_err(|e| {
                ReconcileError::retryable(
                    KUBERNETES_API_ERROR,
                    format!("cannot read password Secret {ns}/{}: {e}", selector.name),
                )
            })?
            .ok_or_else(|| {
                ReconcileError::dependency(
                    PASSWORD_SECRET_NOT_FOUND,
                    format!(
                        "Secret {ns}/{} named in spec.forProvider.passwordSecretRef does not exist; create it with the password under key {}",
                        selector.name, selector.key
                    ),
                )
            })?;
        let bytes = secret
            .data
            .as_ref()
            .and_then(|d| d.get(&selector.key))
            .ok_or_else(|| {
                ReconcileError::dependency(
                    PASSWORD_KEY_MISSING,
                    format!(
                        "Secret {ns}/{} has no key {} (spec.forProvider.passwordSecretRef.key)",
                        selector.name, selector.key
                    ),
                )
            })?;
        let text = String::from_utf8(bytes.0.clone()).map_err(|_| {
            ReconcileError::terminal(
                INVALID_PASSWORD,
                format!(
                    "key {} of Secret {ns}/{} is not UTF-8 text",
                    selector.key, selector.name
                ),
            )
        })?;
        Ok(Some(Secret::new(text.trim_end_matches(['\r', '\n']))))
    }

    pub(super) async fn current(&self, id: &str) -> Result<Option<Instance>, ReconcileError> {
        match self.remembered().filter(|i| i.instance_id == id) {
            Some(instance) => Ok(Some(instance)),
            None => self.describe(id).await,
        }
    }

    /// The instance's RAM role (`""`: none) when the spec names one; `None` (not compared)
    /// otherwise, so instances without `ramRoleName` cost no extra call.
    pub(super) async fn ram_role(
        &self,
        mr: &ECSInstance,
        id: &str,
    ) -> Result<Option<String>, ReconcileError> {
        if !extra_reads::wants_ram_role(&mr.spec.for_provider) {
            return Ok(None);
        }
        let ecs = &self.client.ecs;
        self.call(extra_reads::RAM_ROLE_ACTION, extra_reads::ram_role(ecs, id))
            .await
            .map(Some)
    }

    /// The instance's disks when the spec sets `systemDisk` or `dataDisks`; `None` (not
    /// compared, not reported) otherwise, so other instances cost no extra call.
    pub(super) async fn disks(
        &self,
        mr: &ECSInstance,
        id: &str,
    ) -> Result<Option<Vec<Disk>>, ReconcileError> {
        if !extra_reads::wants_disks(&mr.spec.for_provider) {
            return Ok(None);
        }
        let ecs = &self.client.ecs;
        self.call(extra_reads::DISKS_ACTION, extra_reads::disks(ecs, id))
            .await
            .map(Some)
    }

    /// The auto-renewal of a subscription instance whose spec sets `autoRenew` or
    /// `autoRenewPeriod`; `None` (not compared) otherwise.
    pub(super) async fn renewal(
        &self,
        mr: &ECSInstance,
        instance: &Instance,
    ) -> Result<Option<InstanceRenewAttribute>, ReconcileError> {
        if !extra_reads::wants_renewal(&mr.spec.for_provider, instance) {
            return Ok(None);
        }
        let ecs = &self.client.ecs;
        self.call(
            extra_reads::RENEWAL_ACTION,
            extra_reads::renewal(ecs, &instance.instance_id),
        )
        .await
    }
}

/// An SDK error as the batcher shares it or as a direct call returns it.
enum ErrorRef {
    Shared(Arc<Error>),
    Owned(Error),
}

impl ErrorRef {
    fn get(&self) -> &Error {
        match self {
            Self::Shared(e) => e,
            Self::Owned(e) => e,
        }
    }
}
