//! The ECSInstance controller (entry: `ecs_instance_controller`).
//!
//! One reconcile of an ECSInstance, where each step lives:
//! - `connector`: ProviderConfig (or ClusterProviderConfig) → credentials
//!   (`crate::config_resolution`) → a cached, signed ECS client per (config version, region)
//!   (`crate::cloud_client`, which holds this module's `batcher` and `owner_search` per region).
//! - `external`: `observe` through the `batcher` (one `DescribeInstances` for up to 100
//!   instances sharing credentials, endpoint and region), or by the `ferroplane.io/uid` tag when
//!   the instance ID is unknown (`owner_search`: one listing shared by every new object); `create` with `RunInstances`; `update` from the `diff` plan;
//!   `delete` with `DeleteInstance`. `applied_inputs` and `recent_creations` remember what ECS
//!   does not report back.
//! - Pure mapping: `spec_mapping` (spec → `RunInstances`), `field_classes` (the class of every
//!   `forProvider` property: in place, restart, immutable or management) and `field_diffs` (one
//!   comparison per property), `diff` (spec vs instance → plan, driven by `field_classes`),
//!   `late_init` (instance → unset spec fields), `observation` (instance → status, readiness,
//!   connection details). ECS errors become condition reasons through `crate::cloud_error`.
//!
//! # Batching
//! With [`Options::batching`](crate::Options::batching) (the default) instances sharing a
//! configuration version and region are observed through one batcher: about ceil(N/100)
//! `DescribeInstances` calls per poll interval. Without it every observation is its own call,
//! which is what the benchmark compares against.

mod applied_inputs;
mod batcher;
mod connector;
mod controller;
mod diff;
mod external;
mod field_classes;
mod field_diffs;
mod late_init;
mod observation;
mod owner_search;
mod recent_creations;
mod spec_mapping;

pub(crate) use batcher::Batcher;
pub(crate) use controller::ecs_instance_controller;
pub(crate) use owner_search::OwnerSearch;
