//! provider-etcd's integration tests, in one binary (one link instead of four): the controllers
//! on the sandbox (`e2e`, `simulated`), the membership gateway and TLS against real etcd members
//! (`membership`, `tls`), and the restore of a snapshot taken with authentication
//! (`restore_auth`). A module name filters, e.g.
//! `cargo test -p provider-etcd --test etcd membership::`.

mod e2e;
mod membership;
mod restore_auth;
mod simulated;
mod tls;
