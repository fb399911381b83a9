//! What ferroplane last applied of the inputs ECS never reports back — the login password and the
//! user data — so that a change to them can be detected and applied with a restart.
//!
//! Only SHA-256 digests are kept, in memory, per object UID. The first time an instance is seen
//! (after create, or after a process restart) the current inputs are taken as applied: a change
//! made while no ferroplane process was running is therefore only picked up by the next change.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// Digests of the restart-bound inputs of one instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct InputDigests {
    pub password: Option<[u8; 32]>,
    pub user_data: Option<[u8; 32]>,
}

impl InputDigests {
    /// Digests of the given values (`None`: not set).
    pub fn of(password: Option<&str>, user_data: Option<&str>) -> Self {
        Self {
            password: password.map(digest),
            user_data: user_data.map(digest),
        }
    }
}

fn digest(value: &str) -> [u8; 32] {
    Sha256::digest(value.as_bytes()).into()
}

/// Which inputs changed since they were last applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ChangedInputs {
    pub password: bool,
    pub user_data: bool,
}

/// The applied digests of every instance this process manages.
#[derive(Debug, Default)]
pub struct AppliedInputs {
    by_uid: Mutex<HashMap<String, InputDigests>>,
}

impl AppliedInputs {
    /// Compares `current` with what was applied; the first sighting records `current`.
    /// A removed password or user data is not a change: ECS keeps the old one and there is
    /// nothing to apply.
    pub fn changed(&self, uid: &str, current: InputDigests) -> ChangedInputs {
        let mut map = self.by_uid.lock().unwrap_or_else(|p| p.into_inner());
        let applied = *map.entry(uid.to_owned()).or_insert(current);
        ChangedInputs {
            password: current.password.is_some() && current.password != applied.password,
            user_data: current.user_data.is_some() && current.user_data != applied.user_data,
        }
    }

    /// Records inputs as applied.
    pub fn record(&self, uid: &str, applied: InputDigests) {
        self.by_uid
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(uid.to_owned(), applied);
    }

    /// Forgets an object (its instance is gone).
    pub fn forget(&self, uid: &str) {
        self.by_uid
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sighting_is_the_baseline_and_changes_are_detected() {
        let applied = AppliedInputs::default();
        let v1 = InputDigests::of(Some("Passw0rd!"), Some("#cloud-config"));
        assert_eq!(applied.changed("u", v1), ChangedInputs::default());
        let v2 = InputDigests::of(Some("N3wPassw0rd!"), Some("#cloud-config"));
        assert_eq!(
            applied.changed("u", v2),
            ChangedInputs {
                password: true,
                user_data: false
            }
        );
        applied.record("u", v2);
        assert_eq!(applied.changed("u", v2), ChangedInputs::default());
        let removed = InputDigests::of(None, None);
        assert_eq!(applied.changed("u", removed), ChangedInputs::default());
    }
}
