//! A fake OpenAI-compatible provider on 127.0.0.1 (feature `fake-llm`; tests and benchmarks
//! only). It speaks the real wire protocol over real HTTP: `POST /v1/chat/completions`
//! answered with server-sent events (`data: {chunk}\n\n` … `data: [DONE]\n\n`), tool-call
//! arguments split across chunks, or with a JSON error and a status. Replies are scripted in
//! order, one per request; every request body and its `Authorization` header are recorded.
//! A request with no scripted reply left gets a 400 saying so.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// One piece of a streamed answer.
#[derive(Debug, Clone)]
pub enum FakeChunk {
    /// Sent as `data: {text}\n\n`.
    Data(String),
    /// Sent as is (for malformed streams).
    Raw(String),
    /// Like `Data`, and the moment it is handed to the connection is recorded ([`FakeLlm::marks`]).
    Marked(String),
    /// The stream stops here and never ends (the client must give up or cancel).
    Hang,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum FakeReply {
    Stream(Vec<FakeChunk>),
    Status { status: u16, headers: Vec<(String, String)>, body: String },
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
    .to_string()
}

/// Cuts `s` into `n` pieces at character boundaries (some may be empty).
fn split(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let size = chars.len().div_ceil(n.max(1)).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

impl FakeReply {
    /// A streamed text answer (no tool calls), the text cut in two chunks.
    pub fn text(text: &str) -> Self {
        let mut chunks = vec![FakeChunk::Data(chunk(json!({"role": "assistant", "content": ""}), None))];
        for piece in split(text, 2) {
            chunks.push(FakeChunk::Data(chunk(json!({"content": piece}), None)));
        }
        chunks.push(FakeChunk::Data(chunk(json!({}), Some("stop"))));
        chunks.push(FakeChunk::Data("[DONE]".into()));
        FakeReply::Stream(chunks)
    }

    /// A streamed message calling tools `(id, name, arguments)`, with optional text first.
    /// Each call's first chunk has its id and name; its argument text follows in three
    /// fragments. The chunk that completes the last call is [`FakeChunk::Marked`].
    pub fn tool_calls(text: Option<&str>, calls: &[(&str, &str, Value)]) -> Self {
        Self::tool_calls_raw(text, &calls.iter().map(|(i, n, a)| (*i, *n, a.to_string())).collect::<Vec<_>>())
    }

    /// Like [`tool_calls`](Self::tool_calls) with raw argument texts (may be invalid JSON).
    pub fn tool_calls_raw(text: Option<&str>, calls: &[(&str, &str, String)]) -> Self {
        let mut chunks = vec![FakeChunk::Data(chunk(json!({"role": "assistant", "content": null}), None))];
        if let Some(text) = text {
            chunks.push(FakeChunk::Data(chunk(json!({"content": text}), None)));
        }
        for (index, (id, name, args)) in calls.iter().enumerate() {
            chunks.push(FakeChunk::Data(chunk(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
                None,
            )));
            for piece in split(args, 3) {
                chunks.push(FakeChunk::Data(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    None,
                )));
            }
        }
        if let Some(pos) = chunks.iter().rposition(|c| matches!(c, FakeChunk::Data(_))) {
            if let FakeChunk::Data(d) = chunks[pos].clone() {
                chunks[pos] = FakeChunk::Marked(d);
            }
        }
        chunks.push(FakeChunk::Data(chunk(json!({}), Some("tool_calls"))));
        chunks.push(FakeChunk::Data("[DONE]".into()));
        FakeReply::Stream(chunks)
    }

    /// Some text, then a stream that never ends (for cancellation and idle timeouts).
    pub fn text_then_hang(text: &str) -> Self {
        FakeReply::Stream(vec![
            FakeChunk::Data(chunk(json!({"role": "assistant", "content": text}), None)),
            FakeChunk::Hang,
        ])
    }

    /// A JSON error answer `{"error": {"message", "type"}}` with `status`.
    pub fn error(status: u16, message: &str) -> Self {
        FakeReply::Status {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: json!({"error": {"message": message, "type": "fake_error"}}).to_string(),
        }
    }

    /// Adds a response header (e.g. `Retry-After`) to a status reply.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let FakeReply::Status { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }
}

/// What a request carried.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub body: Value,
    pub authorization: Option<String>,
}

