//! The app's MCP socket: while a workspace is open, coding agents reach its session through
//! `rdesk mcp --workspace DIR` (a stdio ↔ socket bridge), so their previews land in this
//! window's queue. The socket is user-only (0600 in a 0700 folder, no TCP port); see
//! `resolve_mcp::socket_path`.

use std::sync::Arc;

use resolve_engine::Session;
use resolve_mcp::SocketServer;

/// Starts serving `session` on its workspace's socket. The demo is not served (no agent
/// knows its temporary folder). A failure is reported and the app goes on without it.
pub fn start(session: &Arc<Session>, is_demo: bool) -> Option<SocketServer> {
    if is_demo {
        return None;
    }
    let path = resolve_mcp::socket_path(session.workspace().root());
    match resolve_mcp::listen(&path, session.clone()) {
        Ok(server) => Some(server),
        Err(e) => {
            eprintln!("resolve-desk: coding agents cannot join this window over MCP: {e}");
            None
        }
    }
}

/// Closes the desk for connected agents: the session is closed (a `resolve` waiting for the
/// person ends with a `closed` error, nothing is applied), their answers are sent, and the
/// socket is removed.
pub async fn stop(server: Option<SocketServer>, session: &Session) {
    match server {
        Some(server) => server.close().await,
        None => resolve_mcp::close_session(session),
    }
}
