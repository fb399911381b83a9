//! The write semantics of the apiserver on top of the state: create, update (PUT and every
//! patch type end there), patch and server-side apply, `/scale`, delete with finalizers and
//! propagation, and the settling that follows a removal (garbage collection, foreground and
//! orphan finalizers, namespace and CRD cleanup).
//!
//! Every operation runs under the store lock; bodies and results are in the stored form (see
//! `views` for the per-version presentation).

pub mod create;
pub mod delete;
pub mod node;
pub mod options;
pub mod patch;
pub mod scale;
pub mod settle;
pub mod update;

#[cfg(test)]
mod tests;
