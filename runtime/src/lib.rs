//! (crate content lands with its issue)
