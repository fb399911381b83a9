//! Tags of a VPC or vSwitch through the VPC API (`TagResources`, `UnTagResources`): the tag half
//! of an [`AttributeDiff`]. Security groups take theirs through the ECS API.

use alibaba_sdk::vpc::Tag;
use ferroplane_runtime::ReconcileError;

use super::attributes::AttributeDiff;
use crate::cloud_connector::CloudClients;

impl CloudClients {
    /// Applies the tag half of an attribute diff through the VPC API (`TagResources`,
    /// `UnTagResources`) to the resource `id` of `resource_type` (`VPC` or `VSWITCH`).
    pub async fn sync_vpc_api_tags(
        &self,
        resource_type: &str,
        id: &str,
        diff: &AttributeDiff,
    ) -> Result<(), ReconcileError> {
        if !diff.set.is_empty() {
            let tags: Vec<Tag> = diff.set.iter().map(|(k, v)| Tag::new(k, v)).collect();
            self.call(
                "TagResources",
                self.region.vpc.tag_resource(resource_type, id, &tags),
            )
            .await?;
        }
        if !diff.remove.is_empty() {
            self.call(
                "UnTagResources",
                self.region
                    .vpc
                    .untag_resource(resource_type, id, &diff.remove),
            )
            .await?;
        }
        Ok(())
    }
}
