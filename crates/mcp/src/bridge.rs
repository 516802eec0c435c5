//! `rdesk mcp`'s pipe: the agent's stdio to the app's socket, line by line (MCP's stdio
//! transport is one JSON-RPC message a line). When the desk closes or dies while the agent is
//! still connected, the bridge itself answers the requests the desk left unanswered and every
//! later one: a tool call is a tool error saying that the desk is closed and how to reopen it.
//!
//! The one line the bridge changes: with a `resolve` wait of its own (`rdesk mcp
//! --resolve-wait`), the agent's `initialize` request gets it in its `_meta`
//! ([`RESOLVE_WAIT_META`]), so the window's server bounds this connection's waits with it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::Mutex;

use crate::lines::{self, Line, LineReader};
use crate::server::RESOLVE_WAIT_META;
use crate::socket::{connect_checked, SocketError};

/// Why the bridge could not run.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The socket is not this user's desk, or cannot be reached (see [`connect_checked`]).
    #[error(transparent)]
    Socket(#[from] SocketError),
    #[error("no Resolve Desk serves {path}: start `resolve-desk` on the workspace, then try again.")]
    NoDesk { path: PathBuf },
}

/// What a client hears once the desk for `workspace` has closed.
pub fn closed_desk_message(workspace: &Path) -> String {
    format!(
        "The Resolve Desk window for {0} was closed, so this server cannot preview or resolve anything now (nothing was applied). Reopen the desk with `resolve-desk {0}`, then restart this MCP server (or reconnect) and call again.",
        workspace.display()
    )
}

/// The agent's requests the desk has not answered yet (so that a desk that goes away while a
/// call waits — a `resolve` waiting for the person, a crash — still answers each of them once).
#[derive(Default)]
struct InFlight {
    /// Request id (its JSON text) → the request line.
    requests: HashMap<String, Vec<u8>>,
    /// Set once the desk's side has ended: nothing more is sent to it.
    desk_gone: bool,
}

/// `Some(id)` when `line` is a request (it has both an id and a method).
fn request_id(line: &[u8]) -> Option<String> {
    let msg: Value = serde_json::from_slice(line).ok()?;
    msg.get("method")?;
    Some(msg.get("id")?.to_string())
}

/// `Some(id)` when `line` is a response (an id and no method).
fn response_id(line: &[u8]) -> Option<String> {
    let msg: Value = serde_json::from_slice(line).ok()?;
    if msg.get("method").is_some() {
        return None;
    }
    Some(msg.get("id")?.to_string())
}

async fn send<W: AsyncWrite + Unpin>(writer: &Mutex<W>, bytes: &[u8]) -> bool {
    let mut w = writer.lock().await;
    w.write_all(bytes).await.is_ok() && w.flush().await.is_ok()
}

async fn send_closed_reply<W: AsyncWrite + Unpin>(writer: &Mutex<W>, line: &[u8], workspace: &Path) -> bool {
    match closed_reply(line, workspace) {
        Some(reply) => send(writer, format!("{reply}\n").as_bytes()).await,
        None => true,
    }
}

/// Pipes `reader`/`writer` (the agent's stdio) to the socket at `path`, line by line, until the
/// agent's input ends. The socket is checked first ([`connect_checked`]): nothing of the
/// agent's is sent unless it is this user's desk. Every request gets exactly one answer: the
/// desk's, or — when the desk closes or dies first — the bridge's closed-desk answer (nothing
/// was applied).
pub async fn bridge<R, W>(path: &Path, workspace: &Path, reader: R, writer: W) -> Result<(), BridgeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let stream = connect_checked(path).await?.ok_or_else(|| BridgeError::NoDesk { path: path.into() })?;
    bridge_stream(stream, workspace, reader, writer, None).await;
    Ok(())
}

