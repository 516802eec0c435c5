//! # resolve-agent
//!
//! Drivers that make tool calls on a [`resolve_engine::Session`]. Today there is one: the
//! scripted driver ([`script`]), which replays a JSON Lines script of tool calls — what
//! `rdesk run` and the app's "Run script…" use, and what QA uses to replay preview
//! workflows. An LLM driver would live beside it and use the same session API
//! (`offered_tools`, `tool_choice`, `take_reminders`, `call`).

pub mod script;

pub use script::{parse_line, run_script, run_step, PendingSummary, ScriptError, ScriptLine, StepReport};
