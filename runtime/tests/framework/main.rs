//! The framework's integration tests, in one binary (one link instead of one per file): the
//! reconcile and the controller against the sandbox API server with the framework's own test
//! kind (`ferroplane_testkit::widget`) and its fake cloud. A module name filters, e.g.
//! `cargo test -p ferroplane-runtime --test framework ownership::`.

mod controller;
mod crash;
mod crossplane_aliases;
mod events;
mod guards;
mod leader;
mod lifecycle;
mod ownership;
mod status_after_failure;
