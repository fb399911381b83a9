//! The ECSInstance controller (entry: `ecs_instance_controller`).
//!
//! One reconcile of an ECSInstance, where each step lives:
//! - `connector`: ProviderConfig (or ClusterProviderConfig) → credentials
//!   (`crate::config_resolution`) → a cached, signed ECS client per (config version, region)
//!   (`crate::cloud_client`, which holds this module's `batcher` and `owner_search` per region).
//! - `external`: `observe` through the `batcher` (one `DescribeInstances` for up to 100
//!   instances sharing credentials, endpoint and region), or by the `ferroplane.io/uid` tag when
//!   the instance ID is unknown (`owner_search`: one listing shared by every new object), with
//!   the other reads in `external/reads`; `create` with `RunInstances`; `update` sends the
//!   `diff` plan's rows (`external/apply`); `delete` with `DeleteInstance`. `applied_inputs` and
//!   `recent_creations` remember what ECS does not report back.
//! - The field table: `field_classes` (`FIELDS`: the class of every `forProvider` property, in
//!   place, restart, immutable or management, and for a changeable one its comparison and the
//!   `requests` entry it fills), `field_diffs` (the comparisons), `comparison` (the types they
//!   share), `diff` (spec vs instance → plan of differing rows, driven by `FIELDS`).
//! - Pure mapping: `spec_mapping` (spec → `RunInstances`), `wire_names` (the spec's enums as
//!   ECS names them), `late_init` (instance → unset spec fields), `import_spec` (instance → the whole spec
//!   that matches it, for `ferroplane import`), `preview` (spec and instance → the changes the
//!   next reconcile makes, for `ferroplane plan`), `observation` (instance →
//!   status, readiness, connection details). ECS errors become condition reasons through
//!   `crate::cloud_error`.
//!
//! # Batching
//! With [`Options::batching`](crate::Options::batching) (the default) instances sharing a
//! configuration version and region are observed through one batcher: about ceil(N/100)
//! `DescribeInstances` calls per poll interval. Without it every observation is its own call,
//! which is what the benchmark compares against.

mod applied_inputs;
mod batcher;
mod comparison;
mod connector;
mod controller;
mod diff;
mod external;
mod extra_reads;
mod field_classes;
mod field_diffs;
mod import_spec;
mod late_init;
mod observation;
mod owner_search;
mod pending;
mod preview;
mod recent_creations;
mod releases;
mod requests;
mod spec_mapping;
mod wire_names;

pub(crate) use batcher::Batcher;
pub use extra_reads::{ExtraReads, read_all as read_extras};
pub use import_spec::imported_parameters;
pub use preview::{
    ChangeClass, InstancePreview, PlannedChange, launch_refusal, preview, preview_with,
};
pub(crate) use releases::{RELEASE_WINDOW, Releases};

/// Every `spec.forProvider` property of ECSInstance (nested ones as `systemDisk.size`) with its
/// class as README's table names it: `in place`, `restart`, `immutable` or `management`. The
/// end-to-end suite holds its field edits to this table.
pub fn field_classes() -> Vec<(&'static str, &'static str)> {
    field_classes::FIELDS
        .iter()
        .map(|field| (field.path, field.class.name()))
        .collect()
}
pub(crate) use controller::ecs_instance_controller;
pub(crate) use owner_search::OwnerSearch;
