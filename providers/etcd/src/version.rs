//! Which etcd release a spec asks for (version, image), and which version changes are safe.
//!
//! etcd upgrades one minor version at a time: a 3.6 member cannot join a cluster whose data was
//! last written by 3.4, and downgrades are not supported by 3.4/3.5 at all. Those changes are
//! refused with an error the user sees in the `Synced` condition; the cluster keeps running the
//! version it has.

use std::fmt;

use ferroplane_apis::etcd::{DEFAULT_ETCD_VERSION, EtcdClusterSpec};

use crate::error::SpecError;

/// Repository of the official etcd images.
pub const DEFAULT_IMAGE_REPOSITORY: &str = "gcr.io/etcd-development/etcd";

/// An etcd version `major.minor.patch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// Parses `3.5.17` or `v3.5.17`; anything after the patch number (`-rc.1`, `-0`) is ignored.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.strip_prefix('v').unwrap_or(text);
        let mut parts = text.splitn(3, '.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch_text = parts.next()?;
        let digits = patch_text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(patch_text.len());
        let patch = patch_text[..digits].parse().ok()?;
        Some(Self {
            major,
            minor,
            patch,
        })
    }

    /// Whether the server has `/livez` and `/readyz` (3.4.29+, 3.5.11+, 3.6+); older ones only
    /// have `/health`, which fails without a leader.
    pub fn has_livez_readyz(self) -> bool {
        match (self.major, self.minor) {
            (3, 4) => self.patch >= 29,
            (3, 5) => self.patch >= 11,
            (3, m) => m > 5,
            (major, _) => major > 3,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The etcd release an EtcdCluster runs: its version and the image that provides it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub version: Version,
    pub image: String,
}

/// Resolves `spec.version` and `spec.image` into a release. The version comes from `version`,
/// else from the image's tag, else the default; the image defaults to the official one.
pub fn resolve(spec: &EtcdClusterSpec) -> Result<Release, SpecError> {
    let from_field = match &spec.version {
        Some(text) => {
            Some(Version::parse(text).ok_or_else(|| SpecError::BadVersion(text.clone()))?)
        }
        None => None,
    };
    let from_tag = spec
        .image
        .as_deref()
        .and_then(image_tag)
        .and_then(Version::parse);
    if let (Some(field), Some(tag)) = (from_field, from_tag)
        && field != tag
    {
        return Err(SpecError::VersionImageMismatch {
            version: field.to_string(),
            image: spec.image.clone().unwrap_or_default(),
        });
    }
    let version = match from_field.or(from_tag) {
        Some(version) => version,
        None => Version::parse(DEFAULT_ETCD_VERSION)
            .ok_or_else(|| SpecError::BadVersion(DEFAULT_ETCD_VERSION.into()))?,
    };
    if version.major != 3 || version.minor < 4 {
        return Err(SpecError::UnsupportedVersion(version.to_string()));
    }
    let image = spec
        .image
        .clone()
        .unwrap_or_else(|| format!("{DEFAULT_IMAGE_REPOSITORY}:v{version}"));
    Ok(Release { version, image })
}

/// The tag of an image reference (`repo/etcd:v3.5.1` → `v3.5.1`); `None` without a tag or with
/// only a digest.
fn image_tag(image: &str) -> Option<&str> {
    let without_digest = image.split('@').next()?;
    let last_segment = without_digest.rsplit('/').next()?;
    last_segment.split_once(':').map(|(_, tag)| tag)
}

/// The oldest 3.5 release a cluster may move to 3.6 from. Releases up to 3.5.19 did not
/// persist learner promotions in the v3 store, which 3.6 reads membership from (etcd issue
/// 19557: "too many learner member in cluster" after the upgrade; fixed in 3.5.20); members
/// added as learners during a rolling replacement could still receive the wrong membership in a
/// snapshot from such a member until 3.5.24 (etcd issue 20793). ferroplane adds every member as
/// a learner, so its clusters need 3.5.24.
pub const MIN_3_5_FOR_3_6: Version = Version::new(3, 5, 24);

/// Refuses a change from the running version `from` to `to` that etcd cannot do in place: a
/// major change, skipping a minor version, 3.5 → 3.6 from a 3.5 patch older than
/// [`MIN_3_5_FOR_3_6`], or a minor downgrade (etcd 3.6 downgrades one minor version only
/// through its downgrade API, which ferroplane does not drive; 3.4 and 3.5 cannot downgrade).
/// Patch changes within a minor version are fine both ways.
pub fn check_change(from: Version, to: Version) -> Result<(), SpecError> {
    let refuse = |required: Option<String>| {
        Err(SpecError::UnsupportedUpgrade {
            from: from.to_string(),
            to: to.to_string(),
            required,
        })
    };
    if from.major != to.major || to.minor < from.minor {
        return refuse(None);
    }
    // The first hop of the path: 3.5 leaves for 3.6 and later only from a fixed patch.
    if from.major == 3 && from.minor == 5 && to.minor >= 6 && from < MIN_3_5_FOR_3_6 {
        return refuse(Some(MIN_3_5_FOR_3_6.to_string()));
    }
    if to.minor > from.minor + 1 {
        return refuse(Some(format!("{}.{}.x", from.major, from.minor + 1)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(version: Option<&str>, image: Option<&str>) -> EtcdClusterSpec {
        let mut value = serde_json::json!({"size": 3});
        if let Some(v) = version {
            value["version"] = v.into();
        }
        if let Some(i) = image {
            value["image"] = i.into();
        }
        serde_json::from_value(value).expect("valid spec")
    }

    #[test]
    fn parses_versions_with_prefix_and_suffix() {
        assert_eq!(Version::parse("3.5.17"), Some(Version::new(3, 5, 17)));
        assert_eq!(Version::parse("v3.4.23"), Some(Version::new(3, 4, 23)));
        assert_eq!(Version::parse("v3.6.0-rc.1"), Some(Version::new(3, 6, 0)));
        assert_eq!(Version::parse("3.5"), None);
        assert_eq!(Version::parse("latest"), None);
    }

    #[test]
    fn default_release_is_the_official_image() {
        let release = resolve(&spec(None, None)).expect("default resolves");
        assert_eq!(release.version.to_string(), DEFAULT_ETCD_VERSION);
        assert_eq!(
            release.image,
            format!("gcr.io/etcd-development/etcd:v{DEFAULT_ETCD_VERSION}")
        );
    }

    #[test]
    fn version_comes_from_the_image_tag_when_not_given() {
        let release =
            resolve(&spec(None, Some("registry.local:5000/etcd:v3.4.23"))).expect("resolves");
        assert_eq!(release.version, Version::new(3, 4, 23));
        assert_eq!(release.image, "registry.local:5000/etcd:v3.4.23");
    }

    #[test]
    fn image_without_version_tag_uses_the_version_field() {
        let release = resolve(&spec(
            Some("3.5.9"),
            Some("registry.local:5000/etcd@sha256:abc"),
        ))
        .expect("resolves");
        assert_eq!(release.version, Version::new(3, 5, 9));
    }

    #[test]
    fn version_and_tag_must_agree() {
        let err = resolve(&spec(Some("3.5.9"), Some("quay.io/coreos/etcd:v3.4.1")))
            .expect_err("mismatch");
        assert!(
            matches!(err, SpecError::VersionImageMismatch { .. }),
            "{err}"
        );
    }

    #[test]
    fn versions_before_3_4_are_refused() {
        assert!(matches!(
            resolve(&spec(Some("3.3.10"), None)),
            Err(SpecError::UnsupportedVersion(_))
        ));
    }

    #[test]
    fn upgrades_go_one_minor_at_a_time() {
        let v = Version::new;
        assert!(check_change(v(3, 4, 23), v(3, 4, 30)).is_ok());
        assert!(
            check_change(v(3, 4, 30), v(3, 4, 23)).is_ok(),
            "patch downgrades are fine"
        );
        assert!(check_change(v(3, 4, 23), v(3, 5, 0)).is_ok());
        assert!(check_change(v(3, 5, 17), v(3, 5, 17)).is_ok());
        let skip = check_change(v(3, 4, 23), v(3, 6, 0)).expect_err("skips 3.5");
        assert!(
            skip.to_string().contains("3.4.23") && skip.to_string().contains("3.6.0"),
            "{skip}"
        );
        assert!(
            check_change(v(3, 5, 0), v(3, 4, 0)).is_err(),
            "minor downgrade"
        );
        assert!(
            check_change(v(3, 5, 0), v(4, 0, 0)).is_err(),
            "major change"
        );
    }

    #[test]
    fn three_five_moves_to_three_six_only_from_a_fixed_patch() {
        let v = Version::new;
        let err = check_change(v(3, 5, 17), v(3, 6, 0)).expect_err("3.5.17 has issue 19557");
        let message = err.to_string();
        assert!(
            message.contains("3.5.24"),
            "names the intermediate: {message}"
        );
        assert!(
            message.contains("3.5.17") && message.contains("3.6.0"),
            "{message}"
        );
        assert!(
            check_change(v(3, 5, 17), v(3, 5, 24)).is_ok(),
            "the patch first"
        );
        assert!(check_change(v(3, 5, 24), v(3, 6, 0)).is_ok());
        assert!(check_change(v(3, 5, 26), v(3, 6, 4)).is_ok());
        let skip = check_change(v(3, 4, 23), v(3, 6, 0)).expect_err("skips 3.5");
        assert!(skip.to_string().contains("3.5.x"), "{skip}");
        let skip = check_change(v(3, 5, 17), v(3, 7, 0)).expect_err("skips 3.6");
        assert!(
            skip.to_string().contains("3.5.24"),
            "first the patch: {skip}"
        );
        let skip = check_change(v(3, 5, 24), v(3, 7, 0)).expect_err("skips 3.6");
        assert!(skip.to_string().contains("3.6.x"), "{skip}");
        assert!(
            check_change(v(3, 6, 0), v(3, 5, 24)).is_err(),
            "a minor downgrade needs etcd's downgrade API"
        );
        assert!(
            check_change(v(3, 6, 4), v(3, 6, 1)).is_ok(),
            "patch downgrade"
        );
    }

    #[test]
    fn livez_readyz_availability() {
        let v = Version::new;
        assert!(!v(3, 4, 23).has_livez_readyz());
        assert!(v(3, 4, 29).has_livez_readyz());
        assert!(!v(3, 5, 10).has_livez_readyz());
        assert!(v(3, 5, 11).has_livez_readyz());
        assert!(v(3, 6, 0).has_livez_readyz());
    }
}