#[derive(Default)]
struct Inner {
    replies: VecDeque<FakeReply>,
    requests: Vec<RecordedRequest>,
    marks: Vec<Instant>,
    dropped_streams: usize,
}

#[derive(Clone, Default)]
struct Shared {
    inner: Arc<Mutex<Inner>>,
    changed: Arc<Notify>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The running fake server. Dropping it stops accepting connections.
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Shared,
    stop: CancellationToken,
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl FakeLlm {
    /// Starts a server on 127.0.0.1 (a free port) answering with `replies` in order.
    pub async fn start(replies: Vec<FakeReply>) -> std::io::Result<Self> {
        let shared = Shared::default();
        shared.lock().replies = replies.into();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = Router::new().route("/v1/chat/completions", post(handle)).with_state(shared.clone());
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).with_graceful_shutdown(stopped.cancelled_owned()).await;
        });
        Ok(FakeLlm { addr, shared, stop })
    }

    /// `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Adds replies at the end of the script.
    pub fn push(&self, reply: FakeReply) {
        self.shared.lock().replies.push_back(reply);
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// When each [`FakeChunk::Marked`] chunk was handed to the connection.
    pub fn marks(&self) -> Vec<Instant> {
        self.shared.lock().marks.clone()
    }

    /// How many response streams ended because the client went away.
    pub fn dropped_streams(&self) -> usize {
        self.shared.lock().dropped_streams
    }

    /// Waits until `cond` holds for the server's state (checked on every change).
    pub async fn wait_until(&self, cond: impl Fn(&FakeLlm) -> bool) {
        loop {
            let changed = self.shared.changed.notified();
            if cond(self) {
                return;
            }
            changed.await;
        }
    }
}

/// Counts a stream dropped before its end (the client disconnected).
struct StreamGuard {
    shared: Shared,
    finished: bool,
}

impl StreamGuard {
    fn disarm(&mut self) {
        self.finished = true;
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.lock().dropped_streams += 1;
            self.shared.changed.notify_waiters();
        }
    }
}

async fn handle(State(shared): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    let authorization = headers.get("authorization").and_then(|v| v.to_str().ok()).map(String::from);
    let reply = {
        let mut inner = shared.lock();
        inner.requests.push(RecordedRequest { body, authorization });
        inner.replies.pop_front()
    };
    shared.changed.notify_waiters();
    match reply {
        None => (StatusCode::BAD_REQUEST, "fake: no scripted reply left for this request").into_response(),
        Some(FakeReply::Status { status, headers, body }) => {
            let mut response = Response::builder().status(status);
            for (k, v) in headers {
                response = response.header(k, v);
            }
            response.body(Body::from(body)).unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }
        Some(FakeReply::Stream(chunks)) => {
            let guard = StreamGuard { shared: shared.clone(), finished: false };
            let stream = futures::stream::unfold((chunks.into_iter(), guard), |(mut it, mut guard)| async move {
                let next = it.next();
                let text = match next {
                    None => {
                        guard.disarm();
                        return None;
                    }
                    Some(FakeChunk::Hang) => {
                        futures::future::pending::<()>().await;
                        return None;
                    }
                    Some(FakeChunk::Data(d)) => format!("data: {d}\n\n"),
                    Some(FakeChunk::Raw(r)) => r,
                    Some(FakeChunk::Marked(d)) => {
                        guard.shared.lock().marks.push(Instant::now());
                        format!("data: {d}\n\n")
                    }
                };
                Some((Ok::<_, std::convert::Infallible>(text), (it, guard)))
            });
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .header("cache-control", "no-cache")
                .body(Body::from_stream(stream))
                .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }
    }
}
