//! One running tool process: JSON-RPC 2.0 over its stdin/stdout, one message per line.
//!
//! Two threads per process: a writer (owns stdin) and a reader (owns stdout). The reader
//! routes the tool's answers to the call that waits for them and the tool's own requests
//! and notifications (`pushPendingAction`, `progress`) to the call in progress, which
//! handles them in its own task (so pushes record the tool call they belong to). Anything
//! on stdout that is not JSON-RPC stops the tool, and so does a line longer than
//! [`ToolLimits::max_line_bytes`] (never buffered past it). When stdout closes, the process is
//! reaped, and every waiting call gets the reason it died. A third thread copies stderr to
//! the tool's log ([`ToolLog`]: private, rotated at a size).
//!
//! The process starts from an empty environment plus the allow-list of
//! [`crate::environment`]: never the desk's whole environment.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use resolve_engine::CancellationToken;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use crate::limits::{shown_bytes, ToolLimits, LINE_MIB_ENV};
use crate::log::ToolLog;
use crate::manifest::Manifest;

/// How the host starts tool processes (from [`crate::Config`]).
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// Variables never passed, even when a manifest names them.
    pub never_pass: Arc<[String]>,
    pub limits: ToolLimits,
    /// Asked before every start.
    pub gate: Option<crate::Gate>,
}

impl Launch {
    pub fn of(config: &crate::Config) -> Launch {
        Launch { never_pass: config.never_pass.clone().into(), limits: config.limits, gate: config.gate.clone() }
    }

    /// The variables `manifest` names that are never passed.
    pub fn withheld(&self, manifest: &Manifest) -> Vec<String> {
        crate::environment::tool_environment(&manifest.env, &self.never_pass, std::iter::empty()).1
    }
}

/// How long the reader waits, once the process is gone, for the stderr copier to write what
/// the process wrote last (a child of the tool may keep stderr open longer).
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// A JSON-RPC error code the host answers with when `pushPendingAction` fails.
pub const PUSH_FAILED: i64 = -32001;
/// The code of a request the host does not know.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The code of bad params in a tool's request.
pub const INVALID_PARAMS: i64 = -32602;

/// What the tool answered.
#[derive(Debug)]
pub(crate) enum Reply {
    Result(Value),
    Error { message: String },
}

/// A request or notification from the tool.
#[derive(Debug)]
pub(crate) struct Incoming {
    pub id: Option<Value>,
    pub method: String,
    pub params: Value,
}

/// Why a call did not get an answer.
#[derive(Debug)]
pub(crate) enum CallError {
    /// The process died (crash, early exit, garbage on stdout, killed): the reason.
    Died(String),
    TimedOut(Duration),
    Cancelled,
}

struct Shared {
    child: Mutex<Option<Child>>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
    death: Mutex<Option<String>>,
    died: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// Stops the process; `reason` becomes the death reason unless it already died.
    fn kill(&self, reason: String) {
        {
            let mut death = lock(&self.death);
            if death.is_none() {
                *death = Some(reason);
            }
        }
        if let Some(child) = lock(&self.child).as_mut() {
            let _ = child.kill();
        }
    }
}

/// A started tool process.
pub(crate) struct Process {
    pub generation: u64,
    shared: Arc<Shared>,
    to_tool: std::sync::mpsc::Sender<String>,
    incoming: tokio::sync::Mutex<mpsc::UnboundedReceiver<Incoming>>,
    next_id: AtomicU64,
}

/// Called once, from the reader thread, when the process is gone (with the reason).
pub(crate) type OnDeath = Box<dyn FnOnce(String) + Send>;

