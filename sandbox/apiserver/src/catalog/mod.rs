//! What the server serves and how each kind is described: the real apiserver's schemas of the
//! built-in kinds (`builtin_openapi`), the registry of built-in and
//! CRD-defined resources (`registry`), discovery documents (`discovery`), OpenAPI v3
//! (`openapi`, and the bare `/openapi/v2` in `openapi_v2`), and each kind's `kubectl get` printer (`table`).
//!
//! The printers live here rather than in `http` because a CRD version's printer is compiled
//! once when the CRD is registered, and admission refuses a CRD whose columns do not parse;
//! `http` only renders with them. Nothing here depends on the store or on HTTP.

pub mod builtin_openapi;
pub mod discovery;
pub mod openapi;
pub mod openapi_v2;
pub mod registry;
pub mod store_key;
pub mod table;
