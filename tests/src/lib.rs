//! resolve-scenarios
