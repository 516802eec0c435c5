//! Scenario tests live in `tests/scenarios.rs` (one test binary); fixtures in `fixtures/`.
