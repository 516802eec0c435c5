//! The OpenAI-compatible Chat Completions provider: settings ([`config`]), the HTTP client
//! with streaming, retries and typed errors ([`client`]), the event-stream parser ([`sse`]),
//! the wire types ([`wire`]), and (feature `keyring`) the API key in the system keyring
//! (`secret`).

pub mod client;
pub mod config;
#[cfg(feature = "keyring")]
pub mod secret;
pub mod sse;
pub mod wire;

pub use client::{ApiKey, AssistantReply, ClientEvent, LlmClient, LlmError};
pub use config::{ConfigError, ProviderConfig, CONFIG_FILE, DEFAULT_API_KEY_ENV};
pub use wire::{ChatRequest, FunctionCall, FunctionTool, Message, WireToolCall};
