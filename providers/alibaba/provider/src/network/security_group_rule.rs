//! The `SecurityGroupRule` kind's external client. ECS's Authorize answers no rule ID, and an
//! identical rule authorized again adds nothing, so a rule is authorized with the description
//! `ferroplane:<uid>` (`rule_spec::marker`), found in `DescribeSecurityGroupAttribute` by it,
//! and named by its `SecurityGroupRuleId`; only then does the user's description replace the
//! marker (`ModifySecurityGroupRule` / `ModifySecurityGroupEgressRule`, with policy and
//! priority). A crash before the ID is stored ends in adoption by the marker. An identical rule
//! this object did not authorize is never taken (`RuleExists`), a group whose SecurityGroup
//! object keeps its rules Exclusive is refused (`RulesPolicyExclusive`), a rule revoked
//! elsewhere is authorized again, and deleting revokes by the ID.

use alibaba_sdk::ecs::{Direction, PeerRule, Permission, SecurityGroup as Group};
use ferroplane_apis::alibabacloud::{RulesPolicy, SecurityGroupRule, SecurityGroupRuleObservation};
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, RetryClass, Update,
};

use super::rule_spec::{self, Found, marked_uid, wanted};
use crate::cloud_connector::CloudClients;
use crate::cloud_fields::RULES_POLICY_TAG;
use crate::reasons::{RULE_EXISTS, RULES_POLICY_EXCLUSIVE};

fn details(group: &str, id: &str) -> ConnectionDetails {
    ConnectionDetails::new()
        .with("securityGroupRuleId", id.as_bytes())
        .with("securityGroupId", group.as_bytes())
}

fn rule_exists(group: &str, want: &PeerRule, other: &Permission) -> ReconcileError {
    ReconcileError::new(
        RULE_EXISTS,
        format!(
            "security group {group} already has the rule {} ({}, description {:?}), which ferroplane did not authorize for this object; it is never adopted, since deleting this object would revoke it. Change this rule, revoke the other, or import it by setting ferroplane.io/external-name to {}",
            other.security_group_rule_id,
            rule_spec::show(want),
            other.description,
            other.security_group_rule_id
        ),
        RetryClass::Backoff,
    )
}

/// Refuses a group whose SecurityGroup object revokes every rule it does not list.
fn refuse_exclusive(group: &Group) -> Result<(), ReconcileError> {
    if group.tag(RULES_POLICY_TAG) != Some(RulesPolicy::Exclusive.as_str()) {
        return Ok(());
    }
    Err(ReconcileError::new(
        RULES_POLICY_EXCLUSIVE,
        format!(
            "security group {} is kept with rulesPolicy Exclusive by its SecurityGroup object (tag {RULES_POLICY_TAG}), which would revoke this rule: set rulesPolicy: Additive on that SecurityGroup (or, if no object manages the group any more, remove the tag)",
            group.security_group_id
        ),
        RetryClass::Backoff,
    ))
}

/// Whether this object saw `id` as its rule before (its status says so): a rule it authorized
/// and someone revoked, as opposed to an ID a person imported that never existed.
fn observed_before(mr: &SecurityGroupRule, id: &str) -> bool {
    mr.status
        .as_ref()
        .and_then(|s| s.at_provider.as_ref()?.security_group_rule_id.as_deref())
        == Some(id)
}

fn observation(
    group: &str,
    rule: &Permission,
    want: &PeerRule,
) -> Result<Observation, ReconcileError> {
    let id = rule.security_group_rule_id.as_str();
    let status = serde_json::json!({
        "atProvider": SecurityGroupRuleObservation {
            security_group_rule_id: Some(id.to_owned()),
            security_group_id: Some(group.to_owned()),
            policy: Some(rule.policy.clone()),
            priority: Some(rule.priority),
            description: Some(rule.description.clone()),
        }
    });
    let mut observation = Observation::found(id)
        .with_status(status)?
        .with_readiness(Readiness::Available)
        .with_connection_details(details(group, id));
    // A marker names the object the rule was authorized for: another live one keeps it.
    if let Some(uid) = marked_uid(&rule.description) {
        observation = observation.with_owner_tag(Some(uid));
    }
    if let Some(change) = rule_spec::change(want, rule) {
        observation = observation.with_diff(rule_spec::describe(&change, rule));
    }
    Ok(observation)
}

impl CloudClients {
    async fn rule_group(&self, id: &str) -> Result<Option<Group>, ReconcileError> {
        let found = self
            .call(
                "DescribeSecurityGroups",
                self.region
                    .ecs
                    .describe_security_groups(&[id.to_owned()], &[]),
            )
            .await?;
        Ok(found.into_iter().find(|g| g.security_group_id == id))
    }

    /// The group's rules of `direction`; `None` when the group is gone.
    async fn group_rules(
        &self,
        group: &str,
        direction: Direction,
    ) -> Result<Option<Vec<Permission>>, ReconcileError> {
        match self
            .raw(
                "DescribeSecurityGroupAttribute",
                self.region
                    .ecs
                    .describe_security_group_rules(group, direction),
            )
            .await
        {
            Ok(found) => Ok(Some(
                found
                    .permissions
                    .items
                    .into_iter()
                    .filter(|p| p.direction.is_empty() || p.direction == direction.as_str())
                    .collect(),
            )),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(self.error(&e)),
        }
    }

