//! The fields the Go SDK models declare that the mock does not serve yet (or serves with another
//! JSON type): the open part of issue 33, one table. Each entry is ("API/Action", JSON path with
//! list indexes as `[]`, "missing" or "mistyped"). It only shrinks: the test fails on a problem
//! not listed here and on an entry that no answer has any more.

pub const FIELDS: &[(&str, &str, &str)] = &[];
