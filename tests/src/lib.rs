//! Scenario tests live in `tests/` (one binary per theme); fixtures in `fixtures/`.
//! This library holds what the tests and the apply probe (`src/bin/apply_probe.rs`, a real
//! child process for the kill tests) share.

pub mod fixture;
pub mod plan;
