//! ferroplane-sandbox: an in-memory, kubectl-compatible Kubernetes API server.

pub mod schema;
pub mod table;
