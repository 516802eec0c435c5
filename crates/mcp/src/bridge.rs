//! `rdesk mcp`'s pipe: the agent's stdio to the app's socket, byte for byte. When the desk
//! closes while the agent is still connected, the bridge itself answers what follows: every
//! tool call is a tool error saying that the desk is closed and how to reopen it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::Mutex;

/// Why the bridge could not run.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error("cannot connect to the desk's socket {path}: {source}")]
    Connect { path: PathBuf, source: std::io::Error },
}

/// What a client hears once the desk for `workspace` has closed.
pub fn closed_desk_message(workspace: &Path) -> String {
    format!(
        "The Resolve Desk window for {0} was closed, so this server cannot preview or resolve anything now (nothing was applied). Reopen the desk with `resolve-desk {0}`, then restart this MCP server (or reconnect) and call again.",
        workspace.display()
    )
}

/// Pipes `reader`/`writer` (the agent's stdio) to the socket at `path` until the agent's
/// input ends.
pub async fn bridge<R, W>(path: &Path, workspace: &Path, reader: R, writer: W) -> Result<(), BridgeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let stream =
        UnixStream::connect(path).await.map_err(|source| BridgeError::Connect { path: path.into(), source })?;
    let (mut from_desk, mut to_desk) = stream.into_split();
    let writer = Arc::new(Mutex::new(writer));

    let out_writer = writer.clone();
    let mut outward = tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match from_desk.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut w = out_writer.lock().await;
            if w.write_all(&buf[..n]).await.is_err() || w.flush().await.is_err() {
                break;
            }
        }
    });

    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    let mut desk_open = true;
    loop {
        line.clear();
        let read = if desk_open {
            tokio::select! {
                r = reader.read_until(b'\n', &mut line) => r,
                _ = &mut outward => {
                    desk_open = false;
                    continue;
                }
            }
        } else {
            reader.read_until(b'\n', &mut line).await
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if desk_open && to_desk.write_all(&line).await.is_ok() {
            continue;
        }
        desk_open = false;
        if let Some(reply) = closed_reply(&line, workspace) {
            let mut w = writer.lock().await;
            let out = format!("{reply}\n");
            if w.write_all(out.as_bytes()).await.is_err() || w.flush().await.is_err() {
                break;
            }
        }
    }
    // The agent is done: let the desk finish its answers, then stop.
    let _ = to_desk.shutdown().await;
    if desk_open {
        let _ = outward.await;
    }
    Ok(())
}

/// The answer to one line once the desk is closed (`None` for notifications).
fn closed_reply(line: &[u8], workspace: &Path) -> Option<Value> {
    let message = closed_desk_message(workspace);
    let Ok(msg) = serde_json::from_slice::<Value>(line) else {
        return Some(
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error: the line is not JSON."}}),
        );
    };
    let id = msg.get("id")?.clone();
    let method = msg.get("method").and_then(Value::as_str)?;
    let result = match method {
        "ping" => json!({}),
        "tools/list" => json!({"tools": []}),
        "tools/call" => json!({"content": [{"type": "text", "text": message}], "isError": true}),
        _ => return Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": message}})),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_after_the_desk_closed_is_a_tool_error_saying_how_to_reopen() {
        let reply =
            closed_reply(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}"#, Path::new("/w"))
                .unwrap();
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["result"]["isError"], true);
        let text = reply["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("`resolve-desk /w`"), "{text}");
    }

    #[test]
    fn notifications_get_no_answer_once_the_desk_closed() {
        assert!(closed_reply(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#, Path::new("/w")).is_none());
    }
}
