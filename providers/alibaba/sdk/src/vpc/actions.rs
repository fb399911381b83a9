//! Typed VPC actions on [`VpcClient`]. Creates carry a `ClientToken` (a fresh one unless the
//! caller gives one), so a retry after a lost response creates nothing twice; describes follow
//! the pages to the last one.

use super::client::VpcClient;
use super::types::{
    CreateVSwitchRequest, CreateVSwitchResponse, CreateVpcRequest, CreateVpcResponse,
    DescribeVSwitchesResponse, DescribeVpcsResponse, Tag, VSwitch, Vpc, set_tags,
};
use crate::ecs::{AckResponse, resolve_client_token};
use crate::error::Error;
use crate::rpc::Params;

/// Most VPC IDs one `DescribeVpcs` takes.
pub const MAX_VPC_IDS_PER_CALL: usize = 20;
/// The largest page `DescribeVpcs` and `DescribeVSwitches` return.
const PAGE_SIZE: u32 = 50;

impl VpcClient {
    /// `CreateVpc`.
    pub async fn create_vpc(&self, request: &CreateVpcRequest) -> Result<CreateVpcResponse, Error> {
        let token = resolve_client_token("CreateVpc", request.client_token.as_deref())?;
        let mut p = request.to_params();
        p.set("ClientToken", token);
        self.call_typed("CreateVpc", &p).await
    }

    /// `DescribeVpcs` of the given IDs (all VPCs of the region when empty) carrying every tag in
    /// `tags`, all pages.
    pub async fn describe_vpcs(&self, vpc_ids: &[String], tags: &[Tag]) -> Result<Vec<Vpc>, Error> {
        let mut found = Vec::new();
        let chunks: Vec<&[String]> = if vpc_ids.is_empty() {
            vec![&[]]
        } else {
            vpc_ids.chunks(MAX_VPC_IDS_PER_CALL).collect()
        };
        for chunk in chunks {
            let mut base = Params::new();
            if !chunk.is_empty() {
                base.set("VpcId", chunk.join(","));
            }
            set_tags(&mut base, tags);
            for_each_page(|page| {
                let mut p = base.clone();
                p.set("PageNumber", page).set("PageSize", PAGE_SIZE);
                async move {
                    let r: DescribeVpcsResponse = self.call_typed("DescribeVpcs", &p).await?;
                    Ok((r.vpcs.items, r.total_count))
                }
            })
            .await
            .map(|mut items| found.append(&mut items))?;
        }
        Ok(found)
    }

    /// `DeleteVpc` (it must have no vSwitches, security groups or other dependents).
    pub async fn delete_vpc(&self, vpc_id: &str) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("VpcId", vpc_id);
        self.call_typed("DeleteVpc", &p).await
    }

    /// `CreateVSwitch`.
    pub async fn create_vswitch(
        &self,
        request: &CreateVSwitchRequest,
    ) -> Result<CreateVSwitchResponse, Error> {
        let token = resolve_client_token("CreateVSwitch", request.client_token.as_deref())?;
        let mut p = request.to_params();
        p.set("ClientToken", token);
        self.call_typed("CreateVSwitch", &p).await
    }

    /// `DescribeVSwitches`: one vSwitch by ID, or those of a VPC, carrying every tag in `tags`;
    /// all pages.
    pub async fn describe_vswitches(
        &self,
        vswitch_id: Option<&str>,
        vpc_id: Option<&str>,
        tags: &[Tag],
    ) -> Result<Vec<VSwitch>, Error> {
        let mut base = Params::new();
        base.opt("VSwitchId", vswitch_id).opt("VpcId", vpc_id);
        set_tags(&mut base, tags);
        for_each_page(|page| {
            let mut p = base.clone();
            p.set("PageNumber", page).set("PageSize", PAGE_SIZE);
            async move {
                let r: DescribeVSwitchesResponse = self.call_typed("DescribeVSwitches", &p).await?;
                Ok((r.vswitches.items, r.total_count))
            }
        })
        .await
    }

    /// `TagResources` on one resource of the VPC API (`resource_type` `VPC` or `VSWITCH`): adds
    /// or overwrites these tags.
    pub async fn tag_resource(
        &self,
        resource_type: &str,
        resource_id: &str,
        tags: &[Tag],
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("ResourceType", resource_type)
            .set("ResourceId.1", resource_id);
        set_tags(&mut p, tags);
        self.call_typed("TagResources", &p).await
    }

    /// `UnTagResources` on one resource of the VPC API: removes the tags with these keys.
    pub async fn untag_resource(
        &self,
        resource_type: &str,
        resource_id: &str,
        keys: &[String],
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("ResourceType", resource_type)
            .set("ResourceId.1", resource_id);
        p.list("TagKey", keys);
        self.call_typed("UnTagResources", &p).await
    }

    /// `ModifyVpcAttribute`: the name and/or description.
    pub async fn modify_vpc_attribute(
        &self,
        vpc_id: &str,
        vpc_name: Option<&str>,
        description: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("VpcId", vpc_id)
            .opt("VpcName", vpc_name)
            .opt("Description", description);
        self.call_typed("ModifyVpcAttribute", &p).await
    }

    /// `ModifyVSwitchAttribute`: the name and/or description.
    pub async fn modify_vswitch_attribute(
        &self,
        vswitch_id: &str,
        vswitch_name: Option<&str>,
        description: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("VSwitchId", vswitch_id)
            .opt("VSwitchName", vswitch_name)
            .opt("Description", description);
        self.call_typed("ModifyVSwitchAttribute", &p).await
    }

    /// `DeleteVSwitch` (no instance or other resource may use it).
    pub async fn delete_vswitch(&self, vswitch_id: &str) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("VSwitchId", vswitch_id);
        self.call_typed("DeleteVSwitch", &p).await
    }
}

/// Fetches pages 1, 2, ... until `total` items came or a page is empty.
pub(super) async fn for_each_page<T, F, Fut>(mut fetch: F) -> Result<Vec<T>, Error>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, u64), Error>>,
{
    let mut all = Vec::new();
    for page in 1.. {
        let (mut items, total) = fetch(page).await?;
        if items.is_empty() {
            break;
        }
        all.append(&mut items);
        if all.len() as u64 >= total {
            break;
        }
    }
    Ok(all)
}