/// `line` with `resolve_wait` in its `_meta` when it is an `initialize` request (`None`
/// otherwise: forward it as it is).
fn with_resolve_wait(line: &[u8], resolve_wait: std::time::Duration) -> Option<Vec<u8>> {
    let mut msg: Value = serde_json::from_slice(line).ok()?;
    if msg.get("method")?.as_str()? != "initialize" || msg.get("id").is_none() {
        return None;
    }
    let params = msg.get_mut("params")?.as_object_mut()?;
    let meta = params.entry("_meta").or_insert_with(|| json!({})).as_object_mut()?;
    meta.insert(RESOLVE_WAIT_META.into(), json!(resolve_wait.as_secs()));
    let mut out = serde_json::to_vec(&msg).ok()?;
    out.push(b'\n');
    Some(out)
}

/// [`bridge`] on a connection [`connect_checked`] gave. An agent line longer than
/// [`lines::max_line_bytes`] is not forwarded: the bridge answers it with a `-32600` error.
/// With `resolve_wait`, the agent's `initialize` carries it to the desk (see the module docs).
pub async fn bridge_stream<R, W>(
    stream: UnixStream,
    workspace: &Path,
    reader: R,
    writer: W,
    resolve_wait: Option<std::time::Duration>,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let limit = lines::max_line_bytes();
    let (from_desk, mut to_desk) = stream.into_split();
    let writer = Arc::new(Mutex::new(writer));
    let in_flight = Arc::new(std::sync::Mutex::new(InFlight::default()));

    let (out_writer, out_flight, out_workspace) = (writer.clone(), in_flight.clone(), workspace.to_path_buf());
    let mut outward = tokio::spawn(async move {
        let mut from_desk = BufReader::new(from_desk);
        let mut line = Vec::new();
        loop {
            line.clear();
            match from_desk.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if let Some(id) = response_id(&line) {
                lock(&out_flight).requests.remove(&id);
            }
            if !send(&out_writer, &line).await {
                return;
            }
        }
        // The desk is gone: answer what it left unanswered.
        let unanswered: Vec<Vec<u8>> = {
            let mut flight = lock(&out_flight);
            flight.desk_gone = true;
            flight.requests.drain().map(|(_, line)| line).collect()
        };
        for line in unanswered {
            if !send_closed_reply(&out_writer, &line, &out_workspace).await {
                return;
            }
        }
    });

    let mut reader = LineReader::new(reader, limit);
    let mut desk_open = true;
    // Until the agent's `initialize` went by.
    let mut resolve_wait = resolve_wait;
    loop {
        // `LineReader::next` is cancel-safe: a line half read when the desk goes stays read.
        let read = if desk_open {
            tokio::select! {
                r = reader.next() => r,
                _ = &mut outward => {
                    desk_open = false;
                    continue;
                }
            }
        } else {
            reader.next().await
        };
        let mut line = match read {
            Ok(Line::End) | Err(_) => break,
            Ok(Line::Whole(line)) => line,
            Ok(Line::TooLong { bytes }) => {
                // Never forwarded: the desk would refuse it too, and it costs both memory.
                if !send(&writer, format!("{}\n", lines::too_long_error(bytes, limit)).as_bytes()).await {
                    break;
                }
                continue;
            }
        };
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        if let Some(wait) = resolve_wait {
            if let Some(changed) = with_resolve_wait(&line, wait) {
                line = changed;
                resolve_wait = None;
            }
        }
        let forwarded = {
            let mut flight = lock(&in_flight);
            if flight.desk_gone {
                false
            } else {
                if let Some(id) = request_id(&line) {
                    flight.requests.insert(id, line.clone());
                }
                true
            }
        };
        // A request recorded above is answered by the desk or, if the write fails or the desk
        // ends before answering, by the outward task's drain: exactly once either way.
        if forwarded && to_desk.write_all(&line).await.is_ok() {
            continue;
        }
        if !forwarded && !send_closed_reply(&writer, &line, workspace).await {
            break;
        }
    }
    // The agent is done: let the desk finish its answers, then stop.
    let _ = to_desk.shutdown().await;
    if desk_open {
        let _ = outward.await;
    }
}

