//! Talking to a desk: over its socket as an MCP client (JSON-RPC, one message a line, as the
//! desk's MCP server speaks it), or to a desk opened in this process (no window: the `agent`
//! policy). Both give a call's text, whether it is an error, and its details.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

use resolve_engine::{Actor, Session, ToolContext, WaitBound};

/// What a tool call answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub is_error: bool,
    pub details: Value,
}

/// A desk to call.
pub enum Link {
    /// The window's (or `rdesk serve-socket`'s) socket.
    Socket(SocketLink),
    /// A desk this process opened (kept open while the link lives).
    Local { desk: Box<resolve_desk_core::Desk>, client: String, wait: Duration },
}

impl Link {
    /// Calls `tool` with `args` as the agent.
    pub async fn call(&mut self, tool: &str, args: Value) -> Result<Answer, String> {
        match self {
            Link::Socket(s) => s.call(tool, args).await,
            Link::Local { desk, client, wait } => {
                let session: &Arc<Session> = desk.session();
                let ctx = ToolContext::new(session.new_call_id())
                    .with_client(client.clone())
                    .with_wait(WaitBound::For(*wait));
                let r = session.call_with(Actor::Agent, ctx, tool, args).await;
                Ok(Answer { text: r.text_content(), is_error: r.is_error, details: r.details.unwrap_or(Value::Null) })
            }
        }
    }
}

/// An MCP client on a desk's socket.
pub struct SocketLink {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
}

impl SocketLink {
    /// Opens the MCP session: `initialize` as `client` (the name the desk shows as who pushed),
    /// with the desk's `resolve` wait set to `wait`, then `notifications/initialized`.
    pub async fn open(stream: UnixStream, client: &str, wait: Duration) -> Result<SocketLink, String> {
        let (read, writer) = stream.into_split();
        let mut link = SocketLink { reader: BufReader::new(read), writer, next_id: 1 };
        link.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": client, "version": env!("CARGO_PKG_VERSION")},
                "_meta": {resolve_mcp::RESOLVE_WAIT_META: wait.as_secs().clamp(1, resolve_mcp::MAX_RESOLVE_WAIT_SECS)},
            }),
        )
        .await?;
        link.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
        Ok(link)
    }

    async fn send(&mut self, message: &Value) -> Result<(), String> {
        let mut line = serde_json::to_vec(message).map_err(|e| e.to_string())?;
        line.push(b'\n');
        self.writer.write_all(&line).await.map_err(|e| format!("the desk's socket closed: {e}"))?;
        self.writer.flush().await.map_err(|e| format!("the desk's socket closed: {e}"))
    }

    /// Sends a request and returns its result, skipping notifications (progress) and
    /// answering nothing else.
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line).await.map_err(|e| format!("cannot read from the desk: {e}"))?;
            if n == 0 {
                return Err("the desk closed the connection before answering (was the window closed?)".into());
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message.get("id").and_then(Value::as_u64) != Some(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(format!(
                    "the desk refused `{method}`: {}",
                    error.get("message").and_then(Value::as_str).unwrap_or("no message")
                ));
            }
            return Ok(message.get("result").cloned().unwrap_or(Value::Null));
        }
    }

    /// `tools/call`.
    pub async fn call(&mut self, tool: &str, args: Value) -> Result<Answer, String> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": args})).await?;
        let text = result
            .get("content")
            .and_then(Value::as_array)
            .map(|parts| {
                parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
            })
            .unwrap_or_default();
        Ok(Answer {
            text,
            is_error: result.get("isError").and_then(Value::as_bool).unwrap_or(false),
            details: result.get("structuredContent").cloned().unwrap_or(Value::Null),
        })
    }
}
