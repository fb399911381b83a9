//! The gRPC status codes etcd answers with (through its JSON gateway, as `code`).

pub const INVALID_ARGUMENT: i32 = 3;
pub const NOT_FOUND: i32 = 5;
pub const PERMISSION_DENIED: i32 = 7;
pub const FAILED_PRECONDITION: i32 = 9;
pub const UNAVAILABLE: i32 = 14;
pub const UNAUTHENTICATED: i32 = 16;
