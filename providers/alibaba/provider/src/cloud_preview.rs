//! Read-only previews for `ferroplane plan` of every kind served by the shared cloud connector
//! (VPC, VSwitch, SecurityGroup, SecurityGroupRule, Disk, KeyPair, EIP, EIPAssociation,
//! NATGateway, SNATEntry, DNATEntry): the
//! object is connected exactly as its controller connects it (`CloudConnector`: ProviderConfig,
//! credentials, the account's STS identity) and observed by the kind's own
//! `ExternalClient::observe`, whose `UpToDate::No` lines are the changes the next reconcile
//! makes. One path for every such kind: a kind gets a preview by one line in `plannable!`.
//!
//! The reconcile's ownership step is previewed too (`runtime::preview_ownership`: the owner a
//! tag names, looked up by a list of metadata), so an untagged import plans its take-over and a
//! resource another object owns plans blocked.
//!
//! A kind whose create or update refuses, before any write, something its observation does not
//! show implements [`WriteRefusal`] (an EIPAssociation whose EIP serves another resource:
//! `EIPInUse`); the preview is then that refusal, as the controller's condition would say it.
//!
//! Each `observe` only reads (`Describe*`; STS `GetCallerIdentity` once per configuration), one
//! call per object as the controllers make them (these kinds are not batched), and a
//! [`WriteRefusal`] its create's or update's own reads. The e2e tests check that a plan leaves
//! the mock's ledger unchanged.

use std::future::Future;

use ferroplane_apis::alibabacloud::{
    DNATEntry, Disk, EIP, EIPAssociation, KeyPair, NATGateway, SNATEntry, SecurityGroup,
    SecurityGroupRule, VPC, VSwitch,
};
use ferroplane_apis::common::names::{CROSSPLANE_EXTERNAL_NAME, EXTERNAL_NAME};
use ferroplane_runtime::{
    Connector, ExternalClient, ExternalRef, ManagedResource, Metrics, Observation,
    OwnershipPreview, ReconcileError, UpToDate, preview_ownership,
};
use kube::ResourceExt as _;

use crate::cloud_connector::{CloudClients, CloudConnector, CloudKind};
use crate::config_resolution::EndpointAllowList;
use crate::options::Options;

/// What the next reconcile of an object would find in the cloud.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KindPreview {
    /// Nothing found (by the external name, or by the UID tag before one is known).
    Missing {
        /// Whether the next reconcile creates it: false for a named resource whose ID the
        /// cloud assigned (it is never created again).
        creates: bool,
    },
    /// Found: its ID and the changes the next update makes (empty: up to date).
    Found {
        external_name: String,
        /// One line per change, as the controller's `Synced` message and events say it.
        changes: Vec<String>,
        /// The resource is changing state: the controller compares once it settles.
        in_transition: bool,
        /// Whose it is, as the reconcile's ownership step decides.
        ownership: Ownership,
    },
}

/// The reconcile's ownership decision about a found resource (`runtime::preview_ownership`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ownership {
    Ours,
    /// Untagged or orphaned and named by the object: taken over (`TagResources`) when the
    /// policies allow updates.
    Claim,
    /// Another object owns it, or may: nothing is changed.
    Refused(PreviewBlocked),
}

/// Why the controller would stop before the cloud, or what the cloud answered: the condition
/// reason and message (never a secret: the runtime's errors carry none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewBlocked {
    pub reason: String,
    pub message: String,
}

