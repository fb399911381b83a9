//! An instance's lifecycle in the store: start, stop and reboot with ECS's status rules, and
//! release (all or none, with `Force`, `TerminateSubscription` and ClientToken idempotency).

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

use super::{Store, TokenKey, TokenRecord};
use crate::error::ErrorResponse;
use crate::idempotency::{fingerprint, idempotent_mismatch};
use crate::instance::{Lifecycle, Phase, Status, StoredInstance};

/// How DeleteInstance(s) was asked to release: `Force` and `TerminateSubscription`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Release {
    pub force: bool,
    pub terminate_subscription: bool,
}

#[cfg(test)]
impl Release {
    /// `Force` only.
    pub fn forced(force: bool) -> Self {
        Self {
            force,
            terminate_subscription: false,
        }
    }
}

impl Store {
    /// Starts a Stopped instance.
    pub fn start(
        &mut self,
        account_id: &str,
        id: &str,
        now: Timestamp,
        delay: Duration,
    ) -> Result<(), ErrorResponse> {
        let ip_seq = self.next_seq;
        let i = self.find_mut(account_id, None, id)?;
        if i.status(now) != Status::Stopped {
            return Err(ErrorResponse::incorrect_status());
        }
        i.lifecycle = Lifecycle::new(Phase::Started, now, delay);
        i.password.on_start();
        // Stopped without charging, it lost its public IP: it gets a new one.
        let new_ip = i.bandwidth_out > 0 && i.public_ip.is_none();
        if new_ip {
            i.public_ip = Some(Store::public_ip(ip_seq));
        }
        i.stopped_mode = "KeepCharging";
        if new_ip {
            self.next_seq += 1;
        }
        Ok(())
    }

    /// Stops a Running instance.
    pub fn stop(
        &mut self,
        account_id: &str,
        id: &str,
        stop_charging: bool,
        now: Timestamp,
        delay: Duration,
    ) -> Result<(), ErrorResponse> {
        let i = self.find_mut(account_id, None, id)?;
        if i.status(now) != Status::Running {
            return Err(ErrorResponse::incorrect_status());
        }
        i.lifecycle = Lifecycle::new(Phase::Stopped, now, delay);
        // Economical mode applies to pay-as-you-go instances only; a subscription keeps charging.
        let stop_charging = stop_charging && i.expires_at.is_none();
        i.stopped_mode = if stop_charging {
            "StopCharging"
        } else {
            "KeepCharging"
        };
        if stop_charging {
            // Its vCPUs and memory are released with its public IP.
            i.public_ip = None;
        }
        Ok(())
    }

    /// Reboots a Running instance.
    pub fn reboot(
        &mut self,
        account_id: &str,
        id: &str,
        now: Timestamp,
        delay: Duration,
    ) -> Result<(), ErrorResponse> {
        let i = self.find_mut(account_id, None, id)?;
        if i.status(now) != Status::Running {
            return Err(ErrorResponse::incorrect_status());
        }
        i.lifecycle = Lifecycle::new(Phase::Started, now, delay);
        i.password.on_start();
        Ok(())
    }

    /// Checks that an instance may be released now: not protected, pay-as-you-go or an expired
    /// subscription released with `TerminateSubscription`, and Stopped (or Running with
    /// `Force`).
    fn check_deletable(
        i: &StoredInstance,
        release: Release,
        now: Timestamp,
    ) -> Result<(), ErrorResponse> {
        if i.deletion_protection {
            return Err(ErrorResponse::forbidden(
                "InvalidOperation.DeletionProtection",
                "The instance is protected from deletion; turn DeletionProtection off with ModifyInstanceAttribute first.",
            ));
        }
        if i.expires_at.is_some()
            && (i.unexpired_subscription(now) || !release.terminate_subscription)
        {
            return Err(ErrorResponse::charge_type_violation());
        }
        match (i.status(now), release.force) {
            (Status::Stopped, _) | (Status::Running, true) => Ok(()),
            // Right after RunInstances, ECS refuses a release with this code.
            (Status::Pending, _) => Err(ErrorResponse::initializing()),
            _ => Err(ErrorResponse::incorrect_status()),
        }
    }

    /// Takes an instance out of the store as a release does: its disks and EIP follow it, and
    /// listings keep it during the visibility lag.
    fn remove_instance(&mut self, id: &str, now: Timestamp) {
        if let Some(instance) = self.instances.remove(id) {
            self.disks.release_instance(id, now);
            self.eips.instance_released(id);
            // The primary network interface goes with the instance (DeleteOnRelease); an EIP
            // associated with it stays, unassociated.
            self.eips
                .instance_released(&crate::instance_view::eni_id(id));
            if !self.visibility_lag.is_zero() {
                self.releasing
                    .push(instance.clone(), now, self.visibility_lag);
            }
            if let Some(scope) = self
                .by_scope
                .get_mut(&(instance.account_id.clone(), instance.region_id))
            {
                scope.remove(&instance.seq);
            }
            if let Some(live) = self.live_per_account.get_mut(&instance.account_id) {
                *live = live.saturating_sub(1);
            }
        }
    }

