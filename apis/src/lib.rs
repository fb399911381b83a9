//! CRD types for every ferroplane kind.
