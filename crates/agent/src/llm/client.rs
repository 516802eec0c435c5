//! The HTTP client: one streamed Chat Completions request, with retries.
//!
//! - `POST {base_url}/chat/completions` with `stream: true`; the answer is read as server-sent
//!   events (`data: {chunk}` … `data: [DONE]`). A server that ignores `stream` and answers
//!   with one JSON completion is read too.
//! - 429 and 5xx are retried (at most `max_attempts` in all) after `Retry-After` seconds
//!   when the server gives it, else after an exponential backoff (0.5 s, 1 s, 2 s, … ≤ 8 s).
//!   Only the status is retried: once a stream has begun, a failure ends the request.
//! - The API key is read from the environment variable the settings name when the client is
//!   made. When it is unset no `Authorization` header is sent (local servers need none), and
//!   a 401 then says which variable to set. The key is never logged, never formatted (its
//!   `Debug` is redacted), and any echo of it in a server's message is blanked out.
//! - Cancellation: the token is watched while connecting, waiting to retry and reading; a
//!   cancelled request drops the response stream, which closes the connection.

use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderMap, ACCEPT, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use reqwest::StatusCode;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::config::{ConfigError, ProviderConfig};
use super::sse::SseParser;
use super::wire::{ChatRequest, ChunkBody, ToolCallAssembler, WireToolCall};

/// The longest `Retry-After` honoured; a longer one is capped to this.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// How much of an unexpected answer an error message quotes.
const QUOTE_LIMIT: usize = 300;

/// An API key. Its `Debug` never shows it; it is only ever written into the header.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// What went wrong talking to the provider. Messages name the URL, model or variable
/// involved and what to do; none ever contains the API key.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{url} answered 401 Unauthorized: {hint}{server}")]
    Unauthorized { url: String, env: String, hint: String, server: String },
    #[error("{url} does not know the model {model:?} (HTTP 404){server}. Check the model name, and that the base URL {base_url} is the provider's API root (usually ending in /v1).")]
    ModelNotFound { url: String, base_url: String, model: String, server: String },
    #[error("could not connect to {url}: connection refused. Is the server running, and is the base URL right?")]
    ConnectionRefused { url: String },
    #[error(
        "could not connect to {url} within {secs} s (connect timeout). Is the address right and the server reachable?"
    )]
    ConnectTimeout { url: String, secs: u64 },
    #[error("{url} sent nothing for {secs} s (idle timeout); the request was abandoned. Try again, or raise idle_timeout_secs in the agent settings.")]
    IdleTimeout { url: String, secs: u64 },
    #[error("could not reach {url}: {message}")]
    Connect { url: String, message: String },
    #[error("{url} answered HTTP {status} after {attempts} attempt(s){server}")]
    Status { url: String, status: u16, attempts: u32, server: String },
    #[error("{url} sent a malformed stream chunk ({message}); received: {received}")]
    Malformed { url: String, message: String, received: String },
    #[error("{url} reported an error in the stream: {message}")]
    Provider { url: String, message: String },
    #[error("the connection to {url} broke while the answer was streaming: {message}")]
    Stream { url: String, message: String },
    #[error("the answer from {url} ended before it was complete (no finish reason and no [DONE]){received}")]
    Truncated { url: String, received: String },
    #[error("cancelled")]
    Cancelled,
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

/// A stable code per error kind, for UIs to branch on.
impl LlmError {
    pub fn code(&self) -> &'static str {
        match self {
            LlmError::Unauthorized { .. } => "unauthorized",
            LlmError::ModelNotFound { .. } => "model_not_found",
            LlmError::ConnectionRefused { .. } => "connection_refused",
            LlmError::ConnectTimeout { .. } => "connect_timeout",
            LlmError::IdleTimeout { .. } => "idle_timeout",
            LlmError::Connect { .. } => "connect",
            LlmError::Status { .. } => "http_status",
            LlmError::Malformed { .. } => "malformed_response",
            LlmError::Provider { .. } => "provider_error",
            LlmError::Stream { .. } => "stream_broken",
            LlmError::Truncated { .. } => "truncated",
            LlmError::Cancelled => "cancelled",
            LlmError::Config(_) => "config",
            LlmError::Client(_) => "client",
        }
    }
}

/// What the client reports while a request runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ClientEvent {
    /// A piece of assistant text, as it arrived.
    TextDelta(String),
    /// The request got `status` and will be sent again after `delay_ms`.
    Retrying { attempt: u32, max_attempts: u32, delay_ms: u64, status: u16 },
}

/// The assistant message a request produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssistantReply {
    /// `None` when the model wrote no text.
    pub content: Option<String>,
    /// In the order the model made them.
    pub tool_calls: Vec<WireToolCall>,
    pub finish_reason: Option<String>,
}

/// A Chat Completions client for one provider configuration.
#[derive(Debug, Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    config: ProviderConfig,
    key: Option<ApiKey>,
}