impl Process {
    /// Starts the tool's command in its folder, with the environment of
    /// [`crate::environment`], stderr appended to `log`.
    pub fn start(
        manifest: &Manifest,
        generation: u64,
        log: Arc<ToolLog>,
        workspace: &Path,
        launch: &Launch,
        on_death: OnDeath,
    ) -> Result<Self, String> {
        log.prepare()?;
        log.note(&format!("starting `{}` (process {generation})", manifest.name));
        let (vars, _) = crate::environment::tool_environment(&manifest.env, &launch.never_pass, std::env::vars_os());
        // A relative path with a separator is relative to the tool's folder, not to ours.
        let program = if manifest.command.contains('/') || manifest.command.contains('\\') {
            let p = Path::new(&manifest.command);
            if p.is_relative() {
                manifest.dir.join(p)
            } else {
                p.to_path_buf()
            }
        } else {
            manifest.command.clone().into()
        };
        let mut child = Command::new(&program)
            .args(&manifest.args)
            .current_dir(&manifest.dir)
            .env_clear()
            .envs(vars)
            .env("RESOLVE_DESK_TOOL", &manifest.name)
            .env("RESOLVE_DESK_WORKSPACE", workspace)
            .env(crate::manifest::PROTOCOL_ENV, crate::manifest::PROTOCOL_VERSION.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start `{}` in {}: {e}. Check `command` and `args` in {}.",
                    manifest.command,
                    manifest.dir.display(),
                    manifest.file.display()
                )
            })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (Some(mut stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the tool's stdin/stdout/stderr could not be connected".into());
        };
        let shared = Arc::new(Shared {
            child: Mutex::new(Some(child)),
            pending: Mutex::new(HashMap::new()),
            death: Mutex::new(None),
            died: CancellationToken::new(),
        });
        let (to_tool, lines) = std::sync::mpsc::channel::<String>();
        std::thread::Builder::new()
            .name(format!("tool-{}-stdin", manifest.name))
            .spawn(move || {
                for line in lines {
                    if stdin
                        .write_all(line.as_bytes())
                        .and_then(|_| stdin.write_all(b"\n"))
                        .and_then(|_| stdin.flush())
                        .is_err()
                    {
                        break;
                    }
                }
            })
            .map_err(|e| {
                shared.kill("its stdin could not be written".into());
                format!("cannot start a thread: {e}")
            })?;
        // Dropped when the copier ends: the reader waits for that before reporting a death,
        // so the reason can quote the last line the tool wrote to stderr.
        let (copied, stderr_done) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name(format!("tool-{}-stderr", manifest.name))
            .spawn(move || {
                copy_stderr(stderr, &log);
                drop(copied);
            })
            .map_err(|e| {
                shared.kill("its stderr could not be read".into());
                format!("cannot start a thread: {e}")
            })?;
        let (tx, incoming) = mpsc::unbounded_channel();
        let reader_shared = shared.clone();
        let max_line = launch.limits.max_line_bytes;
        std::thread::Builder::new()
            .name(format!("tool-{}-stdout", manifest.name))
            .spawn(move || read_loop(reader_shared, BufReader::new(stdout), max_line, stderr_done, tx, on_death))
            .map_err(|e| {
                shared.kill("its stdout could not be read".into());
                format!("cannot start a thread: {e}")
            })?;
        Ok(Self {
            generation,
            shared,
            to_tool,
            incoming: tokio::sync::Mutex::new(incoming),
            next_id: AtomicU64::new(1),
        })
    }

    pub fn is_alive(&self) -> bool {
        !self.shared.died.is_cancelled()
    }

    /// Why it died, once it has.
    pub fn death(&self) -> Option<String> {
        if self.is_alive() {
            None
        } else {
            lock(&self.shared.death).clone()
        }
    }

    pub fn kill(&self, reason: impl Into<String>) {
        self.shared.kill(reason.into());
    }

    fn send(&self, message: Value) {
        let _ = self.to_tool.send(message.to_string());
    }

    /// Answers a request of the tool.
    pub fn respond(&self, id: Value, answer: Result<Value, (i64, String)>) {
        let msg = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        };
        self.send(msg);
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Calls `method` and waits for the answer, handing every request or notification of the
    /// tool meanwhile to `handle` (whose answer is sent back for requests). One call at a
    /// time per process (the caller holds the tool's lock).
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancellationToken,
        mut handle: impl FnMut(&Incoming) -> Result<Value, (i64, String)>,
    ) -> Result<Reply, CallError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, mut rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id, tx);
        if !self.is_alive() {
            lock(&self.shared.pending).remove(&id);
            return Err(CallError::Died(self.death().unwrap_or_else(|| "it stopped".into())));
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut incoming = self.incoming.lock().await;
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                biased;
                msg = incoming.recv() => {
                    // The channel closes only with the reader thread: the answer (if any) is
                    // already in `rx`.
                    let Some(msg) = msg else {
                        return match rx.try_recv() {
                            Ok(reply) => Ok(reply),
                            Err(_) => Err(CallError::Died(self.death().unwrap_or_else(|| "it stopped".into()))),
                        };
                    };
                    let answer = handle(&msg);
                    if let Some(rid) = msg.id {
                        self.respond(rid, answer);
                    }
                }
                reply = &mut rx => {
                    // Requests the tool sent before its answer were read first (same pipe),
                    // and are handled before the answer counts.
                    while let Ok(msg) = incoming.try_recv() {
                        let answer = handle(&msg);
                        if let Some(rid) = msg.id {
                            self.respond(rid, answer);
                        }
                    }
                    return match reply {
                        Ok(reply) => Ok(reply),
                        Err(_) => Err(CallError::Died(self.death().unwrap_or_else(|| "it stopped".into()))),
                    };
                }
                _ = &mut deadline => {
                    lock(&self.shared.pending).remove(&id);
                    return Err(CallError::TimedOut(timeout));
                }
                _ = cancel.cancelled() => {
                    lock(&self.shared.pending).remove(&id);
                    self.notify("cancel", json!({"id": id}));
                    return Err(CallError::Cancelled);
                }
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.shared.kill("it was stopped by Resolve Desk".into());
    }
}

