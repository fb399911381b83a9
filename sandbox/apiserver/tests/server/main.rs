//! The sandbox API server against its clients, in one binary (one link instead of one per
//! file): raw HTTP, kube-rs, kubectl, protobuf, RBAC and the StatefulSet claims simulation. A
//! module name filters, e.g. `cargo test -p ferroplane-sandbox --test server kubectl::`. The
//! suites that compare with a real control plane stay binaries of their own (`*_real`,
//! `differential`), each starting one.

#[path = "../common/mod.rs"]
mod common;
#[path = "../widget_crd/mod.rs"]
mod widget_crd;

mod claims;
mod http;
mod kube_client;
mod kubectl;
mod protobuf_k8s_pb;
mod rbac;
