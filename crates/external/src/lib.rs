//! # resolve-external
//!
//! Custom tools without recompiling: a tool is a folder with a manifest (`tool.json`: name,
//! label, description, JSON Schema of its parameters, the command that starts it, optional
//! time-outs) and a program in any language. The program runs as a child process speaking
//! JSON-RPC 2.0 over stdio, one message per line (see `docs/TOOLS.md`): the host calls
//! `execute`, the tool may call `pushPendingAction` (a closure-style action whose `apply` /
//! `reject` the host later asks the same process for, or a change set the engine applies
//! itself) and send `progress`.
//!
//! - [`manifest`] — `Manifest`, `LoadProblem` (the file and the field at fault)
//! - [`host`] — discovery (`<workspace>/.resolve/tools/*/`, `<config>/resolve-desk/tools/*/`),
//!   [`ExternalTools`] (load into a session, reload, watch with `notify`, logs)
//! - `tool` — the engine `Tool` of an external tool: process started on first use, stopped
//!   when idle, restarted after it died; actions of a dead process become orphaned
//! - `process` — the child process and its JSON-RPC lines (a line past
//!   [`ToolLimits::max_line_bytes`] stops it)
//! - [`environment`] — what a tool process gets of the desk's environment: an allow-list and
//!   the manifest's `env`, never the variables of `Config::never_pass` (the LLM key)
//! - `log` — the tool's stderr log: private (`0600` in a `0700` folder), rotated at
//!   [`ToolLimits::log_bytes`] to `<name>.log.1`
//! - [`limits`] — `ToolLimits`, read from `RESOLVE_DESK_TOOL_LINE_MIB` and
//!   `RESOLVE_DESK_TOOL_LOG_KIB`
//! - `changes` — a tool's change set turned into a hash-pinned engine change set
//!
//! No Tauri here: the app and `rdesk` both use this crate.

pub mod changes;
pub mod environment;
pub mod host;
pub mod limits;
mod log;
pub mod manifest;
mod process;
mod tool;

pub use changes::sha256_hex;
pub use environment::DEFAULT_NEVER_PASS;
pub use host::{
    default_log_dir, discover, make_tools, read_tail, user_tools_dir, Config, Discovery, ExternalTools, Gate,
    ReloadReport, ToolWatcher, WORKSPACE_TOOLS_DIR,
};
pub use limits::ToolLimits;
pub use log::read_log_tail;
pub use manifest::{LoadProblem, Manifest, Timeouts, ToolSource, MANIFEST_FILE, PROTOCOL_ENV, PROTOCOL_VERSION};
pub use tool::{orphaned_message, ExternalTool};
