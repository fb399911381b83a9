//! Every reason an Application shows beyond the framework's (those are in
//! [`ferroplane_runtime::reasons`]): the reasons of its `Progressing` condition and of its own
//! `Ready=False` refinements, and the reasons its errors start with (in `Synced`'s message and
//! the Warning event). README's "Condition and event reasons" lists them with what to do; a test
//! here keeps that list complete. Ground floor: imports nothing of this crate.

use ferroplane_runtime::{children, reasons};

/// `Progressing=True`: the Deployment is rolling out (or being created); the message says how
/// far. Wait.
pub const ROLLING_OUT: &str = "RollingOut";
/// `Progressing=False`: the Deployment's current revision is rolled out. Nothing to do.
pub const ROLLED_OUT: &str = "RolledOut";
/// `Progressing=False` and `Ready=False`: the rollout passed the Deployment's progress deadline
/// (Kubernetes' own reason). Check the pods' events and the image (`kubectl describe
/// deployment`).
pub const PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// `Ready=False`: rolled out, but the Ingress has no address yet. Run an ingress controller for
/// its IngressClass; without one it never gets one.
pub const WAITING_FOR_INGRESS_ADDRESS: &str = "WaitingForIngressAddress";
/// `Ready=False`: a Secret the pods need (`env[].valueFrom.secretKeyRef`, `envFrom[].secretRef`,
/// a `secret` volume; not `optional: true`) does not exist, or lacks the key; the message names
/// each. On a cluster the pods would stay in `CreateContainerConfigError` or
/// `ContainerCreating`. Create it, or mark the reference optional; Ready follows by itself.
pub const REFERENCED_SECRET_MISSING: &str = "ReferencedSecretMissing";
/// `Ready=False`: as [`REFERENCED_SECRET_MISSING`], for a ConfigMap (and no Secret is missing).
pub const REFERENCED_CONFIG_MAP_MISSING: &str = "ReferencedConfigMapMissing";
/// Error: an object with the name of one of the Application's children (Deployment, Service,
/// Ingress, HorizontalPodAutoscaler) exists and is not this Application's; nothing is applied.
/// Rename the Application, delete that object, or hand it over as the message says.
pub const CHILD_NOT_OURS: &str = children::CHILD_NOT_OURS;
/// Error: a Kubernetes API call on a child failed; retried with backoff. Check the API server
/// and the controller's RBAC for the child kind the message names.
pub const KUBERNETES_API_ERROR: &str = reasons::KUBERNETES_API_ERROR;
/// Error: a child could not be rendered (serialization, or an Application without the uid or
/// namespace the API server gives). A bug: report it.
pub const INTERNAL_ERROR: &str = "InternalError";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reason above.
    const ALL: &[&str] = &[
        ROLLING_OUT,
        ROLLED_OUT,
        PROGRESS_DEADLINE_EXCEEDED,
        WAITING_FOR_INGRESS_ADDRESS,
        REFERENCED_SECRET_MISSING,
        REFERENCED_CONFIG_MAP_MISSING,
        CHILD_NOT_OURS,
        KUBERNETES_API_ERROR,
        INTERNAL_ERROR,
    ];

    #[test]
    fn readme_lists_every_reason() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
                .expect("README.md at the workspace root");
        let section = readme
            .split("## Condition and event reasons")
            .nth(1)
            .and_then(|rest| rest.split("### Application\n").nth(1))
            .and_then(|rest| rest.split("\n## ").next())
            .expect("README has an Application reasons section");
        for reason in ALL {
            assert!(
                section.contains(&format!("| `{reason}` |")),
                "README's Application reasons table lacks {reason}"
            );
        }
    }
}