fn lock(m: &std::sync::Mutex<InFlight>) -> std::sync::MutexGuard<'_, InFlight> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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
    fn only_the_initialize_request_carries_the_resolve_wait_and_its_own_meta_stays() {
        let wait = std::time::Duration::from_secs(7);
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"_meta":{"k":1},"capabilities":{}}}"#;
        let changed: Value = serde_json::from_slice(&with_resolve_wait(init, wait).unwrap()).unwrap();
        assert_eq!(changed["params"]["_meta"][RESOLVE_WAIT_META], 7);
        assert_eq!(changed["params"]["_meta"]["k"], 1, "the client's own _meta stays");
        assert_eq!(changed["id"], 0);
        let bare: Value = serde_json::from_slice(
            &with_resolve_wait(br#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}"#, wait).unwrap(),
        )
        .unwrap();
        assert_eq!(bare["params"]["_meta"][RESOLVE_WAIT_META], 7);
        assert!(with_resolve_wait(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, wait).is_none());
        assert!(with_resolve_wait(b"not json", wait).is_none());
    }

    #[test]
    fn notifications_get_no_answer_once_the_desk_closed() {
        assert!(closed_reply(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#, Path::new("/w")).is_none());
    }

    /// A desk that dies while a call waits (a `resolve` waiting for the person, then a crash or
    /// a closed window) must not leave the agent waiting forever: the bridge answers the call.
    #[tokio::test]
    async fn a_call_in_flight_when_the_desk_dies_gets_the_closed_desk_answer() {
        let dir = tempfile::tempdir().unwrap();
        // A private folder: the bridge refuses a socket in a folder others can enter.
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let sock = dir.path().join("desk.sock");
        let listener = tokio::net::UnixListener::bind(&sock).unwrap();
        let desk = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut lines = BufReader::new(stream);
            let mut first = Vec::new();
            lines.read_until(b'\n', &mut first).await.unwrap();
            let mut stream = lines.into_inner();
            // It answers the ping, then reads the tool call and dies without answering.
            stream.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await.unwrap();
            let mut lines = BufReader::new(stream);
            let mut call = Vec::new();
            lines.read_until(b'\n', &mut call).await.unwrap();
            (first, call)
        });
        let (agent_in, bridge_in) = tokio::io::duplex(4096);
        let (bridge_out, agent_out) = tokio::io::duplex(4096);
        let bridge = tokio::spawn(async move {
            bridge(&sock, Path::new("/w"), bridge_in, bridge_out).await.map_err(|e| e.to_string())
        });
        let mut agent_in = agent_in;
        let mut answers = BufReader::new(agent_out);
        agent_in.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n").await.unwrap();
        let mut line = String::new();
        answers.read_line(&mut line).await.unwrap();
        if line.is_empty() {
            panic!("the bridge ended: {:?}", bridge.await);
        }
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap()["id"], 1, "the desk's own answer passes through");
        agent_in
            .write_all(
                b"{\"jsonrpc\":\"2.0\",\"id\":\"r2\",\"method\":\"tools/call\",\"params\":{\"name\":\"resolve\"}}\n",
            )
            .await
            .unwrap();
        let (_, call) = desk.await.unwrap();
        assert!(String::from_utf8_lossy(&call).contains("\"r2\""), "the desk received the call before dying");
        line.clear();
        answers.read_line(&mut line).await.unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], "r2");
        assert_eq!(reply["result"]["isError"], true);
        assert!(reply["result"]["content"][0]["text"].as_str().unwrap().contains("nothing was applied"), "{reply}");
        // Later calls are answered by the bridge too, and the agent's end of input stops it.
        agent_in.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{}}\n").await.unwrap();
        line.clear();
        answers.read_line(&mut line).await.unwrap();
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap()["id"], 3);
        drop(agent_in);
        bridge.await.unwrap().unwrap();
    }
}
