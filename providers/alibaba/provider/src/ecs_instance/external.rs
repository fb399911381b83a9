//! [`EcsExternal`]: `observe`, `create`, `update` and `delete` of one ECS instance, for one
//! reconcile (the connector makes a new one each time, so it may remember what `observe` saw).

use crate::call_metrics::record_call;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use alibaba_sdk::ecs::{
    AutoRenewChange, DescribeDisksRequest, DescribeInstancesRequest, Disk, Instance,
    InstanceRenewAttribute, KeyPairBindResponse, MetadataOptionsChange,
    ModifyInstanceAttributeRequest, ModifyInstanceSpecRequest, NetworkSpecChange, ResizeType, Tag,
};
use alibaba_sdk::{Error, Secret};
use ferroplane_apis::alibabacloud::{ECSInstance, PeriodUnit};
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalCalls, ExternalClient, ExternalRef,
    IdempotencyKey, Observation, ReconcileError, UID_TAG, Update,
};
use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::{Api, ResourceExt};

use super::applied_inputs::{AppliedInputs, ChangedInputs, InputDigests};
use super::diff::{self, InPlace, Power, RestartBound, status};
use super::field_diffs::Observed;
use super::late_init::late_init;
use super::observation::{
    CONN_INSTANCE_ID, connection_details, readiness, status as observed_status,
};
use super::owner_search::outcome_unknown;
use super::recent_creations::{LISTED_AFTER, RecentCreations};
use super::spec_mapping::{
    encode_user_data, launch_refusal, period_unit, run_instances_request, stopped_mode,
};
use crate::cloud_client::RegionClient;
use crate::cloud_error::reconcile_error;
use crate::reasons::{
    DELETION_PROTECTION, IMMUTABLE_FIELD_CHANGED, INSTANCE_NOT_FOUND, INVALID_PASSWORD,
    INVALID_RESPONSE, INVALID_SPEC, KEY_PAIR_NOT_BOUND, KUBERNETES_API_ERROR, PASSWORD_KEY_MISSING,
    PASSWORD_SECRET_NOT_FOUND, SUBSCRIPTION_NOT_EXPIRED,
};

/// The ECS side of one ECSInstance reconcile.
pub struct EcsExternal {
    client: RegionClient,
    kube: kube::Client,
    config: String,
    inputs: Arc<AppliedInputs>,
    recent: Arc<RecentCreations>,
    calls: ExternalCalls,
    observed: Mutex<Option<Instance>>,
}

impl EcsExternal {
    pub(crate) fn new(
        client: RegionClient,
        kube: kube::Client,
        config: String,
        inputs: Arc<AppliedInputs>,
        recent: Arc<RecentCreations>,
        calls: ExternalCalls,
    ) -> Self {
        Self {
            client,
            kube,
            config,
            inputs,
            recent,
            calls,
            observed: Mutex::new(None),
        }
    }

