//! Typed ECS actions: the [`EcsClient`] methods that send them, with batching and pagination:
//! `DescribeInstances` asks for at most 100 IDs per call and follows `NextToken` to the last
//! page; tag calls send at most 50 resources per call. Requests are in [`super::request`],
//! responses in [`super::response`].

use std::collections::HashSet;

use super::client::EcsClient;
use super::request::{
    DescribeInstancesRequest, MAX_INSTANCE_IDS_PER_CALL, MAX_TAG_RESOURCES_PER_CALL,
    ModifyInstanceAttributeRequest, ModifyInstanceSpecRequest, RunInstancesRequest, StoppedMode,
    resolve_client_token, set_tags,
};
use super::response::{
    AckResponse, DescribeInstanceAttributeResponse, DescribeInstancesResponse,
    DescribeRegionsResponse, Instance, ListTagResourcesResponse, Region, RunInstancesResponse, Tag,
    TagResource,
};
use crate::error::Error;
use crate::rpc::Params;

fn instance_params(instance_id: &str) -> Params {
    let mut p = Params::new();
    p.set("InstanceId", instance_id);
    p
}

fn tag_params(resource_ids: &[String]) -> Params {
    let mut p = Params::new();
    p.set("ResourceType", "instance")
        .list("ResourceId", resource_ids);
    p
}

impl EcsClient {
    /// `RunInstances`: creates instances; idempotent through the ClientToken.
    pub async fn run_instances(
        &self,
        request: &RunInstancesRequest,
    ) -> Result<RunInstancesResponse, Error> {
        request.validate()?;
        let token = resolve_client_token("RunInstances", request.client_token.as_deref())?;
        self.call_typed("RunInstances", &request.to_params(&token))
            .await
    }

    /// One page of `DescribeInstances` for at most 100 IDs.
    pub async fn describe_instances_page(
        &self,
        request: &DescribeInstancesRequest,
        ids: &[String],
        next_token: Option<&str>,
    ) -> Result<DescribeInstancesResponse, Error> {
        if ids.len() > MAX_INSTANCE_IDS_PER_CALL {
            return Err(Error::InvalidRequest {
                action: "DescribeInstances".into(),
                reason: format!(
                    "{} instance IDs in one call; at most {MAX_INSTANCE_IDS_PER_CALL} are allowed",
                    ids.len()
                ),
            });
        }
        self.call_typed("DescribeInstances", &request.to_params(ids, next_token))
            .await
    }

    /// `DescribeInstances`, every page; IDs are sent in batches of at most 100. Unknown IDs are
    /// simply absent from the result.
    pub async fn describe_instances(
        &self,
        request: &DescribeInstancesRequest,
    ) -> Result<Vec<Instance>, Error> {
        let mut out = Vec::new();
        if request.instance_ids.is_empty() {
            self.describe_all_pages(request, &[], &mut out).await?;
        } else {
            for batch in request.instance_ids.chunks(MAX_INSTANCE_IDS_PER_CALL) {
                self.describe_all_pages(request, batch, &mut out).await?;
            }
        }
        Ok(out)
    }