/// Copies the tool's stderr into its log until the pipe closes.
fn copy_stderr(mut stderr: std::process::ChildStderr, log: &ToolLog) {
    let mut buf = [0u8; 8192];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                // A log that cannot be written loses these bytes, never the tool.
                let _ = log.write(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

/// One line of a tool's stdout.
#[derive(Debug, PartialEq)]
enum Line {
    /// The line is in the buffer (with its `\n`, unless the stream ended first).
    Read,
    /// The stream ended.
    End,
    /// Longer than the limit: the buffer holds the limit and one byte, the rest is unread.
    TooLong,
}

/// Reads one line into `buf` (cleared first), never more than `max` bytes besides its `\n`.
fn read_line_bounded(reader: &mut impl BufRead, buf: &mut Vec<u8>, max: u64) -> std::io::Result<Line> {
    buf.clear();
    let n = reader.take(max.saturating_add(1)).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(Line::End);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        return Ok(Line::Read);
    }
    if buf.len() as u64 > max {
        return Ok(Line::TooLong);
    }
    Ok(Line::Read)
}

fn read_loop(
    shared: Arc<Shared>,
    mut stdout: BufReader<std::process::ChildStdout>,
    max_line: u64,
    stderr_done: std::sync::mpsc::Receiver<()>,
    tx: mpsc::UnboundedSender<Incoming>,
    on_death: OnDeath,
) {
    let mut line = Vec::new();
    loop {
        // Keep no large buffer once a large message is handled.
        if line.capacity() > 1 << 20 {
            line = Vec::new();
        }
        match read_line_bounded(&mut stdout, &mut line, max_line) {
            Ok(Line::Read) => {}
            Ok(Line::End) | Err(_) => break,
            Ok(Line::TooLong) => {
                shared.kill(format!(
                    "it wrote a line of more than {} to stdout, the limit of one message (setting {LINE_MIB_ENV}, in \
                     MiB); it was stopped. Send smaller messages (split the work into several pushes), or raise \
                     {LINE_MIB_ENV}",
                    shown_bytes(max_line)
                ));
                // Drain until the pipe closes, keeping nothing.
                let _ = std::io::copy(&mut stdout, &mut std::io::sink());
                break;
            }
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            let shown: String = String::from_utf8_lossy(&line).chars().take(120).collect();
            shared.kill(format!(
                "it wrote something that is not UTF-8 to stdout: `{shown}…` (write logs to stderr, one JSON-RPC message per line to stdout)"
            ));
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match parse(text) {
            Some(Message::Response { id, reply }) => {
                if let Some(waiter) = lock(&shared.pending).remove(&id) {
                    let _ = waiter.send(reply);
                }
            }
            Some(Message::Incoming(msg)) => {
                let _ = tx.send(msg);
            }
            None => {
                let shown: String = text.chars().take(120).collect();
                let more = if text.chars().count() > 120 { "…" } else { "" };
                shared.kill(format!(
                    "it wrote something that is not JSON-RPC 2.0 to stdout: `{shown}{more}` (write logs to stderr, one JSON-RPC message per line to stdout)"
                ));
                // Drain until the pipe closes.
            }
        }
    }
    // stdout closed: the process is exiting (or closed it); make sure and reap it.
    let status = {
        let mut child = lock(&shared.child);
        match child.as_mut() {
            Some(c) => {
                let _ = c.kill();
                let status = c.wait();
                *child = None;
                status.ok()
            }
            None => None,
        }
    };
    // What it wrote to stderr last is in the log before anyone reads the reason.
    let _ = stderr_done.recv_timeout(STDERR_DRAIN);
    let reason = {
        let mut death = lock(&shared.death);
        if death.is_none() {
            *death = Some(match status {
                Some(s) => format!("it exited ({s})"),
                None => "it exited".to_string(),
            });
        }
        death.clone().unwrap_or_default()
    };
    on_death(reason.clone());
    shared.died.cancel();
    // Every waiting call learns the reason (its sender is dropped).
    lock(&shared.pending).clear();
    drop(tx);
}

enum Message {
    Response { id: u64, reply: Reply },
    Incoming(Incoming),
}

fn parse(text: &str) -> Option<Message> {
    let Value::Object(obj) = serde_json::from_str::<Value>(text).ok()? else { return None };
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return None;
    }
    if let Some(Value::String(method)) = obj.get("method") {
        return Some(Message::Incoming(Incoming {
            id: obj.get("id").cloned().filter(|v| !v.is_null()),
            method: method.clone(),
            params: obj.get("params").cloned().unwrap_or(Value::Null),
        }));
    }
    let id = obj.get("id")?.as_u64()?;
    if let Some(result) = obj.get("result") {
        return Some(Message::Response { id, reply: Reply::Result(result.clone()) });
    }
    let error = obj.get("error")?;
    let message = error.get("message").and_then(Value::as_str).unwrap_or("(no message)").to_string();
    Some(Message::Response { id, reply: Reply::Error { message } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_tells_messages_from_garbage() {
        assert!(matches!(parse(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#), Some(Message::Response { id: 3, .. })));
        assert!(
            matches!(parse(r#"{"jsonrpc":"2.0","method":"progress","params":{}}"#), Some(Message::Incoming(m)) if m.id.is_none())
        );
        assert!(
            matches!(parse(r#"{"jsonrpc":"2.0","id":"t1","method":"pushPendingAction"}"#), Some(Message::Incoming(m)) if m.id.is_some())
        );
        assert!(parse("hello").is_none());
        assert!(parse(r#"{"id":1,"result":{}}"#).is_none(), "jsonrpc 2.0 is required");
        assert!(parse(r#"{"jsonrpc":"2.0","id":1}"#).is_none());
    }

    #[test]
    fn a_line_past_the_limit_is_refused_without_reading_past_it() {
        let mut buf = Vec::new();
        // An endless line: the reader must stop at the limit, not grow until memory runs out.
        let mut endless = BufReader::new(std::io::repeat(b'x'));
        assert_eq!(read_line_bounded(&mut endless, &mut buf, 1000).unwrap(), Line::TooLong);
        assert_eq!(buf.len(), 1001, "the limit and one byte, nothing more");
        let mut lines = BufReader::new(&b"12345\n123456\n1234"[..]);
        assert_eq!(read_line_bounded(&mut lines, &mut buf, 5).unwrap(), Line::Read);
        assert_eq!(buf, b"12345", "exactly the limit fits");
        assert_eq!(read_line_bounded(&mut lines, &mut buf, 5).unwrap(), Line::TooLong);
        let mut rest = BufReader::new(&b"1234"[..]);
        assert_eq!(read_line_bounded(&mut rest, &mut buf, 5).unwrap(), Line::Read, "a last line without \\n");
        assert_eq!(buf, b"1234");
        assert_eq!(read_line_bounded(&mut rest, &mut buf, 5).unwrap(), Line::End);
    }
}
