//! The `SecurityGroup` kind's external client: `CreateSecurityGroup` in the resolved VPC,
//! `DescribeSecurityGroups` (by ID, or by the UID tag) and `DescribeSecurityGroupAttribute` for
//! the rules of each direction, which `update` makes match the spec as its `rulesPolicy` says
//! (authorize what is missing; `Exclusive` also revokes, by rule ID, what the spec does not
//! list, whatever its peer), and name, description and tags in place
//! (`ModifySecurityGroupAttribute`, `TagResources`, `UntagResources`), `DeleteSecurityGroup`. The
//! group carries its `rulesPolicy` in the `ferroplane.io/rules-policy` tag, so that
//! SecurityGroupRule objects stay off an Exclusive group instead of fighting it.

use alibaba_sdk::ecs::{CreateSecurityGroupRequest, Direction, SecurityGroup as Group, Tag};
use ferroplane_apis::alibabacloud::{
    SecurityGroup, SecurityGroupObservation, SecurityGroupParameters,
};
use ferroplane_runtime::references::REFERENCE_NOT_RESOLVED;
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, ReconcileError, UID_TAG, Update,
};

use super::attributes::{self, AttributeDiff, Compared};
use super::rules::{HeldRule, RulePlan, desired};
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::{RULES_POLICY_TAG, uid_tagged};

/// Connection Secret key.
const CONN_SECURITY_GROUP_ID: &str = "securityGroupId";

const DIRECTIONS: [Direction; 2] = [Direction::Ingress, Direction::Egress];

/// The rules policy the group's tag should carry, when it does not (a group made before the tag
/// was, or a policy just changed): rule objects read it to stay off an Exclusive group.
fn policy_tag_drift(p: &SecurityGroupParameters, found: &Group) -> Option<&'static str> {
    let want = p.rules_policy.unwrap_or_default().as_str();
    (found.tag(RULES_POLICY_TAG) != Some(want)).then_some(want)
}

/// The spec's name, description and tags against the group's.
fn attribute_diff(p: &SecurityGroupParameters, found: &Group) -> AttributeDiff {
    attributes::diff(&Compared {
        name_field: "securityGroupName",
        want_name: p.security_group_name.as_deref(),
        have_name: &found.security_group_name,
        want_description: p.description.as_deref(),
        have_description: &found.description,
        want_tags: p.tags.as_ref(),
        have_tags: found.tags.pairs().collect(),
    })
}

impl CloudClients {
    async fn find_group(&self, ext: &ExternalRef) -> Result<Option<Group>, ReconcileError> {
        let (ids, tags) = match ext.name() {
            Some(id) => (vec![id.to_owned()], Vec::new()),
            None => (Vec::new(), vec![Tag::new(UID_TAG, &ext.uid)]),
        };
        let found = self
            .call(
                "DescribeSecurityGroups",
                self.region.ecs.describe_security_groups(&ids, &tags),
            )
            .await?;
        Ok(found
            .into_iter()
            .filter(|g| ext.name().is_none_or(|id| g.security_group_id == id))
            .min_by(|a, b| a.security_group_id.cmp(&b.security_group_id)))
    }

    async fn rules(&self, id: &str, direction: Direction) -> Result<Vec<HeldRule>, ReconcileError> {
        let attribute = self
            .call(
                "DescribeSecurityGroupAttribute",
                self.region.ecs.describe_security_group_rules(id, direction),
            )
            .await?;
        Ok(attribute
            .permissions
            .items
            .iter()
            .filter(|p| p.direction.is_empty() || p.direction == direction.as_str())
            .map(|p| HeldRule::new(p, direction))
            .collect())
    }

    async fn plans(
        &self,
        id: &str,
        p: &SecurityGroupParameters,
    ) -> Result<Vec<(Direction, RulePlan, usize)>, ReconcileError> {
        let mut plans = Vec::new();
        for direction in DIRECTIONS {
            let actual = self.rules(id, direction).await?;
            let policy = p.rules_policy.unwrap_or_default();
            let plan = RulePlan::new(&desired(p, direction), &actual, policy);
            plans.push((direction, plan, actual.len()));
        }
        Ok(plans)
    }
}