    /// Starts reclaiming a spot instance as ECS does when the market price or capacity takes it
    /// back: the instance is locked (`OperationLocks` lists `Recycling`) until
    /// [`Self::release_reclaimed`]. Only a spot instance can be reclaimed.
    pub fn mark_recycling(&mut self, id: &str) -> Result<(), String> {
        let instance = self
            .instances
            .get_mut(id)
            .ok_or_else(|| format!("no live instance {id}"))?;
        if instance.spot_strategy == "NoSpot" {
            return Err(format!(
                "{id} is not a spot instance (SpotStrategy NoSpot): ECS reclaims only spot instances"
            ));
        }
        instance.recycling = true;
        Ok(())
    }

    /// Releases a reclaimed spot instance (the end of [`Self::mark_recycling`]).
    pub fn release_reclaimed(&mut self, id: &str, now: Timestamp) {
        if self.instances.get(id).is_some_and(|i| i.recycling) {
            self.remove_instance(id, now);
        }
    }

    /// Releases instances, all or none. With a ClientToken, repeating the same call succeeds.
    pub fn delete(
        &mut self,
        account_id: &Arc<str>,
        region_id: Option<&str>,
        ids: &[String],
        release: Release,
        client_token: Option<&str>,
        now: Timestamp,
    ) -> Result<(), ErrorResponse> {
        let token_key = client_token.map(|token| TokenKey {
            account_id: account_id.clone(),
            region_id: region_id.unwrap_or_default().to_owned(),
            action: "DeleteInstances",
            token: token.to_owned(),
        });
        let print = fingerprint(&(ids, release));
        if let Some(record) = token_key.as_ref().and_then(|k| self.tokens.get(k)) {
            return if record.fingerprint == print {
                Ok(())
            } else {
                Err(idempotent_mismatch())
            };
        }
        for id in ids {
            Self::check_deletable(self.find(account_id, region_id, id)?, release, now)?;
        }
        for id in ids {
            self.remove_instance(id, now);
        }
        if let Some(key) = token_key {
            self.tokens.insert(
                key,
                TokenRecord {
                    fingerprint: print,
                    instance_ids: ids.to_vec(),
                },
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{now, spec};
    use super::*;
    use crate::launch_spec::LaunchSpec;

    #[test]
    fn quota_and_delete_rules() {
        let mut store = Store::default();
        let acct: Arc<str> = Arc::from("1");
        let ids = store
            .launch(
                &acct,
                &LaunchSpec {
                    deletion_protection: true,
                    ..spec()
                },
                2,
                now(),
                Duration::ZERO,
                Some(2),
            )
            .unwrap();
        assert_eq!(
            store
                .launch(&acct, &spec(), 1, now(), Duration::ZERO, Some(2))
                .unwrap_err()
                .code,
            "QuotaExceed.ElasticQuota"
        );
        assert_eq!(
            store
                .delete(&acct, None, &ids, Release::forced(true), None, now())
                .unwrap_err()
                .code,
            "InvalidOperation.DeletionProtection"
        );
        store
            .find_mut("1", None, &ids[0])
            .unwrap()
            .deletion_protection = false;
        assert_eq!(
            store
                .delete(&acct, None, &ids[..1], Release::forced(false), None, now())
                .unwrap_err()
                .code,
            "IncorrectInstanceStatus"
        );
        store
            .delete(&acct, None, &ids[..1], Release::forced(true), None, now())
            .unwrap();
        assert_eq!(store.live(), 1);
        assert!(
            store
                .launch(&acct, &spec(), 1, now(), Duration::ZERO, Some(2))
                .is_ok()
        );
    }

    #[test]
    fn no_release_while_starting_or_stopping() {
        let mut store = Store::default();
        let acct: Arc<str> = Arc::from("1");
        let t0 = now();
        let delay = Duration::from_secs(10);
        let at = |secs: i64| {
            t0.checked_add(jiff::SignedDuration::from_secs(secs))
                .unwrap()
        };
        let ids = store.launch(&acct, &spec(), 1, t0, delay, None).unwrap();
        let code = |store: &mut Store, force: bool, t: Timestamp| {
            store
                .delete(&acct, None, &ids, Release::forced(force), None, t)
                .unwrap_err()
                .code
        };
        assert_eq!(
            code(&mut store, true, at(5)),
            "IncorrectInstanceStatus.Initializing"
        );
        assert_eq!(code(&mut store, true, at(15)), "IncorrectInstanceStatus");
        assert_eq!(code(&mut store, false, at(25)), "IncorrectInstanceStatus");
        store.stop("1", &ids[0], false, at(25), delay).unwrap();
        assert_eq!(code(&mut store, true, at(30)), "IncorrectInstanceStatus");
        store
            .delete(&acct, None, &ids, Release::forced(false), None, at(40))
            .unwrap();
    }
}