    /// Sends one ECS call, counts it, and maps its error.
    async fn call<T>(
        &self,
        action: &str,
        call: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, ReconcileError> {
        let result = call.await;
        record_call(&self.calls, action, &result);
        result.map_err(|e| reconcile_error(&e, &self.config))
    }

    /// The instance `id`, or `None` when ECS says it does not exist. That includes
    /// `Forbidden.InstanceNotFound`, ECS's 403 for a released instance, which Terraform's alicloud
    /// provider treats as gone too (as a permission error, a delete would stall on it).
    async fn describe(&self, id: &str) -> Result<Option<Instance>, ReconcileError> {
        let result = match &self.client.batcher {
            Some(batcher) => batcher.describe(id).await.map_err(ErrorRef::Shared),
            None => {
                let ids = [id.to_owned()];
                let result = self.client.ecs.describe_instances_by_ids(&ids).await;
                record_call(&self.calls, "DescribeInstances", &result);
                result
                    .map(|found| found.into_iter().find(|i| i.instance_id == id))
                    .map_err(ErrorRef::Owned)
            }
        };
        match result {
            Ok(found) => Ok(found),
            Err(e) if e.get().is_instance_not_found() => Ok(None),
            Err(e) => Err(reconcile_error(e.get(), &self.config)),
        }
    }

    /// The instance an earlier create made for this object, found by its UID tag: through the
    /// search shared by every object of this client, or with a call of its own.
    async fn find_by_uid(&self, uid: &str) -> Result<Option<Instance>, ReconcileError> {
        let Some(owners) = &self.client.owners else {
            return self.search_by_uid(uid).await;
        };
        let id = owners
            .find(uid)
            .await
            .map_err(|e| reconcile_error(&e, &self.config))?;
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
    async fn password(&self, mr: &ECSInstance) -> Result<Option<Secret>, ReconcileError> {
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

    fn digests(mr: &ECSInstance, password: Option<&Secret>) -> InputDigests {
        InputDigests::of(
            password.map(Secret::expose),
            mr.spec.for_provider.user_data.as_deref(),
        )
    }

    /// An instance was changed: the batcher must not answer from what it saw before.
    fn touched(&self, id: &str) {
        if let Some(batcher) = &self.client.batcher {
            batcher.invalidate(id);
        }
    }

    /// An instance is gone: stop sweeping it.
    fn gone(&self, id: &str, uid: &str) {
        self.inputs.forget(uid);
        self.recent.settle(id);
        if let Some(batcher) = &self.client.batcher {
            batcher.forget(id);
        }
    }

    fn remembered(&self) -> Option<Instance> {
        self.observed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    async fn current(&self, id: &str) -> Result<Option<Instance>, ReconcileError> {
        match self.remembered().filter(|i| i.instance_id == id) {
            Some(instance) => Ok(Some(instance)),
            None => self.describe(id).await,
        }
    }

    /// The instance's RAM role (`""`: none) when the spec names one; `None` (not compared)
    /// otherwise, so instances without `ramRoleName` cost no extra call.
    async fn ram_role(&self, mr: &ECSInstance, id: &str) -> Result<Option<String>, ReconcileError> {
        if mr.spec.for_provider.ram_role_name.is_none() {
            return Ok(None);
        }
        let ids = [id.to_owned()];
        let roles = self
            .call(
                "DescribeInstanceRamRole",
                self.client.ecs.describe_instance_ram_roles(&ids),
            )
            .await?;
        Ok(Some(
            roles
                .into_iter()
                .find(|r| r.instance_id == id)
                .map(|r| r.ram_role_name)
                .unwrap_or_default(),
        ))
    }

    /// The instance's disks when the spec sets `systemDisk` or `dataDisks`; `None` (not
    /// compared, not reported) otherwise, so other instances cost no extra call.
    async fn disks(&self, mr: &ECSInstance, id: &str) -> Result<Option<Vec<Disk>>, ReconcileError> {
        let p = &mr.spec.for_provider;
        if p.system_disk.is_none() && p.data_disks.is_none() {
            return Ok(None);
        }
        let request = DescribeDisksRequest {
            instance_id: Some(id.to_owned()),
            ..DescribeDisksRequest::default()
        };
        self.call("DescribeDisks", self.client.ecs.describe_disks(&request))
            .await
            .map(Some)
    }

    /// The auto-renewal of a subscription instance whose spec sets `autoRenew` or
    /// `autoRenewPeriod`; `None` (not compared) otherwise.
    async fn renewal(
        &self,
        mr: &ECSInstance,
        instance: &Instance,
    ) -> Result<Option<InstanceRenewAttribute>, ReconcileError> {
        let p = &mr.spec.for_provider;
        if instance.instance_charge_type != "PrePaid"
            || (p.auto_renew.is_none() && p.auto_renew_period.is_none())
        {
            return Ok(None);
        }
        let ids = [instance.instance_id.clone()];
        let found = self
            .call(
                "DescribeInstanceAutoRenewAttribute",
                self.client.ecs.describe_instance_auto_renew_attribute(&ids),
            )
            .await?;
        Ok(found
            .into_iter()
            .find(|r| r.instance_id == instance.instance_id))
    }

    /// `AttachKeyPair` / `DetachKeyPair` answer per instance: a failure for this one is an error.
    fn key_pair_outcome(
        action: &str,
        id: &str,
        response: &KeyPairBindResponse,
    ) -> Result<(), ReconcileError> {
        match response.failures().first() {
            None => Ok(()),
            Some(failed) => Err(ReconcileError::retryable(
                KEY_PAIR_NOT_BOUND,
                format!(
                    "{action} for instance {id} failed: {} ({}) [request id {}]",
                    failed.message, failed.code, response.request_id
                ),
            )),
        }
    }

    async fn apply_in_place(
        &self,
        id: &str,
        change: &InPlace,
        observed: &Instance,
        unit: Option<PeriodUnit>,
    ) -> Result<(), ReconcileError> {
        if change.has_attributes() {
            let request = ModifyInstanceAttributeRequest {
                instance_id: id.to_owned(),
                instance_name: change.instance_name.clone(),
                description: change.description.clone(),
                security_group_ids: change.security_group_ids.clone(),
                deletion_protection: change.deletion_protection,
                credit_specification: change.credit_specification.clone(),
                ..ModifyInstanceAttributeRequest::default()
            };
            self.call(
                "ModifyInstanceAttribute",
                self.client.ecs.modify_instance_attribute(&request),
            )
            .await?;
        }
        if change.has_network_spec() {
            // A pay-as-you-go instance rising from 0 Mbit/s gets a public IP only when asked.
            let request = NetworkSpecChange {
                internet_max_bandwidth_out: change.bandwidth_out,
                network_charge_type: change.internet_charge_type.clone(),
                allocate_public_ip: change.bandwidth_out.is_some_and(|b| b > 0)
                    && observed.public_ip().is_none(),
            };
            self.call(
                "ModifyInstanceNetworkSpec",
                self.client.ecs.modify_instance_network_spec(id, &request),
            )
            .await?;
        }
        if change.has_metadata_options() {
            let request = MetadataOptionsChange {
                http_endpoint: change.http_endpoint.clone().unwrap_or_else(|| {
                    Some(observed.metadata_options.http_endpoint.clone())
                        .filter(|e| !e.is_empty())
                        .unwrap_or_else(|| "enabled".to_owned())
                }),
                http_tokens: change.http_tokens.clone(),
                http_put_response_hop_limit: change.http_put_response_hop_limit,
            };
            self.call(
                "ModifyInstanceMetadataOptions",
                self.client
                    .ecs
                    .modify_instance_metadata_options(id, &request),
            )
            .await?;
        }
        if let Some((attached, wanted)) = &change.ram_role {
            let ids = [id.to_owned()];
            // An instance holds one role: the old one goes first.
            if let Some(old) = attached {
                self.call(
                    "DetachInstanceRamRole",
                    self.client.ecs.detach_instance_ram_role(&ids, Some(old)),
                )
                .await?;
            }
            self.call(
                "AttachInstanceRamRole",
                self.client.ecs.attach_instance_ram_role(&ids, wanted),
            )
            .await?;
        }
        if let Some((bound, wanted)) = &change.key_pair {
            let ids = [id.to_owned()];
            if let Some(old) = bound {
                let r = self
                    .call("DetachKeyPair", self.client.ecs.detach_key_pair(old, &ids))
                    .await?;
                Self::key_pair_outcome("DetachKeyPair", id, &r)?;
            }
            let r = self
                .call(
                    "AttachKeyPair",
                    self.client.ecs.attach_key_pair(wanted, &ids),
                )
                .await?;
            Self::key_pair_outcome("AttachKeyPair", id, &r)?;
        }
        if let Some((disk, size)) = &change.system_disk_size {
            // Online while it runs (no restart); offline otherwise, effective at the next start.
            let how = if observed.status == status::RUNNING {
                ResizeType::Online
            } else {
                ResizeType::Offline
            };
            self.call("ResizeDisk", self.client.ecs.resize_disk(disk, *size, how))
                .await?;
        }
        if let Some((disk, level)) = &change.system_disk_performance_level {
            self.call(
                "ModifyDiskSpec",
                self.client.ecs.modify_disk_performance_level(disk, level),
            )
            .await?;
        }
        if let Some((to, period, unit)) = &change.charge_type {
            if to == "PrePaid" && period.is_none() {
                return Err(ReconcileError::terminal(
                    INVALID_SPEC,
                    format!(
                        "instance {id}: instanceChargeType PrePaid needs spec.forProvider.period (and periodUnit, Month by default): ECS buys the subscription for that long"
                    ),
                ));
            }
            self.call(
                "ModifyInstanceChargeType",
                self.client
                    .ecs
                    .modify_instance_charge_type(id, to, *period, unit.as_deref()),
            )
            .await?;
        }
        if let Some((enabled, duration)) = change.auto_renew {
            let request = AutoRenewChange {
                auto_renew: enabled,
                duration,
                period_unit: duration
                    .map(|_| period_unit(unit.unwrap_or(PeriodUnit::Month)).to_owned()),
            };
            self.call(
                "ModifyInstanceAutoRenewAttribute",
                self.client
                    .ecs
                    .modify_instance_auto_renew_attribute(id, &request),
            )
            .await?;
        }
        if let Some(set) = &change.deployment_set_id {
            self.call(
                "ModifyInstanceDeployment",
                self.client.ecs.modify_instance_deployment(id, set),
            )
            .await?;
        }
        if let Some((eni, assign, release)) = &change.ipv6 {
            if *assign > 0 {
                self.call(
                    "AssignIpv6Addresses",
                    self.client.ecs.assign_ipv6_addresses(eni, *assign),
                )
                .await?;
            }
            if !release.is_empty() {
                self.call(
                    "UnassignIpv6Addresses",
                    self.client.ecs.unassign_ipv6_addresses(eni, release),
                )
                .await?;
            }
        }
        if let Some(group) = &change.resource_group_id {
            self.call(
                "JoinResourceGroup",
                self.client.ecs.join_resource_group(id, group),
            )
            .await?;
        }
        let ids = [id.to_owned()];
        if !change.tags_to_set.is_empty() {
            self.call(
                "TagResources",
                self.client.ecs.tag_resources(&ids, &change.tags_to_set),
            )
            .await?;
        }
        if !change.tags_to_remove.is_empty() {
            self.call(
                "UntagResources",
                self.client
                    .ecs
                    .untag_resources(&ids, &change.tags_to_remove),
            )
            .await?;
        }
        Ok(())
    }

    /// Applies instance type, host name, password and user data to a stopped instance.
    async fn apply_restart_bound(
        &self,
        id: &str,
        change: &RestartBound,
        mr: &ECSInstance,
        password: Option<&Secret>,
    ) -> Result<(), ReconcileError> {
        if let Some(image) = &change.image_id {
            // A new system disk: the login comes from the spec's key pair or password.
            self.call(
                "ReplaceSystemDisk",
                self.client.ecs.replace_system_disk(
                    id,
                    image,
                    mr.spec
                        .for_provider
                        .system_disk
                        .as_ref()
                        .and_then(|d| d.size)
                        .and_then(|s| u32::try_from(s).ok()),
                    mr.spec.for_provider.key_pair_name.as_deref(),
                    password,
                ),
            )
            .await?;
        }
        if let Some((vswitch, private_ip)) = &change.vpc_attribute {
            self.call(
                "ModifyInstanceVpcAttribute",
                self.client
                    .ecs
                    .modify_instance_vpc_attribute(id, vswitch, private_ip.as_deref()),
            )
            .await?;
        }
        if let Some(instance_type) = &change.instance_type {
            let request = ModifyInstanceSpecRequest {
                instance_id: id.to_owned(),
                instance_type: Some(instance_type.clone()),
                ..ModifyInstanceSpecRequest::default()
            };
            self.call(
                "ModifyInstanceSpec",
                self.client.ecs.modify_instance_spec(&request),
            )
            .await?;
        }
        let request = ModifyInstanceAttributeRequest {
            instance_id: id.to_owned(),
            host_name: change.host_name.clone(),
            password: password.filter(|_| change.password).cloned(),
            user_data: mr
                .spec
                .for_provider
                .user_data
                .as_deref()
                .filter(|_| change.user_data)
                .map(encode_user_data),
            ..ModifyInstanceAttributeRequest::default()
        };
        if request.host_name.is_some() || request.password.is_some() || request.user_data.is_some()
        {
            self.call(
                "ModifyInstanceAttribute",
                self.client.ecs.modify_instance_attribute(&request),
            )
            .await?;
        }
        Ok(())
    }

    async fn power(&self, mr: &ECSInstance, id: &str, power: Power) -> Result<(), ReconcileError> {
        match power {
            Power::Start => {
                self.call("StartInstance", self.client.ecs.start_instance(id))
                    .await?
            }
            Power::Stop => {
                self.call(
                    "StopInstance",
                    self.client.ecs.stop_instance(
                        id,
                        false,
                        mr.spec.for_provider.stopped_mode.map(stopped_mode),
                    ),
                )
                .await?
            }
        };
        Ok(())
    }
}

/// The value of the instance's ownership tag, if it has one.
fn owner_tag(instance: &Instance) -> Option<&str> {
    instance
        .tags
        .items
        .iter()
        .find(|t| t.key == UID_TAG)
        .map(|t| t.value.as_str())
}

fn not_found_for_update(id: &str) -> ReconcileError {
    ReconcileError::retryable(
        INSTANCE_NOT_FOUND,
        format!("instance {id} disappeared before it could be updated; it is looked up again"),
    )
}

impl ExternalClient<ECSInstance> for EcsExternal {
    async fn observe(
        &self,
        mr: &ECSInstance,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        let found = match ext.name() {
            Some(id) => self.describe(id).await?,
            None => self.find_by_uid(&ext.uid).await?,
        };
        // Not listed: gone, or created a moment ago and not listed yet, which the framework
        // tells apart by the creation time it recorded (it survives a restart; this process's
        // memory does not).
        let Some(instance) = found else {
            if let Some(id) = ext.name()
                && !self.recent.is_recent(id)
            {
                self.gone(id, &ext.uid);
            }
            return Ok(Observation::missing());
        };
        self.recent.settle(&instance.instance_id);
        *self.observed.lock().unwrap_or_else(|p| p.into_inner()) = Some(instance.clone());
        let spec = &mr.spec.for_provider;
        let mut obs = Observation::found(&instance.instance_id)
            .with_owner_tag(owner_tag(&instance))
            .with_status(observed_status(&instance, None, None))?
            .with_readiness(readiness(&instance, spec.desired_status))
            .with_connection_details(connection_details(&instance));
        if let Some(filled) = late_init(spec, &instance) {
            obs = obs.with_late_init(filled)?;
        }
        if status::in_transition(&instance.status) {
            obs = obs.in_transition();
        }
        // Being deleted, or changing state: nothing to compare; the next observe will.
        if mr.metadata.deletion_timestamp.is_some() || status::in_transition(&instance.status) {
            return Ok(obs);
        }
        let password = self.password(mr).await?;
        let changed = self
            .inputs
            .changed(&ext.uid, Self::digests(mr, password.as_ref()));
        let ram_role = self.ram_role(mr, &instance.instance_id).await?;
        let disks = self.disks(mr, &instance.instance_id).await?;
        let renewal = self.renewal(mr, &instance).await?;
        obs = obs.with_status(observed_status(
            &instance,
            ram_role.as_deref(),
            disks.as_deref(),
        ))?;
        let plan = diff::plan(
            spec,
            &Observed {
                instance: &instance,
                ram_role: ram_role.as_deref(),
                inputs: changed,
                disks: disks.as_deref(),
                renewal: renewal.as_ref(),
            },
        );
        let verdict = diff::verdict(&plan, &instance.status, spec.allow_restart.unwrap_or(false));
        if let Some(diff) = verdict.diff {
            obs = obs.with_diff(diff);
        }
        if let Some(note) = verdict.note {
            obs = obs.with_note(note);
        }
        Ok(obs)
    }

    async fn create(
        &self,
        mr: &ECSInstance,
        key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        if let Some(refusal) = launch_refusal(&mr.spec.for_provider) {
            return Err(ReconcileError::terminal(INVALID_SPEC, refusal));
        }
        let password = self.password(mr).await?;
        let request = run_instances_request(
            &mr.spec.for_provider,
            key.token(),
            key.uid(),
            password.clone(),
        );
        let result = self.client.ecs.run_instances(&request).await;
        record_call(&self.calls, "RunInstances", &result);
        let owners = self.client.owners.as_ref();
        let response = result.map_err(|e| {
            if let Some(owners) = owners.filter(|_| outcome_unknown(&e)) {
                owners.outcome_unknown(key.uid());
            }
            reconcile_error(&e, &self.config)
        })?;
        let id = response.instance_ids().first().cloned().ok_or_else(|| {
            if let Some(owners) = owners {
                owners.outcome_unknown(key.uid());
            }
            ReconcileError::retryable(
                INVALID_RESPONSE,
                format!(
                    "RunInstances returned no instance ID [request id {}]; the instance is looked up by its {UID_TAG} tag",
                    response.request_id
                ),
            )
        })?;
        self.recent.record(&id);
        if let Some(batcher) = &self.client.batcher {
            batcher.expect(&id, Instant::now() + LISTED_AFTER);
        }
        if let Some(owners) = owners {
            owners.created(key.uid(), &id);
        }
        self.inputs
            .record(key.uid(), Self::digests(mr, password.as_ref()));
        // No look of its own now: the instance is not listed yet, and its first look rides
        // the batched read with the other new instances' once it is.
        Ok(Creation::new(&id)
            .with_connection_details(ConnectionDetails::new().with(CONN_INSTANCE_ID, id.as_bytes()))
            .with_listed_after(LISTED_AFTER))
    }

    async fn update(&self, mr: &ECSInstance, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let id = ext.name().unwrap_or_default();
        let instance = self
            .current(id)
            .await?
            .ok_or_else(|| not_found_for_update(id))?;
        let spec = &mr.spec.for_provider;
        let password = self.password(mr).await?;
        let digests = Self::digests(mr, password.as_ref());
        let changed = self.inputs.changed(&ext.uid, digests);
        let ram_role = self.ram_role(mr, id).await?;
        let disks = self.disks(mr, id).await?;
        let renewal = self.renewal(mr, &instance).await?;
        let plan = diff::plan(
            spec,
            &Observed {
                instance: &instance,
                ram_role: ram_role.as_deref(),
                inputs: changed,
                disks: disks.as_deref(),
                renewal: renewal.as_ref(),
            },
        );
        // Whatever happens below, the next observe must ask ECS again.
        self.touched(id);

        self.apply_in_place(id, &plan.in_place, &instance, spec.period_unit)
            .await?;

        let mut in_progress = false;
        if !plan.restart.is_empty() {
            if instance.status == status::STOPPED {
                self.apply_restart_bound(id, &plan.restart, mr, password.as_ref())
                    .await?;
                self.inputs.record(&ext.uid, digests);
            } else if spec.allow_restart.unwrap_or(false) && instance.status == status::RUNNING {
                // Stop now; the next reconcile finds it Stopped, changes everything, starts it.
                self.power(mr, id, Power::Stop).await?;
                in_progress = true;
            }
        } else if changed != ChangedInputs::default() {
            self.inputs.record(&ext.uid, digests);
        }
        if let Some(power) = plan.power
            && !in_progress
        {
            self.power(mr, id, power).await?;
            in_progress = true;
        }

        if !plan.immutable.is_empty() {
            return Err(ReconcileError::terminal(
                IMMUTABLE_FIELD_CHANGED,
                format!(
                    "instance {id}: {}; these fields cannot change after creation: restore them in spec.forProvider, or create a new ECSInstance",
                    plan.immutable.join("; ")
                ),
            ));
        }
        Ok(if in_progress {
            Update::in_progress()
        } else {
            Update::done()
        })
    }

    /// Points the instance's `ferroplane.io/uid` tag at this object (`TagResources` overwrites
    /// the value of a key the instance already has).
    async fn claim(&self, _mr: &ECSInstance, ext: &ExternalRef) -> Result<(), ReconcileError> {
        let Some(id) = ext.name() else {
            return Err(not_found_for_update("(unknown)"));
        };
        self.touched(id);
        let ids = [id.to_owned()];
        self.call(
            "TagResources",
            self.client
                .ecs
                .tag_resources(&ids, &[Tag::new(UID_TAG, &ext.uid)]),
        )
        .await
    }

    async fn delete(
        &self,
        mr: &ECSInstance,
        ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        let Some(id) = ext.name() else {
            return Ok(Deletion::Gone);
        };
        let Some(instance) = self.current(id).await? else {
            if self.recent.is_recent(id) {
                return Ok(Deletion::InProgress);
            }
            self.gone(id, &ext.uid);
            return Ok(Deletion::Gone);
        };
        self.touched(id);
        if instance.deletion_protection {
            if mr.spec.for_provider.deletion_protection != Some(false) {
                return Err(ReconcileError::terminal(
                    DELETION_PROTECTION,
                    format!(
                        "instance {id} has deletion protection on, so ECS refuses to release it: set spec.forProvider.deletionProtection: false (the object can still be edited while it is being deleted), or deletionPolicy: Orphan to keep the instance"
                    ),
                ));
            }
            let request = ModifyInstanceAttributeRequest {
                instance_id: id.to_owned(),
                deletion_protection: Some(false),
                ..ModifyInstanceAttributeRequest::default()
            };
            self.call(
                "ModifyInstanceAttribute",
                self.client.ecs.modify_instance_attribute(&request),
            )
            .await?;
        }
        if instance.is_unexpired_subscription(jiff::Timestamp::now()) {
            let expiry = instance
                .expired_time
                .map(|t| format!(" until {t}"))
                .unwrap_or_default();
            return Err(ReconcileError::terminal(
                SUBSCRIPTION_NOT_EXPIRED,
                format!(
                    "instance {id} is a subscription (PrePaid) instance, paid for{expiry}; ECS releases a subscription instance only after it expires. Set deletionPolicy: Orphan to remove the object and keep the instance (unsubscribe it in the console), or wait for the expiry: ferroplane retries the release then"
                ),
            ));
        }
        if status::in_transition(&instance.status) {
            return Ok(Deletion::InProgress);
        }
        let force = instance.status != status::STOPPED;
        // Unexpired subscriptions were refused above; an expired one needs its own flag.
        let result = if instance.instance_charge_type == "PrePaid" {
            self.client.ecs.delete_expired_subscription(id, force).await
        } else {
            self.client.ecs.delete_instance(id, force).await
        };
        record_call(&self.calls, "DeleteInstance", &result);
        match result {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if e.is_instance_not_found() => {
                self.gone(id, &ext.uid);
                Ok(Deletion::Gone)
            }
            Err(e) => Err(reconcile_error(&e, &self.config)),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_sdk::ecs::TagList;

    fn tagged(tags: Vec<Tag>) -> Instance {
        Instance {
            instance_id: "i-1".into(),
            tags: TagList { items: tags },
            ..Instance::default()
        }
    }

    #[test]
    fn the_owner_is_the_uid_tag_value_only() {
        let owned = tagged(vec![Tag::new("env", "dev"), Tag::new(UID_TAG, "uid-a")]);
        assert_eq!(owner_tag(&owned), Some("uid-a"));
        assert_eq!(owner_tag(&tagged(vec![Tag::new("env", "uid-a")])), None);
        assert_eq!(owner_tag(&tagged(Vec::new())), None);
    }
}
