//! Field-level write semantics, on JSON values and nothing else of the store: the patch
//! formats (`patch`), server-side apply (`apply`), the list semantics of a kind's schema
//! (`shape`) and the `managedFields` bookkeeping every
//! write records (`managed`, on the field sets of `ownership`).

pub mod apply;
pub mod managed;
pub mod ownership;
pub mod patch;
pub mod shape;
