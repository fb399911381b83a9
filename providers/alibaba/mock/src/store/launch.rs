//! RunInstances in the store: a resolved launch becomes instances (addresses, IPv6, disks,
//! deployment set and key pair checked), once per ClientToken.

use std::collections::BTreeSet;
use std::net::Ipv6Addr;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

use super::{Store, TokenKey, TokenRecord, addresses};
use crate::deployment_sets;
use crate::error::ErrorResponse;
use crate::idempotency::{fingerprint, idempotent_mismatch};
use crate::ids::short_random_id;
use crate::instance::{Lifecycle, Phase, Renewal, StoredInstance};
use crate::launch::ResolvedLaunch;
use crate::launch_spec::LaunchSpec;
use crate::visibility::after_lag;

impl Store {
    /// Creates `amount` instances (or returns the earlier ones for a repeated ClientToken).
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &mut self,
        account_id: &Arc<str>,
        spec: &LaunchSpec,
        amount: usize,
        now: Timestamp,
        delay: Duration,
        quota: Option<usize>,
    ) -> Result<Vec<String>, ErrorResponse> {
        let resolved = spec.resolve(self.network.account(account_id), now)?;
        // The instance's disks join its group (checked against the account's by `resolve`).
        let disk_group = crate::resource_groups::resolve(Some(&resolved.resource_group_id))?;
        self.check_key_pair(account_id, resolved.region.id, resolved.image, spec)?;
        let token_key = spec.client_token.as_ref().map(|token| TokenKey {
            account_id: account_id.clone(),
            region_id: spec.region_id.clone(),
            action: "RunInstances",
            token: token.clone(),
        });
        let print = fingerprint(&(spec, amount));
        if let Some(record) = token_key.as_ref().and_then(|key| self.tokens.get(key)) {
            return if record.fingerprint == print {
                Ok(record.instance_ids.clone())
            } else {
                Err(idempotent_mismatch())
            };
        }
        let live = self.live_per_account.get(account_id).copied().unwrap_or(0);
        if let Some(limit) = quota
            && live + amount > limit
        {
            return Err(ErrorResponse::forbidden(
                "QuotaExceed.ElasticQuota",
                format!(
                    "The number of instances would exceed the quota of this account ({limit}); {live} exist. Release instances or ask for a higher quota."
                ),
            ));
        }
        self.stock.check(
            &resolved.placement.zone_id,
            resolved.instance_type.id,
            amount,
        )?;
        let mut held = self.private_ips(
            account_id,
            resolved.region.id,
            &resolved.placement.vswitch_id,
        );
        let asked = spec
            .private_ip_address
            .as_deref()
            .map(|text| {
                let ip = crate::private_ip::parse(text)?;
                crate::private_ip::check(
                    ip,
                    resolved.placement.vswitch_cidr,
                    &held,
                    crate::private_ip::Asked::AtLaunch,
                )
            })
            .transpose()?;
        if let Some(set) = spec.deployment_set_id.as_deref() {
            if !deployment_sets::exists(resolved.region.id, set) {
                return Err(deployment_sets::not_found());
            }
            let members = self.deployment_set_members(account_id, resolved.region.id, set);
            if members + amount > deployment_sets::INSTANCES_PER_SET {
                return Err(deployment_sets::full());
            }
        }
        let ipv6_block = self.ipv6_at_launch(account_id, &resolved, spec)?;
        if asked.is_some() && amount > 1 {
            // Every instance after the first would hold the same address.
            return Err(crate::private_ip::duplicated());
        }
        self.stock.take(
            &resolved.placement.zone_id,
            resolved.instance_type.id,
            amount,
        );
        let scope = (account_id.clone(), resolved.region.id);
        let mut ids = Vec::with_capacity(amount);
        for _ in 0..amount {
            let mut id = short_random_id("i");
            while self.instances.contains_key(&id) {
                id = short_random_id("i");
            }
            let seq = self.next_seq;
            self.next_seq += 1;
            let (start, public_ip) = addresses(seq, resolved.placement.vswitch_cidr);
            let private_ip = match asked {
                Some(ip) => ip,
                // The mock never runs a vSwitch out of addresses (its scale tests hold more
                // instances than a block has; ECS would answer InvalidVSwitchId.IpNotEnough):
                // once every usable address is held, the sequence's address is reused.
                None if crate::private_ip::exhausted(resolved.placement.vswitch_cidr, &held) => {
                    start
                }
                None => crate::private_ip::allocate(resolved.placement.vswitch_cidr, start, &held)?,
            };
            held.insert(private_ip);
            let ipv6_addresses = match (ipv6_block, spec.ipv6_address_count) {
                (Some(block), Some(n)) => {
                    let taken = self.ipv6_held(account_id, &resolved);
                    crate::ipv6::allocate(block, &taken, n)
                }
                _ => Vec::new(),
            };
            let instance = StoredInstance {
                id: id.clone(),
                seq,
                account_id: account_id.clone(),
                region_id: resolved.region.id,
                zone_id: resolved.placement.zone_id.clone(),
                name: spec.instance_name.clone().unwrap_or_else(|| id.clone()),
                description: spec.description.clone().unwrap_or_default(),
                host_name: spec
                    .host_name
                    .clone()
                    .unwrap_or_else(|| format!("iZ{}Z", &id[2..])),
                instance_type: resolved.instance_type,
                image: resolved.image,
                charge_type: resolved.charge_type,
                expires_at: resolved.subscription.map(|s| s.expiry(now)),
                recycling: false,
                spot_strategy: resolved.spot_strategy,
                internet_charge_type: resolved.internet_charge_type,
                bandwidth_out: spec.internet_max_bandwidth_out,
                vpc_id: resolved.placement.vpc_id.clone(),
                vswitch_id: resolved.placement.vswitch_id.clone(),
                private_ip,
                public_ip: (spec.internet_max_bandwidth_out > 0).then_some(public_ip),
                security_group_ids: spec.security_group_ids.clone(),
                tags: spec.tags.clone(),
                deletion_protection: spec.deletion_protection,
                key_pair_name: spec.key_pair_name.clone().unwrap_or_default(),
                user_data: spec.user_data.clone(),
                password: crate::password::InstancePassword::at_launch(
                    spec.password_digest.clone(),
                ),
                created_at: now,
                visible_from: after_lag(now, self.visibility_lag),
                lifecycle: Lifecycle::new(Phase::Created, now, delay),
                stopped_mode: "KeepCharging",
                client_token: spec.client_token.clone(),
                ram_role_name: spec.ram_role_name.clone(),
                metadata: resolved.metadata,
                resource_group_id: resolved.resource_group_id.clone(),
                spot: resolved.spot,
                credit_specification: resolved.credit_specification,
                ipv6_addresses,
                deployment_set_id: spec.deployment_set_id.clone(),
                renewal: resolved.subscription.map(|s| Renewal {
                    auto_renew: s.auto_renew,
                    duration: s.auto_renew_period,
                    unit: match s.unit {
                        crate::subscription::PeriodUnit::Month => "Month",
                        crate::subscription::PeriodUnit::Week => "Week",
                    },
                }),
            };
            self.by_scope
                .entry(scope.clone())
                .or_default()
                .insert(seq, id.clone());
            for tag in &instance.tags {
                self.by_tag
                    .entry(tag.clone())
                    .or_default()
                    .insert(id.clone());
            }
            self.instances.insert(id.clone(), instance);
            self.disks.create_for_instance(
                (account_id, resolved.region.id),
                (&id, disk_group),
                resolved.image.id,
                &resolved.system_disk,
                &resolved.data_disks,
                now,
            );
            ids.push(id);
        }
        *self.live_per_account.entry(account_id.clone()).or_default() += amount;
        self.created_total += amount as u64;
        if let Some(key) = token_key {
            self.tokens.insert(
                key,
                TokenRecord {
                    fingerprint: print,
                    instance_ids: ids.clone(),
                },
            );
        }
        Ok(ids)
    }

    /// RunInstances' `Ipv6AddressCount` rules (those of AssignIpv6Addresses): the vSwitch has
    /// IPv6 turned on and the type's interface holds that many. The vSwitch's `/64` when
    /// addresses are asked for.
    fn ipv6_at_launch(
        &mut self,
        account_id: &Arc<str>,
        resolved: &ResolvedLaunch,
        spec: &LaunchSpec,
    ) -> Result<Option<u128>, ErrorResponse> {
        let Some(count) = spec.ipv6_address_count.filter(|n| *n > 0) else {
            return Ok(None);
        };
        let vswitch_id = &resolved.placement.vswitch_id;
        let block = self
            .network
            .account(account_id)
            .vswitch(resolved.region.id, vswitch_id)?
            .ipv6_block
            .ok_or_else(|| crate::ipv6::not_turned_on(vswitch_id))?;
        let limit = crate::ipv6::limit_for(resolved.instance_type.cpu);
        if count > limit {
            return Err(ErrorResponse::forbidden(
                "InvalidOperation.Ipv6CountExceeded",
                format!(
                    "The number of ipv6 address exceeds the limit({limit}). target instanceType {}. Expecting assign:{count}.",
                    resolved.instance_type.id
                ),
            ));
        }
        Ok(Some(block))
    }

    /// The IPv6 addresses held in the launch's vSwitch.
    fn ipv6_held(&self, account_id: &Arc<str>, resolved: &ResolvedLaunch) -> BTreeSet<Ipv6Addr> {
        self.in_region(account_id, resolved.region.id)
            .filter(|i| i.vswitch_id == resolved.placement.vswitch_id)
            .flat_map(|i| i.ipv6_addresses.iter().copied())
            .collect()
    }

    /// RunInstances' key-pair rules: `KeyPairName` must name a key pair of the account in the
    /// region, and Windows instances take none.
    pub fn check_key_pair(
        &self,
        account_id: &Arc<str>,
        region_id: &'static str,
        image: &crate::catalog::Image,
        spec: &LaunchSpec,
    ) -> Result<(), ErrorResponse> {
        let Some(name) = spec.key_pair_name.as_deref().filter(|n| !n.is_empty()) else {
            return Ok(());
        };
        if image.os_type == "windows" {
            return Err(ErrorResponse::forbidden(
                "DependencyViolation.WindowsInstance",
                "The instance creating is windows, cannot use ssh key pair to login",
            ));
        }
        if self.key_pairs.get(account_id, region_id, name).is_none() {
            return Err(crate::key_pairs::not_found(404, name));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::listing::{Filters, Paging};
    use super::super::tests::{now, spec};
    use super::*;

    #[test]
    fn launch_describe_and_tokens() {
        let mut store = Store::default();
        let acct: Arc<str> = Arc::from("1");
        let s = LaunchSpec {
            client_token: Some("tok".into()),
            ..spec()
        };
        let ids = store
            .launch(&acct, &s, 3, now(), Duration::ZERO, None)
            .unwrap();
        assert_eq!(ids.len(), 3);
        assert_eq!(
            store
                .launch(&acct, &s, 3, now(), Duration::ZERO, None)
                .unwrap(),
            ids
        );
        assert_eq!(
            store
                .launch(&acct, &s, 2, now(), Duration::ZERO, None)
                .unwrap_err()
                .code,
            "IdempotentParameterMismatch"
        );
        assert_eq!(store.created_total(), 3);
        let page = store.describe(
            &acct,
            "cn-hangzhou",
            &Filters::default(),
            Paging::Token {
                after: None,
                max: 2,
            },
            now(),
        );
        assert_eq!((page.total, page.instances.len()), (3, 2));
        let rest = store.describe(
            &acct,
            "cn-hangzhou",
            &Filters::default(),
            Paging::Token {
                after: page.next,
                max: 2,
            },
            now(),
        );
        assert_eq!((rest.instances.len(), rest.next), (1, None));
        let other: Arc<str> = Arc::from("2");
        assert_eq!(
            store
                .describe(
                    &other,
                    "cn-hangzhou",
                    &Filters::default(),
                    Paging::Pages {
                        number: 1,
                        size: 10
                    },
                    now()
                )
                .total,
            0
        );
        assert!(store.find("2", None, &ids[0]).is_err());
    }
}
