//! resolve-engine