    /// Authorizes `want` (described with the marker) unless another owner's identical rule is
    /// there, and returns the ID it got, if it is listed already.
    async fn authorize(
        &self,
        group: &str,
        want: &PeerRule,
        uid: &str,
    ) -> Result<Option<String>, ReconcileError> {
        let rules = self
            .group_rules(group, want.direction)
            .await?
            .unwrap_or_default();
        if let Some(other) = rule_spec::taken(&rules, want, uid) {
            return Err(rule_exists(group, want, other));
        }
        let marked = PeerRule {
            description: rule_spec::marker(uid),
            ..want.clone()
        };
        self.call(
            "AuthorizeSecurityGroup",
            self.region.ecs.authorize_rule(group, &marked),
        )
        .await?;
        let rules = self
            .group_rules(group, want.direction)
            .await?
            .unwrap_or_default();
        match rule_spec::find(&rules, None, uid) {
            Found::ByMarker(rule) => Ok(Some(rule.security_group_rule_id.clone())),
            // Someone else's identical rule arrived first: ours was no new rule.
            _ => match rule_spec::taken(&rules, want, uid) {
                Some(other) => Err(rule_exists(group, want, other)),
                None => Ok(None),
            },
        }
    }
}

impl ExternalClient<SecurityGroupRule> for CloudClients {
    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    /// ECS assigns rule IDs: an imported ID that does not exist is never authorized anew.
    fn assigns_names(&self) -> bool {
        true
    }

    async fn observe(
        &self,
        mr: &SecurityGroupRule,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        let deleting = mr.metadata.deletion_timestamp.is_some();
        let (group_id, want) = match wanted(mr, &ext.uid) {
            Ok(wanted) => wanted,
            Err(_) if deleting && ext.name().is_none() => return Ok(Observation::missing()),
            Err(e) => return Err(e),
        };
        let Some(group) = self.rule_group(&group_id).await? else {
            return Ok(Observation::missing());
        };
        if !deleting {
            refuse_exclusive(&group)?;
        }
        let Some(rules) = self.group_rules(&group_id, want.direction).await? else {
            return Ok(Observation::missing());
        };
        match rule_spec::find(&rules, ext.name(), &ext.uid) {
            Found::ById(rule) | Found::ByMarker(rule) => observation(&group_id, rule, &want),
            Found::None => match ext.name() {
                // Revoked behind this object's back: authorized again by the update.
                Some(id) if !deleting && observed_before(mr, id) => Ok(Observation::found(id)
                    .with_readiness(Readiness::Unavailable(format!(
                        "rule {id} is not in security group {group_id}"
                    )))
                    .with_diff(format!(
                        "rule {id} was revoked outside ferroplane: it is authorized again"
                    ))),
                _ => Ok(Observation::missing()),
            },
        }
    }

    async fn create(
        &self,
        mr: &SecurityGroupRule,
        key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        let (group, want) = wanted(mr, key.uid())?;
        match self.authorize(&group, &want, key.uid()).await? {
            Some(id) => Ok(Creation::new(&id).with_connection_details(details(&group, &id))),
            None => Err(ReconcileError::retryable(
                crate::reasons::INVALID_RESPONSE,
                format!(
                    "the rule was authorized in {group} but is not listed yet: nothing to do, it is found by its description marker"
                ),
            )),
        }
    }

    async fn update(
        &self,
        mr: &SecurityGroupRule,
        ext: &ExternalRef,
    ) -> Result<Update, ReconcileError> {
        let (group, want) = wanted(mr, &ext.uid)?;
        let rules = self
            .group_rules(&group, want.direction)
            .await?
            .unwrap_or_default();
        let rule = match rule_spec::find(&rules, ext.name(), &ext.uid) {
            Found::ById(rule) | Found::ByMarker(rule) => rule,
            Found::None => {
                // The next observe finds the new rule by its marker and records its ID.
                self.authorize(&group, &want, &ext.uid).await?;
                return Ok(Update::in_progress());
            }
        };
        if let Some(change) = rule_spec::change(&want, rule) {
            self.call(
                "ModifySecurityGroupRule",
                self.region.ecs.modify_rule(
                    &group,
                    want.direction,
                    &rule.security_group_rule_id,
                    &change,
                ),
            )
            .await?;
        }
        Ok(Update::done())
    }

    async fn delete(
        &self,
        mr: &SecurityGroupRule,
        ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        let (Some(id), Some(group)) = (
            ext.name(),
            mr.spec.for_provider.security_group_id.as_deref(),
        ) else {
            return Ok(Deletion::Gone);
        };
        let direction = rule_spec::direction(&mr.spec.for_provider);
        match self
            .raw(
                "RevokeSecurityGroup",
                self.region.ecs.revoke_rule(group, direction, id),
            )
            .await
        {
            Ok(()) => Ok(Deletion::InProgress),
            Err(e) if e.is_not_found() || e.is_rule_not_found() => Ok(Deletion::Gone),
            Err(e) => Err(self.error(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_sdk::ecs::TagList;

    fn group(policy: Option<&str>) -> Group {
        let tags: TagList = serde_json::from_value(match policy {
            Some(p) => serde_json::json!({"Tag": [{"TagKey": RULES_POLICY_TAG, "TagValue": p}]}),
            None => serde_json::json!({"Tag": []}),
        })
        .expect("a tag list");
        Group {
            security_group_id: "sg-1".into(),
            tags,
            ..Group::default()
        }
    }

    #[test]
    fn only_an_exclusive_group_is_refused() {
        assert_eq!(
            refuse_exclusive(&group(Some("Exclusive")))
                .unwrap_err()
                .reason(),
            RULES_POLICY_EXCLUSIVE
        );
        assert!(refuse_exclusive(&group(Some("Additive"))).is_ok());
        assert!(refuse_exclusive(&group(None)).is_ok());
    }
}
