//! # resolve-engine
//!
//! The core of Resolve Desk, with no UI and no terminal: agent tools that make far-reaching
//! changes compute a *preview* and push a [`PendingAction`] onto a session's LIFO
//! [`PendingActionStore`]; nothing touches the disk until the `resolve` tool (or a person,
//! through the same tool) applies or discards the top action.
//!
//! Why it is shaped this way:
//! - **Tools propose, the change set writes.** A tool that edits files builds a [`ChangeSet`]
//!   (new contents, creations, deletions, renames), each entry pinned to the content hash the
//!   preview read. Its apply verifies every hash, stages temporary files, renames them into
//!   place and rolls back on any failure, so a preview is exactly what gets written, or
//!   nothing is.
//! - **One door.** Every tool call, including a person's Apply or Discard, goes through
//!   [`Session::call`], so the transcript, the history and the stack can never disagree.
//! - **Events, not polling.** Every change to the stack bumps a revision and is broadcast
//!   ([`PendingActionStore::subscribe`]).
//!
//! Modules, in reading order:
//! - [`tool`] — `Tool`, `ToolResult`, `ToolError`, `ToolContext` (cancellation, progress)
//! - [`registry`] — `ToolRegistry` (unique names; a tool's own parameter check, then unknown keys, then
//!   its JSON Schema)
//! - [`params`] — shared parameter checks: unknown keys named with the known ones, values quoted
//! - [`pending`] — `PendingAction`, `ActionStatus`, `PendingActionStore`, store events
//! - [`limits`] — `PendingLimits`: how many actions, and how many bytes of change sets, a
//!   stack may hold (`RESOLVE_DESK_MAX_PENDING`, `RESOLVE_DESK_MAX_PENDING_MIB`)
//! - [`resolve`] — the hidden built-in `resolve` tool and its rendering rules
//! - [`review`] — `Review`, `Comment`: the person's line comments on a pending action (kept
//!   with it until the decision) and the verdict they go with (apply, partial apply, Request
//!   changes), rendered into the `resolve` result in file order
//! - [`custom`] — `CustomToolApi`, `CustomToolPendingAction`, tool factories
//! - [`workspace`] — the workspace root and the path checks every file access goes through
//! - [`changeset`] — `ChangeSet` — hash-pinned, atomic, all-or-nothing file changes
//! - [`diff`] — `FileDiff`, `Hunk`, `DiffLine` — structured diffs computed with `similar`
//! - [`hidden`] — the characters a person cannot see or that look like others (bidi controls,
//!   zero-width and control characters, unusual spaces, look-alike letters): found here, shown
//!   by every view
//! - [`session`] — `Session` — registry + store + transcript + tool choice + resolve policy
//! - [`stored`] — `StoredAction`, `Session::restore` — pending actions that survive a restart
//!   (change sets rebuilt and re-checked; closures come back orphaned), never applied by it
//! - [`staleness`] — `recheck`: pending actions re-checked against the disk when files change (live stale)
//! - [`undo`] — `UndoRecord` — the pre-images an applied change set replaced; undo and redo
//! - [`waits`] — bounded waits for the person, and decisions kept for agents that were not waiting

pub mod changeset;
pub mod custom;
mod decide;
pub mod diff;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod hidden;
pub mod limits;
pub mod params;
pub mod pending;
pub mod registry;
pub mod resolve;
pub mod review;
pub mod rounds;
pub mod session;
pub mod staleness;
pub mod stored;
pub mod tool;
pub mod undo;
pub mod vocab;
pub mod waits;
pub mod workspace;

pub use changeset::edits::{EditedFile, PersonEdit, EDITS_DIFF_BYTES};
pub use changeset::{
    hunks_of, LeaveOut, LeftOutHunks, LeftOutReplacements, PartialApply, Replacement, ReplacementRow, Replacements,
};
pub use changeset::{
    plural, recover, ActionCounts, ApplyContext, ApplyError, ApplyReport, Change, ChangeSet, ContentHash, EntryKind,
    FileChange, FileSummary, Recovery, RecoveryOutcome, Refusal, RefusalReason,
};
pub use changeset::{Affected, SincePreview};
pub use custom::{CustomToolApi, CustomToolPendingAction, ToolFactory};
pub use diff::{language_for_path, DiffLine, DiffLineKind, FileDiff, Hunk};
pub use limits::{PendingLimits, MAX_PENDING_ENV, MAX_PENDING_MIB_ENV};
pub use pending::{
    ActionId, ActionInfo, ActionKind, ActionStatus, PendingAction, PendingActionStore, Proposal, RenameRow,
    RenameStatus, Round, StoreChange, StoreEvent,
};
pub use registry::{RegistryError, ToolRegistry, ToolSpec};
pub use resolve::{label_parts, render_resolve_header, ApprovedFile, ResolveAction, ResolveDetails, RESOLVE_TOOL_NAME};
/// The `snake_case` form of a shared word, for what agents read (`#[serde(with = ...)]`).
pub use resolve_protocol::snake;
pub use review::{Comment, CommentDraft, CommentError, CommentSide, Review, ReviewRequest};
pub use rounds::{EarlierComment, ReviewState, StoredRound};
pub use session::lean;
pub use session::{
    Actor, CallRecord, HistoryEntry, Observer, Resolve, ResolveOutcome, ResolvePolicy, RestoreReport, Session,
    ToolCall, ToolChoice, TranscriptEntry, Undo, UndoOutcome, AWAIT_DECISION_TOOL_NAME, PREVIEW_REMINDER,
    SET_POLICY_TOOL_NAME,
};
pub use staleness::{recheck, Recheck};
pub use stored::{Persist, PersistFn, PreviewedFile, StoredAction, StoredBody, ORPHANED_MESSAGE};
pub use tool::{Content, ErrorCode, Progress, Tool, ToolContext, ToolError, ToolResult};
pub use undo::{UndoChange, UndoError, UndoHunk, UndoRecord, REDO_TOOL_NAME, UNDO_TOOL_NAME};
pub use waits::{Delivery, MailboxChange, MailboxPersistFn, WaitBound, Waits, DEFAULT_RESOLVE_WAIT};
pub use workspace::{Workspace, WorkspaceError};

/// Re-exported so tools can take a cancellation token without depending on tokio-util.
pub use tokio_util::sync::CancellationToken;