impl From<ReconcileError> for PreviewBlocked {
    fn from(e: ReconcileError) -> Self {
        Self {
            reason: e.reason().to_owned(),
            message: e.message().to_owned(),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A kind [`CloudPreviews`] can preview (sealed: the kinds of the shared connector).
pub trait PlannableKind: ManagedResource + sealed::Sealed {
    /// Connects `mr` through `previews` and observes it.
    fn preview(
        previews: &CloudPreviews,
        mr: &Self,
    ) -> impl Future<Output = Result<KindPreview, PreviewBlocked>> + Send;
}

/// Connects and observes objects as their controllers do, reads only.
pub struct CloudPreviews {
    kube: kube::Client,
    connector: CloudConnector,
}

impl CloudPreviews {
    /// Resolves configurations through `kube` (reads only), allowing `endpoints` as `ferroplane
    /// run --allow-endpoint` does.
    pub fn new(kube: kube::Client, endpoints: EndpointAllowList) -> Self {
        let options = Options {
            allowed_endpoints: endpoints,
            ..Options::default()
        };
        let calls = Metrics::new().external_calls("plan");
        Self {
            connector: CloudConnector::new(kube.clone(), &options, calls),
            kube,
        }
    }

    /// The preview of `mr` (its references already resolved into `spec.forProvider`).
    pub async fn observe<K: PlannableKind>(&self, mr: &K) -> Result<KindPreview, PreviewBlocked> {
        K::preview(self, mr).await
    }
}

/// The external name the runtime reads: ferroplane's annotation, else Crossplane's.
pub fn external_name<K: kube::Resource>(mr: &K) -> Option<String> {
    let annotations = mr.meta().annotations.as_ref()?;
    [EXTERNAL_NAME, CROSSPLANE_EXTERNAL_NAME]
        .iter()
        .find_map(|key| annotations.get(*key).filter(|v| !v.is_empty()).cloned())
}

/// The kind's observation as a preview.
fn preview(observation: &Observation, named: bool, assigns_names: bool) -> KindPreview {
    if !observation.exists {
        return KindPreview::Missing {
            creates: !(named && assigns_names),
        };
    }
    let changes = match &observation.up_to_date {
        UpToDate::Yes => Vec::new(),
        UpToDate::No(diff) => split_diff(diff),
    };
    KindPreview::Found {
        external_name: observation.external_name.clone().unwrap_or_default(),
        changes,
        in_transition: observation.in_transition,
        ownership: Ownership::Ours,
    }
}

/// The kinds' diffs join one line per change with `; `.
fn split_diff(diff: &str) -> Vec<String> {
    diff.split("; ")
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// What a kind's next create or update refuses before any write that its observation does not
/// show (by default nothing: the cloud's own answer is not predicted).
trait WriteRefusal: Sized {
    fn refusal(
        _clients: &CloudClients,
        _mr: &Self,
        _ext: &ExternalRef,
    ) -> impl Future<Output = Result<Option<ReconcileError>, ReconcileError>> + Send {
        std::future::ready(Ok(None))
    }
}

impl WriteRefusal for EIPAssociation {
    async fn refusal(
        clients: &CloudClients,
        mr: &Self,
        ext: &ExternalRef,
    ) -> Result<Option<ReconcileError>, ReconcileError> {
        clients.association_refusal(mr, ext).await
    }
}

/// Whether the next reconcile writes: a create, or an update of changes it may make.
fn writes(preview: &KindPreview) -> bool {
    match preview {
        KindPreview::Missing { creates } => *creates,
        KindPreview::Found {
            changes, ownership, ..
        } => !changes.is_empty() && !matches!(ownership, Ownership::Refused(_)),
    }
}

async fn observe_with<K>(previews: &CloudPreviews, mr: &K) -> Result<KindPreview, PreviewBlocked>
where
    K: CloudKind + WriteRefusal,
    CloudClients: ExternalClient<K>,
{
    let client = Connector::<K>::connect(&previews.connector, mr).await?;
    let name = external_name(mr);
    let ext = ExternalRef {
        name: name.clone(),
        uid: mr.uid().unwrap_or_default(),
    };
    let observation = client.observe(mr, &ext).await?;
    let mut found = preview(&observation, name.is_some(), client.assigns_names());
    if let KindPreview::Found {
        external_name,
        ownership,
        ..
    } = &mut found
    {
        if external_name.is_empty() {
            *external_name = name.clone().unwrap_or_default();
        }
        *ownership = match preview_ownership(
            &previews.kube,
            mr,
            external_name,
            &observation.owner,
            name.is_some(),
        )
        .await?
        {
            OwnershipPreview::Ours => Ownership::Ours,
            OwnershipPreview::Claim => Ownership::Claim,
            OwnershipPreview::Refused(e) => Ownership::Refused(e.into()),
        };
    }
    if writes(&found)
        && let Some(refusal) = K::refusal(&client, mr, &ext).await?
    {
        return Err(refusal.into());
    }
    Ok(found)
}

/// Every kind of the shared connector gets a preview; those listed after `;` also their own
/// [`WriteRefusal`], the others refuse nothing their observation does not show.
macro_rules! plannable {
    ($($kind:ty),* $(,)?; $($refusing:ty),* $(,)?) => {
        $( impl WriteRefusal for $kind {} )*
        $( plannable!(@preview $kind); )*
        $( plannable!(@preview $refusing); )*
    };
    (@preview $kind:ty) => {
        impl sealed::Sealed for $kind {}
        impl PlannableKind for $kind {
            async fn preview(
                previews: &CloudPreviews,
                mr: &Self,
            ) -> Result<KindPreview, PreviewBlocked> {
                observe_with(previews, mr).await
            }
        }
    };
}

plannable!(
    VPC,
    VSwitch,
    SecurityGroup,
    SecurityGroupRule,
    Disk,
    KeyPair,
    EIP,
    NATGateway,
    SNATEntry,
    DNATEntry;
    EIPAssociation,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_is_one_change_per_line() {
        assert_eq!(
            split_diff("vpcName: \"a\" → \"b\"; description: \"\" → \"x\""),
            ["vpcName: \"a\" → \"b\"", "description: \"\" → \"x\""]
        );
        assert!(split_diff("").is_empty());
    }

    #[test]
    fn a_named_resource_the_cloud_named_is_not_created_again() {
        let missing = Observation::missing();
        assert_eq!(
            preview(&missing, true, true),
            KindPreview::Missing { creates: false }
        );
        assert_eq!(
            preview(&missing, false, true),
            KindPreview::Missing { creates: true }
        );
        // A key pair is named by the spec: missing, it is created under that name.
        assert_eq!(
            preview(&missing, true, false),
            KindPreview::Missing { creates: true }
        );
    }

    #[test]
    fn only_a_create_or_an_update_it_may_make_is_checked_for_a_refusal() {
        assert!(writes(&KindPreview::Missing { creates: true }));
        assert!(!writes(&KindPreview::Missing { creates: false }));
        let found = |changes: Vec<String>, ownership| KindPreview::Found {
            external_name: "eip-1:i-1".into(),
            changes,
            in_transition: false,
            ownership,
        };
        let again = vec!["EIP eip-1 was unassociated from i-1 outside ferroplane".to_owned()];
        assert!(writes(&found(again.clone(), Ownership::Ours)));
        assert!(writes(&found(again.clone(), Ownership::Claim)));
        assert!(!writes(&found(vec![], Ownership::Ours)));
        let elsewhere = Ownership::Refused(PreviewBlocked {
            reason: "ExternalResourceOwnedElsewhere".into(),
            message: String::new(),
        });
        assert!(!writes(&found(again, elsewhere)));
    }

    #[test]
    fn found_resources_list_their_changes() {
        let same = Observation::found("vpc-1");
        assert_eq!(
            preview(&same, true, true),
            KindPreview::Found {
                external_name: "vpc-1".into(),
                changes: vec![],
                in_transition: false,
                ownership: Ownership::Ours,
            }
        );
        let drift = Observation::found("vpc-1").with_diff("description: \"a\" → \"b\"");
        let KindPreview::Found { changes, .. } = preview(&drift, true, true) else {
            panic!("found")
        };
        assert_eq!(changes, ["description: \"a\" → \"b\""]);
    }
}
