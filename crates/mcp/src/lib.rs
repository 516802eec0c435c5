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
//! - `tools/list`: the session's visible tools and `resolve`, whatever the stack holds (many
//!   clients read the list once: `Session::client_tools`), with their JSON Schemas. Only a tool the desk guarantees to write
//!   nothing (`Tool::preview_only`: the built-in `ast_edit` and `batch_rename_preview`) is
//!   annotated `readOnlyHint` and described as writing nothing; every other tool — `resolve`,
//!   and any external tool, a program that can do anything — is `destructiveHint` and
//!   `openWorldHint`. A change of that list (a tool loaded or unloaded at runtime) sends
//!   `notifications/tools/list_changed`, and is also said in the text of the client's next
//!   tool result (for clients that never read the list again).
//! - `tools/call`: the tool's text as text content, its details as `structuredContent`,
//!   `isError` for error results (bad parameters are tool errors, never protocol errors);
//!   a call that pushed a preview ends with the SPEC §7 reminder. Under the `human` policy a
//!   `resolve` waits for the person at most the connection's bound (`initialize`'s
//!   [`RESOLVE_WAIT_META`], else the session's), then says they have not decided yet; a
//!   decision made while the client was not waiting comes with its next call (the engine's
//!   mailbox, `resolve_engine::waits`). A client that declares the tasks extension
//!   (`io.modelcontextprotocol/tasks`) gets that `resolve` as a task instead (`tasks`): a task
//!   at once, `tasks/get` `working` with "waiting for the person's review of …", the decision
//!   as its result, no bound.
//! - resources: each pending action is `resolve-desk://pending/<id>` (its label, status, who
//!   pushed it, an agent's proposal and its unified diff, windowed), with
//!   `notifications/resources/updated` for subscribers and `list_changed` on push and pop.
//! - cancellation (`notifications/cancelled`) cancels the call's token; progress reported by
//!   a tool (e.g. a `resolve` waiting for the person) becomes `notifications/progress` when
//!   the request carried a `progressToken`, at most one per [`PROGRESS_EVERY`] (the latest
//!   report each time, the last one always, before the answer).
//! - a line that is not JSON is answered with a JSON-RPC parse error (`-32700`, id null)
//!   and the server keeps going; JSON that is not a JSON-RPC message gets `-32600`, and so
//!   does a line longer than [`max_line_bytes`] (16 MiB unless [`MAX_LINE_BYTES_VAR`] says
//!   otherwise), which is read on in chunks and dropped, never held whole.
//!
//! Who is at the other end of the socket is checked on both ends before a byte is sent: the
//! desk serves only connections from its own user (`SO_PEERCRED`), and [`connect_checked`]
//! (used by [`bridge`] and `rdesk mcp`) refuses a socket or folder of another user, or a
//! listener running as another user.

mod bridge;
mod lines;
mod progress;
mod resources;
mod server;
mod socket;
mod tasks;

pub use bridge::{bridge, bridge_stream, closed_desk_message, BridgeError};
pub use lines::{max_line_bytes, DEFAULT_MAX_LINE_BYTES, MAX_LINE_BYTES_VAR};
pub use progress::PROGRESS_EVERY;
pub use resources::{DIFF_WINDOW_BYTES, PENDING_URI_PREFIX};
pub use server::{serve, serve_until, DeskServer, ServeError, MAX_RESOLVE_WAIT_SECS, RESOLVE_WAIT_META};
pub use socket::{
    bind_private, check_socket_path, connect_checked, ensure_private_dir, listen, peer_problem, runtime_dir,
    socket_path, socket_path_in, SocketError, SocketServer, MAX_SOCKET_PATH,
};

/// Closes `session` for every client (`Session::close`): waiting resolves end with a
/// `closed` error, nothing is applied, later calls say the desk is closed.
pub fn close_session(session: &resolve_engine::Session) {
    session.close();
}
