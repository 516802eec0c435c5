//! # resolve-mcp
//!
//! One MCP server (on the official Rust SDK, `rmcp`) serving a [`resolve_engine::Session`]:
//! an agent's `tools/call` goes through `Session::call_with(Actor::Agent, ..)`, the one door
//! every caller uses, so the stack, the transcript and the window agree.
//!
//! Two transports, one implementation:
//! - [`serve`] runs the server on any byte stream pair (`rdesk mcp --headless` gives it stdio);
//! - [`listen`] serves every connection of a user-only Unix socket ([`socket_path`]) with
//!   [`serve`], all sharing one session (the app does this for its open workspace), and
//!   [`bridge`] is the plain stdio ↔ socket pipe `rdesk mcp` runs in front of it.
//!
//! What the agent sees:
//! - `tools/list`: the session's offered tools (visible ones, plus `resolve` only while
//!   actions are pending) with their JSON Schemas; previews are annotated `readOnlyHint`,
//!   `resolve` `destructiveHint`. A change of that list sends `notifications/tools/list_changed`.
//! - `tools/call`: the tool's text as text content, its details as `structuredContent`,
//!   `isError` for error results (bad parameters are tool errors, never protocol errors);
//!   a call that pushed a preview ends with the SPEC §7 reminder.
//! - cancellation (`notifications/cancelled`) cancels the call's token; progress reported by
//!   a tool (e.g. a `resolve` waiting for the person) becomes `notifications/progress` when
//!   the request carried a `progressToken`.
//! - a line that is not JSON is answered with a JSON-RPC parse error (`-32700`, id null)
//!   and the server keeps going; JSON that is not a JSON-RPC message gets `-32600`.

mod bridge;
mod lines;
mod server;
mod socket;

pub use bridge::{bridge, closed_desk_message, BridgeError};
pub use server::{serve, serve_until, DeskServer, ServeError};
pub use socket::{check_socket_path, listen, runtime_dir, socket_path, SocketError, SocketServer, MAX_SOCKET_PATH};

/// Closes `session` for every client (`Session::close`): waiting resolves end with a
/// `closed` error, nothing is applied, later calls say the desk is closed.
pub fn close_session(session: &resolve_engine::Session) {
    session.close();
}
