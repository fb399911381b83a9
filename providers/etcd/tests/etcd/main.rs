//! provider-etcd's integration tests, in one binary (one link instead of four): the controllers
//! on the sandbox (`e2e`, `simulated`), the membership gateway and TLS against real etcd members
//! (`membership`, `tls`). A module name filters, e.g.
//! `cargo test -p provider-etcd --test etcd membership::`.

mod e2e;
mod membership;
mod simulated;
mod tls;
