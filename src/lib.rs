//! The library half of the `ferroplane` binary: the wiring that `ferroplane run`,
//! `ferroplane sandbox` and the benchmark share. Subcommands themselves live in the binary
//! (`src/cmd/`).

pub mod controllers;
pub mod environment;
pub mod etcd_backup_store;
pub mod manifest_yaml;
pub mod sandbox_access;
pub mod signals;
pub mod snapshot_fetch;
pub mod snapshot_serve;