impl LlmClient {
    /// A client for `config`, reading the key from the variable `config.api_key_env` names
    /// (none when it is unset or empty).
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        let key = std::env::var(&config.api_key_env).ok().filter(|k| !k.is_empty()).map(ApiKey);
        Self::with_key(config, key)
    }

    /// A client with an explicit key (or none).
    pub fn with_key(config: ProviderConfig, key: Option<ApiKey>) -> Result<Self, LlmError> {
        config.validate()?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(config.connect_timeout_secs.max(1)))
            .read_timeout(Duration::from_secs(config.idle_timeout_secs.max(1)))
            .build()
            .map_err(|e| LlmError::Client(e.to_string()))?;
        Ok(LlmClient { http, config, key })
    }

    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// Whether a key will be sent.
    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// Sends `request` (retrying 429/5xx) and reads the streamed answer to its end.
    pub async fn complete(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ClientEvent) + Send),
    ) -> Result<AssistantReply, LlmError> {
        let url = self.config.endpoint();
        let max_attempts = self.config.max_attempts.max(1);
        let mut attempt = 1;
        let response = loop {
            let mut builder = self.http.post(&url).header(ACCEPT, "text/event-stream").json(request);
            if let Some(key) = &self.key {
                builder = builder.header(AUTHORIZATION, format!("Bearer {}", key.0));
            }
            let response = tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                r = builder.send() => r.map_err(|e| self.transport_error(&url, &e))?,
            };
            let status = response.status();
            if status.is_success() {
                break response;
            }
            let retryable = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            if retryable && attempt < max_attempts {
                let delay = retry_delay(response.headers(), attempt);
                on_event(ClientEvent::Retrying {
                    attempt,
                    max_attempts,
                    delay_ms: delay.as_millis() as u64,
                    status: status.as_u16(),
                });
                drop(response);
                tokio::select! {
                    _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                    _ = tokio::time::sleep(delay) => {}
                }
                attempt += 1;
                continue;
            }
            let body = tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                b = response.text() => b.unwrap_or_default(),
            };
            return Err(self.status_error(&url, status, attempt, &body));
        };
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if is_json {
            let body = tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                b = response.text() => b.map_err(|e| self.transport_error(&url, &e))?,
            };
            return self.whole_completion(&url, &body, on_event);
        }
        self.read_stream(&url, response, cancel, on_event).await
    }

    async fn read_stream(
        &self,
        url: &str,
        response: reqwest::Response,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ClientEvent) + Send),
    ) -> Result<AssistantReply, LlmError> {
        let mut stream = response.bytes_stream();
        let mut parser = SseParser::new();
        let mut reply = Reply::default();
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                n = stream.next() => n,
            };
            let Some(bytes) = next else { break };
            let bytes = bytes.map_err(|e| self.transport_error(url, &e))?;
            let events = parser.feed(&bytes).map_err(|e| LlmError::Malformed {
                url: url.into(),
                message: e.to_string(),
                received: self.quote(&String::from_utf8_lossy(&bytes)),
            })?;
            for event in events {
                if event.data.trim() == "[DONE]" {
                    return Ok(reply.finish());
                }
                let chunk: ChunkBody = serde_json::from_str(&event.data).map_err(|e| LlmError::Malformed {
                    url: url.into(),
                    message: format!("not a Chat Completions chunk: {e}"),
                    received: self.quote(&event.data),
                })?;
                reply.add(self, url, &chunk, on_event)?;
            }
        }
        // No [DONE]: accept a message the server said was finished, refuse a cut one.
        if reply.finish_reason.is_some() {
            return Ok(reply.finish());
        }
        let rest = parser.unfinished();
        let received =
            if rest.trim().is_empty() { String::new() } else { format!("; received: {}", self.quote(&rest)) };
        Err(LlmError::Truncated { url: url.into(), received })
    }

    fn whole_completion(
        &self,
        url: &str,
        body: &str,
        on_event: &mut (dyn FnMut(ClientEvent) + Send),
    ) -> Result<AssistantReply, LlmError> {
        let chunk: ChunkBody = serde_json::from_str(body).map_err(|e| LlmError::Malformed {
            url: url.into(),
            message: format!("not a Chat Completions response: {e}"),
            received: self.quote(body),
        })?;
        let mut reply = Reply::default();
        reply.add(self, url, &chunk, on_event)?;
        Ok(reply.finish())
    }

    fn status_error(&self, url: &str, status: StatusCode, attempts: u32, body: &str) -> LlmError {
        let message = server_message(body).map(|m| self.quote(&m));
        let server = message.map(|m| format!(" (server said: {m})")).unwrap_or_default();
        let env = self.config.api_key_env.clone();
        match status {
            StatusCode::UNAUTHORIZED => {
                let hint = if self.key.is_some() {
                    format!("the API key in {env} was refused. Set {env} to a valid key for this provider.")
                } else {
                    format!("no API key was sent because {env} is not set. Set {env} to your API key (or name another variable in the agent settings).")
                };
                LlmError::Unauthorized { url: url.into(), env, hint, server }
            }
            StatusCode::NOT_FOUND => LlmError::ModelNotFound {
                url: url.into(),
                base_url: self.config.base_url.clone(),
                model: self.config.model.clone(),
                server,
            },
            _ => LlmError::Status { url: url.into(), status: status.as_u16(), attempts, server },
        }
    }

    fn transport_error(&self, url: &str, e: &reqwest::Error) -> LlmError {
        let refused = std::iter::successors(Some(e as &dyn std::error::Error), |e| e.source()).any(|e| {
            e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        });
        if refused {
            return LlmError::ConnectionRefused { url: url.into() };
        }
        if e.is_connect() && e.is_timeout() {
            return LlmError::ConnectTimeout { url: url.into(), secs: self.config.connect_timeout_secs };
        }
        if e.is_timeout() {
            return LlmError::IdleTimeout { url: url.into(), secs: self.config.idle_timeout_secs };
        }
        let message = self.quote(&error_chain(e));
        if e.is_connect() {
            LlmError::Connect { url: url.into(), message }
        } else {
            LlmError::Stream { url: url.into(), message }
        }
    }

    /// `text` shortened for an error message, with any echo of the key blanked out.
    fn quote(&self, text: &str) -> String {
        let mut s = match &self.key {
            Some(k) if !k.0.is_empty() => text.replace(&k.0, "<redacted>"),
            _ => text.to_string(),
        };
        if s.chars().count() > QUOTE_LIMIT {
            s = s.chars().take(QUOTE_LIMIT).collect::<String>() + "…";
        }
        s
    }
}

