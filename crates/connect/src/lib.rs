//! # resolve-connect
//!
//! The agents people run, wired to the desk: their own edit tools held as pending actions
//! until the person decides (`rdesk hook <agent>`), and their settings written in one command
//! (`rdesk setup <agent>`). One module per agent under [`agents`]; what they share:
//!
//! - [`join`] — reaching the folder's desk: its window's checked socket, starting it if needed
//! - [`client`] — calling the desk's tools (an MCP client on the socket, or a desk opened here)
//! - [`gate`] — holding one edit (`gate_edit`, then `await_decision`) and reading the verdict
//! - [`settings`] — JSON settings files merged in place (nothing else dropped), written atomically
//!
//! The engine knows nothing of any agent: a hook sends the exact bytes the agent's tool would
//! write, and the desk reviews them like any other change set.

pub mod agents;
pub mod client;
pub mod gate;
pub mod join;
pub mod settings;

pub use agents::{find, AgentInfo, AGENTS};
pub use gate::{Gate, GateFile, Policy, Reach, Verdict};
