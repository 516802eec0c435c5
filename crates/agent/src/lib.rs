//! resolve-agent
