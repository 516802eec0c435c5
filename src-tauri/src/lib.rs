//! # resolve-desk (the desktop shell)
//!
//! A thin Tauri shell over the engine: each command locks the app state, calls the
//! session, converts engine types to wire types (`resolve-protocol`) and returns. No
//! domain decision is made here; the UI is a view of the session.
//!
//! Rooms:
//! - [`app`]: the builder and `run` (command line, joining a running desk, plugins, event loop)
//! - [`state`]: the open folders and the one shown; [`folder`]: one open folder (its desk,
//!   banners, the demo, serving, closing); [`saved`]: the data folder (journal, recent and
//!   reopened folders)
//! - [`nudge`]: a desktop notification when an agent pushes or waits while the window is in the
//!   background, the urgency hint, the pending count in the title; [`tray`]: the tray icon
//! - [`join`]: one desk per user: a second `resolve-desk DIR` opens DIR in the running desk
//! - [`commands`]: the Tauri commands, one per UI need (`verb_noun`)
//! - [`convert`]: engine → wire types
//! - [`events`]: store events → `queue-changed`; tool progress → `tool-progress`
//! - [`agent`]: the conversation with the model per session (turns in a spawned task,
//!   events → `agent-event`, Stop, new conversation)
//! - [`demo`]: the built-in demo workspace
//! - [`notices`]: banners for the window (a broken decision journal, a recovered apply)
//! - [`mcp_socket`]: the user-only socket coding agents join the open session through (MCP)
//! - [`history`]: the History dialog's search, pages and export
//! - [`leave`]: leaving a workspace with pending actions (discard all; the close guard)
//! - [`undo`]: Undo / Redo from the history (undo data in the journal, retention)
//! - [`startup`]: start-up marks (where the time goes before the first paint)
//! - [`memory`]: freed memory back to the system once the app is quiet (`malloc_trim`)
//! - [`renderer`]: WebKitGTK's renderer on a machine without a GPU
//! - [`args`]: the command line (`resolve-desk [WORKSPACE] [--script FILE] …`)

pub mod agent;
pub mod app;
pub mod args;
pub mod commands;
pub mod convert;
pub mod demo;
pub mod events;
pub mod fit;
pub mod folder;
pub mod history;
pub mod join;
pub mod leave;
pub mod mcp_socket;
pub mod memory;
pub mod notices;
pub mod nudge;
pub mod renderer;
pub mod runs;
pub mod saved;
pub mod startup;
pub mod state;
pub mod tray;
pub mod undo;
pub mod wiring;

pub use app::{builder, run};
