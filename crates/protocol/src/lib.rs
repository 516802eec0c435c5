//! resolve-protocol
