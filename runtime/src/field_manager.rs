//! The field manager ferroplane's writes carry: server-side apply of children and connection
//! Secrets, and the status patches. Kept apart from its users so that none of them depends on
//! another for a name.

/// Field manager of every server-side apply and status patch ferroplane makes.
pub const FIELD_MANAGER: &str = "ferroplane";
