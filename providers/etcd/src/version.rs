//! Which etcd release a spec asks for (version, image). Which changes between releases are safe
//! is `upgrade_path`'s.

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
    fn livez_readyz_availability() {
        let v = Version::new;
        assert!(!v(3, 4, 23).has_livez_readyz());
        assert!(v(3, 4, 29).has_livez_readyz());
        assert!(!v(3, 5, 10).has_livez_readyz());
        assert!(v(3, 5, 11).has_livez_readyz());
        assert!(v(3, 6, 0).has_livez_readyz());
    }
}
