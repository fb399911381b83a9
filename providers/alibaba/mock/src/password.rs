//! An instance's logon password as the mock keeps it: a digest only, never the password, and
//! ECS's rule that a password set on an existing instance takes effect at its next start
//! (`StartInstance` or `RebootInstance`; a restart from inside the OS does not count).

use std::fmt::Write as _;

/// The SHA-256 of a password (hex), under a prefix of the mock's own so that the digest is no
/// plain hash of the password. Tests compare it with the digest of the password they expect.
pub fn password_digest(password: &str) -> String {
    let mut input = b"alibaba-mock instance password\0".to_vec();
    input.extend_from_slice(password.as_bytes());
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &input);
    digest.as_ref().iter().fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

/// The password an instance boots with, and the one it will boot with next.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstancePassword {
    /// What the running OS accepts (`None`: no password was ever set; key pair logon only).
    pub active: Option<String>,
    /// Set by `ModifyInstanceAttribute` and not yet in effect.
    pub pending: Option<String>,
}

impl InstancePassword {
    /// The password given at launch, in effect at once.
    pub fn at_launch(digest: Option<String>) -> Self {
        Self {
            active: digest,
            pending: None,
        }
    }

    /// A new password, in effect from the next start.
    pub fn set(&mut self, digest: String) {
        self.pending = Some(digest);
    }

    /// The instance (re)starts: a pending password takes effect.
    pub fn on_start(&mut self) {
        if let Some(next) = self.pending.take() {
            self.active = Some(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_password_takes_effect_at_the_next_start_only() {
        let mut p = InstancePassword::at_launch(Some(password_digest("Launch1!")));
        p.set(password_digest("Second2@"));
        assert_eq!(p.active, Some(password_digest("Launch1!")));
        p.on_start();
        assert_eq!(p.active, Some(password_digest("Second2@")));
        assert_eq!(p.pending, None);
        p.on_start();
        assert_eq!(p.active, Some(password_digest("Second2@")));
    }

    #[test]
    fn the_digest_is_neither_the_password_nor_stable_across_passwords() {
        let d = password_digest("Launch1!");
        assert_eq!(d.len(), 64);
        assert!(!d.contains("Launch1!"));
        assert_ne!(d, password_digest("Launch1?"));
    }
}
