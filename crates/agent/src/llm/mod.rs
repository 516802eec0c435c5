//! The OpenAI-compatible Chat Completions provider: settings ([`config`]), the HTTP client
//! with streaming, retries and typed errors ([`client`]), the event-stream parser ([`sse`])
//! and the wire types ([`wire`]).

pub mod client;
pub mod config;
pub mod sse;
pub mod wire;

pub use client::{ApiKey, AssistantReply, ClientEvent, LlmClient, LlmError};
pub use config::{ConfigError, ProviderConfig, CONFIG_FILE, DEFAULT_API_KEY_ENV};
pub use wire::{ChatRequest, FunctionCall, FunctionTool, Message, WireToolCall};
