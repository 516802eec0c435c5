//! # resolve-desk-core
//!
//! The desk, composed once. Every front end — the window (`src-tauri`), `rdesk run`,
//! `rdesk mcp`, `rdesk agent`, `rdesk serve-socket` — opens a workspace through [`Desk::open`],
//! so a rule about opening a folder (recovery and its notice, which tools load and which may
//! run, pending actions put back, the journal's mirror, the watches) is written here once.
//!
//! Why it is its own crate: the engine knows no tool and no journal; the tools know no
//! journal; the front ends should know no composition. This crate is the floor where they
//! meet. It never depends on Tauri.
//!
//! Modules, in reading order:
//! - [`open`] — [`Desk`], [`DeskOptions`], [`Note`] (what opening found, for the person)
//! - [`trust`] — workspace trust: a folder's own tools are listed but never started until the
//!   person trusts them ([`TrustStore`], [`trust::gate`], [`Fingerprint`])
//! - [`tools`] — the built-in tools
//! - [`journal`] — pending actions restored and mirrored, decisions recorded
//! - [`history`] — the history searched, paged and exported
//! - [`undo`] — undo data kept per applied change set, its retention, Undo and Redo
//! - [`leave`] — leaving with pending actions: discard them all, as the person, with a reason
//! - [`error`] — [`DeskError`]: a code front ends branch on and a message for people

pub mod error;
pub mod history;
pub mod journal;
pub mod leave;
pub mod open;
pub mod tools;
pub mod trust;
pub mod undo;

pub use error::{DeskError, DeskErrorCode};
pub use history::{HistoryPage, MAX_PAGE};
pub use open::{Desk, DeskOptions, Note, OpenError};
pub use trust::{Fingerprint, FolderTools, ToolLaunch, TrustEntry, TrustError, TrustState, TrustStore};
pub use undo::UndoResult;