#[derive(Default)]
struct Reply {
    content: String,
    tools: ToolCallAssembler,
    finish_reason: Option<String>,
}

impl Reply {
    fn add(
        &mut self,
        client: &LlmClient,
        url: &str,
        chunk: &ChunkBody,
        on_event: &mut (dyn FnMut(ClientEvent) + Send),
    ) -> Result<(), LlmError> {
        if let Some(err) = &chunk.error {
            let message =
                err.get("message").and_then(|m| m.as_str()).map(String::from).unwrap_or_else(|| err.to_string());
            return Err(LlmError::Provider { url: url.into(), message: client.quote(&message) });
        }
        for choice in chunk.choices.iter().filter(|c| c.index == 0) {
            for delta in [&choice.delta, &choice.message].into_iter().flatten() {
                if let Some(text) = delta.content.as_deref().filter(|t| !t.is_empty()) {
                    self.content.push_str(text);
                    on_event(ClientEvent::TextDelta(text.to_string()));
                }
                for (position, piece) in delta.tool_calls.iter().flatten().enumerate() {
                    self.tools.add(position, piece);
                }
            }
            if let Some(reason) = &choice.finish_reason {
                self.finish_reason = Some(reason.clone());
            }
        }
        Ok(())
    }

    fn finish(self) -> AssistantReply {
        AssistantReply {
            content: if self.content.is_empty() { None } else { Some(self.content) },
            tool_calls: self.tools.finish(),
            finish_reason: self.finish_reason,
        }
    }
}

/// `Retry-After` in seconds when given (capped), else 0.5 s · 2^(attempt-1), at most 8 s.
fn retry_delay(headers: &HeaderMap, attempt: u32) -> Duration {
    let given = headers.get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<f64>().ok());
    match given {
        Some(secs) if secs.is_finite() && secs >= 0.0 => Duration::from_secs_f64(secs).min(MAX_RETRY_AFTER),
        _ => Duration::from_millis(500u64.saturating_mul(1 << (attempt - 1).min(4))),
    }
}

/// `error.message` of an OpenAI-style error body, else the body itself (when not empty).
fn server_message(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        let e = v.get("error")?;
        e.get("message").and_then(|m| m.as_str()).or(e.as_str()).map(String::from)
    });
    Some(message.unwrap_or_else(|| body.to_string()))
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_are_honoured_and_capped_else_backoff() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_delay(&h, 1), Duration::from_millis(500));
        assert_eq!(retry_delay(&h, 3), Duration::from_secs(2));
        assert_eq!(retry_delay(&h, 30), Duration::from_secs(8));
        h.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_delay(&h, 1), Duration::from_secs(2));
        h.insert(RETRY_AFTER, "100000".parse().unwrap());
        assert_eq!(retry_delay(&h, 1), MAX_RETRY_AFTER);
    }

    #[test]
    fn the_key_never_shows_in_debug_or_in_quotes() {
        let client =
            LlmClient::with_key(ProviderConfig::new("http://127.0.0.1:1/v1", "m"), Some(ApiKey::new("sk-SECRET")))
                .unwrap();
        assert!(!format!("{client:?}").contains("sk-SECRET"));
        assert_eq!(client.quote("bad key sk-SECRET given"), "bad key <redacted> given");
    }

    #[test]
    fn server_messages_are_read_from_openai_error_bodies() {
        assert_eq!(server_message(r#"{"error":{"message":"nope","type":"x"}}"#).as_deref(), Some("nope"));
        assert_eq!(server_message("plain").as_deref(), Some("plain"));
        assert_eq!(server_message(" "), None);
    }
}
