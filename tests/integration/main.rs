//! End-to-end tests of the ferroplane binary and library, one binary: kubectl against the sandbox
//! (or a real cluster via FERROPLANE_E2E_KUBECONFIG), bad input, and the reliability runs.

mod support;

mod bad_input;
mod e2e_disks;
mod e2e_ecs;
mod e2e_ecs_fields;
mod e2e_in_cluster;
mod e2e_network;
mod rbac;
mod reliability;
mod reliability_network;
