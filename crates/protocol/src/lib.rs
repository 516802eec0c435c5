//! resolve-protocol — the wire types between the desktop shell and its web UI.
//!
//! Why this crate exists: the UI is a view of the engine's session, and the
//! only thing the two share is data crossing Tauri's IPC. Keeping those types
//! here (and nowhere else) gives one place to change the contract, and lets
//! the TypeScript side be *generated* from them with `ts-rs` instead of being
//! written twice. The generated file is committed at
//! `ui/src/ipc/generated/protocol.ts`; `cargo test -p resolve-protocol` fails
//! when it drifts (regenerate with `RD_UPDATE_TS=1 cargo test -p resolve-protocol`).
//!
//! Conventions, all enforced by serde attributes:
//! - fields are `camelCase` on the wire;
//! - enums with data are tagged `{"kind": "...", ...}`; plain enums are
//!   `camelCase` strings;
//! - `u64` counters and unix-millisecond times are TypeScript `number`;
//! - optional values are `null`, never absent — except the hidden-character findings
//!   ([`hidden`]), which are absent when there are none, so a clean text's payload is
//!   unchanged;
//! - free JSON (tool parameters, JSON Schemas, tool details) is
//!   `serde_json::Value`, TypeScript `unknown`.
//!
//! The committed JSON files in `crates/protocol/fixtures/` are read by the
//! tests here *and* by the UI's contract tests, so both sides agree on them.
//!
//! This crate depends on serde, serde_json and ts-rs only: it knows nothing of
//! the engine or of Tauri. It is the ground floor: the engine, the journal, the
//! agent loop and the desk use its words — `Actor`, `ActionStatus`, `ActionKind`,
//! `ActionCounts`, `FileChange`, `DiffLineKind`, `CommentSide`, `RenameStatus`,
//! `TurnOutcome`, `LeaveOut`, `PersonEdit`, `HiddenKind`, `HistoryQuery`,
//! `HistoryOutcome`, `ExportFormat` are defined here once. Where agents, `rdesk`
//! and the journal read a word `snake_case` and the window `camelCase`, the field
//! takes the other form with `#[serde(with = "resolve_protocol::snake")]`
//! ([`snake`]). Kept apart on purpose: structs whose multi-word field names differ
//! by contract (`Proposal`: `call_id` for `rdesk`, `callId` for the window;
//! `CommentDraft`: `start_line` in a `resolve` call), and the views that add what
//! only the window needs (hidden characters as UTF-16 ranges, the highlighter's
//! language, badges): `FileDiff`, `FileEntry`, `RenameRow`, `HistoryEntry`,
//! `ReviewComment`, `ActionSummary`, `AgentEvent`. The shell converts the engine's
//! values into those views.
//!
//! Modules (one concept each):
//! - [`ipc`] — command and event names, `IpcError { code, message }`;
//! - [`session`] — the open workspace ([`SessionInfo`]);
//! - [`folders`] — one desk, many folders: the folder tabs and the inbox over all of them;
//! - [`queue`] — the pending-action stack as the UI sees it;
//! - [`diff`] — per-file diffs of a change-set action and rename tables;
//! - [`hidden`] — characters a person cannot see, or that look like others, and where they are;
//! - [`resolve`] — apply/discard outcomes and the decision history;
//! - [`tool`] — tool catalogue, tool runs, progress, scripts;
//! - [`agent`] — the conversation panel's events, its log, the provider settings;
//! - [`notice`] — banners from the backend (journal failures, recovered applies);
//! - [`stale`] — live staleness: a stale file's diff since the preview;
//! - [`partial`] — partial apply: what an Apply leaves out, an `ast_edit` file's replacements;
//! - [`review`] — line comments on a pending action and the review sent with a decision;
//! - [`snake`] — the `snake_case` form of a shared word, for agents and the journal;
//! - [`typescript`] — the generated TypeScript text.

pub mod agent;
pub mod diff;
pub mod folders;
pub mod hidden;
pub mod ipc;
pub mod notice;
pub mod partial;
pub mod queue;
pub mod resolve;
pub mod review;
pub mod session;
pub mod snake;
pub mod stale;
pub mod tool;
pub mod typescript;
pub mod vocab;

pub use agent::{
    AgentErrorCode, AgentEvent, AgentSettings, AgentToolCall, AgentUpdate, ApiKeySource, ConversationView,
    NewConversationOutcome, ResolvedInfo, TurnOutcome,
};
pub use diff::{DiffLine, DiffLineKind, FileChange, FileDiff, FileEntry, FileTexts, Hunk, RenameRow, RenameStatus};
pub use folders::{DeskSettings, FolderInfo, FolderList, FoldersChanged, InboxItem, RevealAction};
pub use hidden::{HiddenChar, HiddenKind, LineHidden};
pub use ipc::{CloseRequested, EventBatch, IpcError, IpcErrorCode, QueueChanged, ShellEvent};
pub use notice::{Notice, NoticeAction, NoticeLevel};
pub use partial::{FileReplacement, FileReplacements, LeaveOut, PieceUnit};
pub use queue::{ActionCounts, ActionKind, ActionSummary, QueueSnapshot, RoundInfo, ToolCallInfo};
pub use resolve::{
    EditedFile, ExportFormat, ExportOutcome, HistoryEntry, HistoryOutcome, HistoryPage, HistoryQuery, PersonEdit,
    ResolveDetails, ResolveOutcome, UndoInfo, UndoState,
};
pub use review::{CommentDraft, CommentSide, EarlierComment, Review, ReviewComment};
pub use session::{Policy, SessionInfo};
pub use stale::SincePreview;
pub use tool::{ScriptStep, ToolInfo, ToolLog, ToolProgress, ToolRunOutcome};
pub use vocab::{ActionStatus, Actor, Proposal, ResolveChoice};