impl ExternalClient<SecurityGroup> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// The cloud assigns security group IDs: a named one that is not found is never created again.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(
        &self,
        mr: &SecurityGroup,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        let Some(group) = self.find_group(ext).await? else {
            return Ok(Observation::missing());
        };
        let id = group.security_group_id.as_str();
        let plans = self.plans(id, &mr.spec.for_provider).await?;
        let count = |d: Direction| {
            plans
                .iter()
                .find(|(direction, _, _)| *direction == d)
                .and_then(|(_, _, n)| i32::try_from(*n).ok())
        };
        let status = serde_json::json!({
            "atProvider": SecurityGroupObservation {
                security_group_id: Some(id.to_owned()),
                vpc_id: (!group.vpc_id.is_empty()).then(|| group.vpc_id.clone()),
                ingress_rule_count: count(Direction::Ingress),
                egress_rule_count: count(Direction::Egress),
            }
        });
        let mut observation = Observation::found(id)
            .with_owner_tag(group.tag(UID_TAG))
            .with_status(status)?
            .with_late_init(serde_json::json!({
                "vpcId": (!group.vpc_id.is_empty()).then(|| group.vpc_id.clone()),
            }))?
            .with_connection_details(
                ConnectionDetails::new().with(CONN_SECURITY_GROUP_ID, id.as_bytes()),
            );
        let mut drift: Vec<String> = plans
            .iter()
            .filter(|(_, plan, _)| !plan.is_empty())
            .map(|(direction, plan, _)| plan.describe(*direction))
            .collect();
        drift.extend(attribute_diff(&mr.spec.for_provider, &group).lines);
        if let Some(want) = policy_tag_drift(&mr.spec.for_provider, &group) {
            drift.push(format!("tag {RULES_POLICY_TAG}: {want}"));
        }
        if !drift.is_empty() {
            observation = observation.with_diff(drift.join("; "));
        }
        Ok(observation)
    }

    async fn create(
        &self,
        mr: &SecurityGroup,
        key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        let p = &mr.spec.for_provider;
        let Some(vpc_id) = p.vpc_id.clone() else {
            return Err(ReconcileError::dependency(
                REFERENCE_NOT_RESOLVED,
                "the VPC is not known yet: set spec.forProvider.vpcId, vpcIdRef or vpcIdSelector",
            ));
        };
        let request = CreateSecurityGroupRequest {
            vpc_id: Some(vpc_id),
            security_group_name: p.security_group_name.clone(),
            description: p.description.clone(),
            tags: {
                let mut tags = uid_tagged(p.tags.as_ref(), key.uid(), |k, v| Tag::new(k, v));
                let policy = p.rules_policy.unwrap_or_default().as_str();
                tags.push(Tag::new(RULES_POLICY_TAG, policy));
                tags
            },
            client_token: Some(key.token().to_owned()),
        };
        let created = self
            .call(
                "CreateSecurityGroup",
                self.region.ecs.create_security_group(&request),
            )
            .await?;
        // The rules follow in the first update, once observe sees the group.
        Ok(
            Creation::new(&created.security_group_id).with_connection_details(
                ConnectionDetails::new()
                    .with(CONN_SECURITY_GROUP_ID, created.security_group_id.as_bytes()),
            ),
        )
    }

    async fn update(
        &self,
        mr: &SecurityGroup,
        ext: &ExternalRef,
    ) -> Result<Update, ReconcileError> {
        let id = ext.name().unwrap_or_default();
        if let Some(group) = self.find_group(ext).await? {
            let diff = attribute_diff(&mr.spec.for_provider, &group);
            if diff.has_attributes() {
                self.call(
                    "ModifySecurityGroupAttribute",
                    self.region.ecs.modify_security_group_attribute(
                        id,
                        diff.name.as_deref(),
                        diff.description.as_deref(),
                    ),
                )
                .await?;
            }
            let mut tags: Vec<Tag> = diff.set.iter().map(|(k, v)| Tag::new(k, v)).collect();
            if let Some(policy) = policy_tag_drift(&mr.spec.for_provider, &group) {
                tags.push(Tag::new(RULES_POLICY_TAG, policy));
            }
            if !tags.is_empty() {
                self.call(
                    "TagResources",
                    self.region.ecs.tag_security_group(id, &tags),
                )
                .await?;
            }
            if !diff.remove.is_empty() {
                self.call(
                    "UntagResources",
                    self.region.ecs.untag_security_group(id, &diff.remove),
                )
                .await?;
            }
        }
        for (direction, plan, _) in self.plans(id, &mr.spec.for_provider).await? {
            // Revoke first: a rule whose priority or policy changed is one revoke and one
            // authorize, and the group's rule quota counts both while both exist. By rule ID:
            // a rule's peer may be one the spec cannot name (a group, an IPv6 block).
            if !plan.revoke.is_empty() {
                self.call(
                    "RevokeSecurityGroup",
                    self.region
                        .ecs
                        .revoke_security_group_rules(id, direction, &plan.revoke_ids()),
                )
                .await?;
            }
            if !plan.authorize.is_empty() {
                self.call(
                    "AuthorizeSecurityGroup",
                    self.region
                        .ecs
                        .authorize_security_group(id, direction, &plan.authorize),
                )
                .await?;
            }
        }
        Ok(Update::done())
    }

    async fn claim(&self, _mr: &SecurityGroup, ext: &ExternalRef) -> Result<(), ReconcileError> {
        let id = ext.name().unwrap_or_default();
        self.call(
            "TagResources",
            self.region
                .ecs
                .tag_security_group(id, &[Tag::new(UID_TAG, &ext.uid)]),
        )
        .await
    }

    async fn delete(
        &self,
        _mr: &SecurityGroup,
        ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        let Some(id) = ext.name() else {
            return Ok(Deletion::Gone);
        };
        match self
            .raw(
                "DeleteSecurityGroup",
                self.region.ecs.delete_security_group(id),
            )
            .await
        {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if e.is_not_found() => Ok(Deletion::Gone),
            Err(e) if e.is_dependency_violation() => Ok(Deletion::Waiting(format!(
                "security group {id} is still used by instances or referenced by other groups ({}); it is deleted once they are gone",
                e.code().unwrap_or_default()
            ))),
            Err(e) => Err(self.error(&e)),
        }
    }
}