    /// The instances with these IDs (batched by 100, all pages); no IDs, no call, no instances.
    pub async fn describe_instances_by_ids(&self, ids: &[String]) -> Result<Vec<Instance>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.describe_instances(&DescribeInstancesRequest {
            instance_ids: ids.to_vec(),
            ..DescribeInstancesRequest::default()
        })
        .await
    }

    async fn describe_all_pages(
        &self,
        request: &DescribeInstancesRequest,
        ids: &[String],
        out: &mut Vec<Instance>,
    ) -> Result<(), Error> {
        let mut seen = HashSet::new();
        let mut token: Option<String> = None;
        loop {
            let page = self
                .describe_instances_page(request, ids, token.as_deref())
                .await?;
            out.extend(page.instances.items);
            match page.next_token.filter(|t| !t.is_empty()) {
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(Error::InvalidResponse {
                        action: "DescribeInstances".into(),
                        http_status: 200,
                        request_id: Some(page.request_id),
                        detail: format!("NextToken `{next}` repeated; pagination would never end"),
                    });
                }
                Some(next) => token = Some(next),
                None => return Ok(()),
            }
        }
    }

    /// `DescribeInstanceAttribute`; an unknown ID is `InvalidInstanceId.NotFound`.
    pub async fn describe_instance_attribute(&self, instance_id: &str) -> Result<Instance, Error> {
        let response: DescribeInstanceAttributeResponse = self
            .call_typed("DescribeInstanceAttribute", &instance_params(instance_id))
            .await?;
        Ok(response.instance)
    }

    /// `StartInstance` (the instance must be Stopped).
    pub async fn start_instance(&self, instance_id: &str) -> Result<AckResponse, Error> {
        self.call_typed("StartInstance", &instance_params(instance_id))
            .await
    }

    /// `StopInstance` (the instance must be Running).
    pub async fn stop_instance(
        &self,
        instance_id: &str,
        force_stop: bool,
        stopped_mode: Option<StoppedMode>,
    ) -> Result<AckResponse, Error> {
        let mut p = instance_params(instance_id);
        p.set("ForceStop", force_stop)
            .opt("StoppedMode", stopped_mode.map(StoppedMode::as_str));
        self.call_typed("StopInstance", &p).await
    }

    /// `RebootInstance` (the instance must be Running).
    pub async fn reboot_instance(
        &self,
        instance_id: &str,
        force_stop: bool,
    ) -> Result<AckResponse, Error> {
        let mut p = instance_params(instance_id);
        p.set("ForceStop", force_stop);
        self.call_typed("RebootInstance", &p).await
    }

    /// `DeleteInstance`; `force` also releases a Running instance.
    pub async fn delete_instance(
        &self,
        instance_id: &str,
        force: bool,
    ) -> Result<AckResponse, Error> {
        let mut p = instance_params(instance_id);
        p.set("Force", force);
        self.call_typed("DeleteInstance", &p).await
    }

    /// `DeleteInstance` of an expired subscription (`PrePaid`) instance: ECS releases one only
    /// with `TerminateSubscription=true`.
    pub async fn delete_expired_subscription(
        &self,
        instance_id: &str,
        force: bool,
    ) -> Result<AckResponse, Error> {
        let mut p = instance_params(instance_id);
        p.set("Force", force).set("TerminateSubscription", true);
        self.call_typed("DeleteInstance", &p).await
    }

    /// `DeleteInstances` for at most 100 IDs, idempotent through the ClientToken.
    pub async fn delete_instances(
        &self,
        instance_ids: &[String],
        force: bool,
        client_token: Option<&str>,
    ) -> Result<AckResponse, Error> {
        if instance_ids.is_empty() || instance_ids.len() > MAX_INSTANCE_IDS_PER_CALL {
            return Err(Error::InvalidRequest {
                action: "DeleteInstances".into(),
                reason: format!(
                    "{} instance IDs given; between 1 and {MAX_INSTANCE_IDS_PER_CALL} are allowed",
                    instance_ids.len()
                ),
            });
        }
        let token = resolve_client_token("DeleteInstances", client_token)?;
        let mut p = Params::new();
        p.list("InstanceId", instance_ids)
            .set("Force", force)
            .set("ClientToken", token);
        self.call_typed("DeleteInstances", &p).await
    }

    /// `ModifyInstanceAttribute`.
    pub async fn modify_instance_attribute(
        &self,
        request: &ModifyInstanceAttributeRequest,
    ) -> Result<AckResponse, Error> {
        self.call_typed("ModifyInstanceAttribute", &request.to_params())
            .await
    }

    /// `ModifyInstanceSpec`.
    pub async fn modify_instance_spec(
        &self,
        request: &ModifyInstanceSpecRequest,
    ) -> Result<AckResponse, Error> {
        let token = resolve_client_token("ModifyInstanceSpec", request.client_token.as_deref())?;
        self.call_typed("ModifyInstanceSpec", &request.to_params(&token))
            .await
    }

    /// `TagResources`: adds or overwrites tags on instances (50 per call).
    pub async fn tag_resources(&self, instance_ids: &[String], tags: &[Tag]) -> Result<(), Error> {
        for batch in instance_ids.chunks(MAX_TAG_RESOURCES_PER_CALL) {
            let mut p = tag_params(batch);
            set_tags(&mut p, tags);
            let _: AckResponse = self.call_typed("TagResources", &p).await?;
        }
        Ok(())
    }

    /// `UntagResources`: removes tag keys from instances (50 per call).
    pub async fn untag_resources(
        &self,
        instance_ids: &[String],
        tag_keys: &[String],
    ) -> Result<(), Error> {
        for batch in instance_ids.chunks(MAX_TAG_RESOURCES_PER_CALL) {
            let mut p = tag_params(batch);
            p.list("TagKey", tag_keys);
            let _: AckResponse = self.call_typed("UntagResources", &p).await?;
        }
        Ok(())
    }

    /// `ListTagResources`: every (instance, tag) pair of these instances, all pages.
    pub async fn list_tag_resources(
        &self,
        instance_ids: &[String],
    ) -> Result<Vec<TagResource>, Error> {
        let mut out = Vec::new();
        for batch in instance_ids.chunks(MAX_TAG_RESOURCES_PER_CALL) {
            let mut token: Option<String> = None;
            let mut seen = HashSet::new();
            loop {
                let mut p = tag_params(batch);
                p.opt("NextToken", token.as_ref());
                let page: ListTagResourcesResponse =
                    self.call_typed("ListTagResources", &p).await?;
                out.extend(page.tag_resources.items);
                match page.next_token.filter(|t| !t.is_empty()) {
                    Some(next) if seen.insert(next.clone()) => token = Some(next),
                    Some(next) => {
                        return Err(Error::InvalidResponse {
                            action: "ListTagResources".into(),
                            http_status: 200,
                            request_id: Some(page.request_id),
                            detail: format!(
                                "NextToken `{next}` repeated; pagination would never end"
                            ),
                        });
                    }
                    None => break,
                }
            }
        }
        Ok(out)
    }

    /// `DescribeRegions`.
    pub async fn describe_regions(&self) -> Result<Vec<Region>, Error> {
        let response: DescribeRegionsResponse =
            self.call_typed("DescribeRegions", &Params::new()).await?;
        Ok(response.regions.items)
    }
}
