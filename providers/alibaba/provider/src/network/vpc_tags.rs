//! Tags through the VPC API (`TagResources`, `UnTagResources`): the tag half of an
//! [`AttributeDiff`] for a VPC or vSwitch, and the first tags of a resource whose create takes
//! none (EIP, NAT gateway). Security groups take theirs through the ECS API.

use alibaba_sdk::vpc::Tag;
use ferroplane_apis::alibabacloud::Tags;
use ferroplane_runtime::ReconcileError;

use super::attributes::AttributeDiff;
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::uid_tagged;

impl CloudClients {
    /// Tags the resource `id` of `resource_type` that a create just made, which takes no tags
    /// itself: the spec's tags and the owner tag. Should this fail, the resource is untagged
    /// until the retried create, answered with the same resource for the same ClientToken,
    /// tags it.
    pub async fn tag_created(
        &self,
        resource_type: &str,
        id: &str,
        spec_tags: Option<&Tags>,
        uid: &str,
    ) -> Result<(), ReconcileError> {
        let tags = uid_tagged(spec_tags, uid, |k, v| Tag::new(k, v));
        self.call(
            "TagResources",
            self.region.vpc.tag_resource(resource_type, id, &tags),
        )
        .await?;
        Ok(())
    }

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
