//! The IPC surface: command and event names, and the error every command
//! returns on failure.
//!
//! Every Tauri command returns `Result<T, IpcError>`. The UI branches on
//! [`IpcError::code`], never on the message text, which is for people.

use std::fmt;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Names of the Tauri commands the UI invokes (snake_case, `verb_noun`).
/// Argument keys are camelCase, as Tauri v2 expects from JavaScript.
pub mod commands {
    /// `() -> SessionInfo`
    pub const GET_SESSION: &str = "get_session";
    /// `() -> QueueSnapshot`
    pub const LIST_ACTIONS: &str = "list_actions";
    /// `{ actionId } -> FileEntry[]`
    pub const GET_ACTION_FILES: &str = "get_action_files";
    /// `{ actionId, path, context: number | null } -> FileDiff`
    pub const GET_FILE_DIFF: &str = "get_file_diff";
    /// `{ actionId } -> RenameRow[]`
    pub const GET_ACTION_RENAMES: &str = "get_action_renames";
    /// `{ action: "apply" | "discard", reason, expectedId, leaveOut: LeaveOut | null } -> ResolveOutcome`
    /// (`leaveOut`: a partial apply)
    pub const RESOLVE_ACTION: &str = "resolve_action";
    /// `() -> HistoryEntry[]`, newest first
    pub const LIST_HISTORY: &str = "list_history";
    /// `() -> ToolInfo[]`
    pub const LIST_TOOLS: &str = "list_tools";
    /// `{ name, params } -> ToolRunOutcome`; emits `tool-progress` while it runs
    pub const RUN_TOOL: &str = "run_tool";
    /// `{ actionId } -> ToolRunOutcome`; re-runs the call that produced the action
    pub const RERUN_ACTION: &str = "rerun_action";
    /// `{ text } -> ScriptStep[]` (JSON Lines, one `{"tool", "params"}` per line)
    pub const RUN_SCRIPT: &str = "run_script";
    /// `{ path } -> SessionInfo`: opens the folder beside the others (or shows it when it is
    /// open already) and shows it
    pub const OPEN_WORKSPACE: &str = "open_workspace";
    /// `() -> FolderList`: every open folder, in the order opened
    pub const LIST_FOLDERS: &str = "list_folders";
    /// `{ root } -> SessionInfo`: shows another open folder (every other command then acts on it)
    pub const SELECT_FOLDER: &str = "select_folder";
    /// `{ root } -> FolderList`: closes one open folder (its pending actions stay kept for
    /// next time unless discarded first with `discard_all { folder }`); the last one cannot be
    /// closed
    pub const CLOSE_FOLDER: &str = "close_folder";
    /// `() -> InboxItem[]`: every open folder's pending actions, newest push first
    pub const LIST_INBOX: &str = "list_inbox";
    /// `() -> DeskSettings`: notifications and the tray icon on or off
    pub const GET_DESK_SETTINGS: &str = "get_desk_settings";
    /// `{ settings: DeskSettings } -> DeskSettings`
    pub const SAVE_DESK_SETTINGS: &str = "save_desk_settings";
    /// `() -> string[]`, most recent first
    pub const RECENT_WORKSPACES: &str = "recent_workspaces";
    /// `{ policy: "human" | "agent" } -> SessionInfo`; refused while actions are pending
    pub const SET_POLICY: &str = "set_policy";
    /// `{ prompt } -> number` (the turn); the turn runs in the background and emits `agent-event`
    pub const START_AGENT_TURN: &str = "start_agent_turn";
    /// `() -> void`; cancels the running turn (the `turnDone` event follows)
    pub const STOP_AGENT_TURN: &str = "stop_agent_turn";
    /// `{ discardReason: string | null } -> NewConversationOutcome`; discards pending actions
    /// first (a reason is required then)
    pub const NEW_CONVERSATION: &str = "new_conversation";
    /// `() -> ConversationView`
    pub const GET_CONVERSATION: &str = "get_conversation";
    /// `() -> AgentSettings`
    pub const GET_AGENT_SETTINGS: &str = "get_agent_settings";
    /// `{ baseUrl, model, apiKeyEnv, resolveWaitSecs?, apiKey?, forgetApiKey? } -> AgentSettings`
    /// (`apiKey` is stored in the system keyring, never in the file)
    pub const SAVE_AGENT_SETTINGS: &str = "save_agent_settings";
    /// The banners to show now: `Vec<`[`crate::Notice`]`>`.
    pub const LIST_NOTICES: &str = "list_notices";
    /// `{ id }`: the person closed a dismissible banner; returns the remaining list.
    pub const DISMISS_NOTICE: &str = "dismiss_notice";
    /// `{ noticeId, actionId }`: the person clicked a banner's button
    /// ([`crate::NoticeAction`]); returns the banners to show now.
    pub const NOTICE_ACTION: &str = "notice_action";
    /// `{ actionId } -> number`: "Not now" on an action an agent waits on: every waiting agent
    /// is told the person will review it later and nothing was applied; the action stays
    /// pending. Returns how many waits were answered (0: nobody waited any more).
    pub const SNOOZE_ACTION: &str = "snooze_action";
    /// `{ reason, folder: string | null }`: the person discards every pending action of
    /// `folder` (a root; `null`: of every open folder), top first, with `reason` (verbatim; a
    /// blank one is refused); returns each discard's text.
    pub const DISCARD_ALL: &str = "discard_all";
    /// `{ proceed }`: the person answered a `close-requested`: `true` closes the window
    /// (pending actions are kept for next time unless discarded first), `false` stays.
    pub const CONFIRM_CLOSE: &str = "confirm_close";
    /// `{ query: HistoryQuery, offset, limit }` → [`crate::HistoryPage`]: one page of the
    /// workspace's history matching the query, newest first.
    pub const SEARCH_HISTORY: &str = "search_history";
    /// `{ query: HistoryQuery, format, path }` → [`crate::ExportOutcome`]: writes every
    /// matching entry to `path` (replaced whole, never half-written).
    pub const EXPORT_HISTORY: &str = "export_history";
    /// `{ actionId, path } -> SincePreview`: a stale file's previewed content → the disk now
    pub const GET_SINCE_PREVIEW: &str = "get_since_preview";
    /// `{ decisionId, reason } -> ResolveOutcome`: reverts an applied change set from the
    /// history (its own decision, action `undo`); `isError` with the files that changed since
    /// the apply when refused (nothing written).
    pub const UNDO_DECISION: &str = "undo_decision";
    /// `{ decisionId, reason } -> ResolveOutcome`: writes an undone action's bytes again.
    pub const REDO_DECISION: &str = "redo_decision";
    /// `{ actionId, path } -> FileTexts`: both sides of one file whole (highlighting, unfolding)
    pub const GET_FILE_TEXTS: &str = "get_file_texts";
    /// `() -> void`: cancels the window's tool run, re-run or script in flight (it then fails
    /// with `cancelled` and pushes nothing)
    pub const CANCEL_TOOL_RUN: &str = "cancel_tool_run";
    /// `{ actionId, path } -> FileReplacements`: the single replacements of one `ast_edit`
    /// file, which a partial apply can leave out one by one
    pub const GET_FILE_REPLACEMENTS: &str = "get_file_replacements";
    /// `{ actionId, draft: CommentDraft } -> ReviewComment[]`: a comment on lines of a pending
    /// action (quoted by the backend); the action's comments after it, in file order
    pub const ADD_COMMENT: &str = "add_comment";
    /// `{ actionId, commentId, text } -> ReviewComment[]`: a comment's new text
    pub const EDIT_COMMENT: &str = "edit_comment";
    /// `{ actionId, commentId } -> ReviewComment[]`: a comment deleted
    pub const DELETE_COMMENT: &str = "delete_comment";
    /// `{ name } -> ToolLog`: the end of an external tool's stderr log
    pub const READ_TOOL_LOG: &str = "read_tool_log";
    /// `{ after: number | null } -> EventBatch`: the [`super::events`] pushed after number
    /// `after`, waiting (up to about 25 s) for one when there are none; `after: null` answers at
    /// once with the number to go on from. The page keeps one such call in flight.
    pub const NEXT_EVENTS: &str = "next_events";
}

/// Names of the events the shell sends the page (kebab-case), fetched with
/// [`commands::NEXT_EVENTS`] (they are not Tauri events: see `src-tauri/src/events.rs`).
pub mod events {
    /// Payload [`super::QueueChanged`]; the UI refetches the queue and history.
    pub const QUEUE_CHANGED: &str = "queue-changed";
    /// Payload [`crate::ToolProgress`].
    pub const TOOL_PROGRESS: &str = "tool-progress";
    /// Payload [`crate::AgentUpdate`]: one event of an agent turn.
    pub const AGENT_EVENT: &str = "agent-event";
    /// Payload `Vec<`[`crate::Notice`]`>`: every banner to show now (replaces the list).
    pub const NOTICES_CHANGED: &str = "notices-changed";
    /// Payload [`super::CloseRequested`]: the window is asked to close while actions are
    /// pending; the UI asks the person and answers with `confirm_close`.
    pub const CLOSE_REQUESTED: &str = "close-requested";
    /// Payload [`crate::FoldersChanged`]: a folder was opened, closed or shown, or one's
    /// stack changed; the UI reads `list_folders` (and, when its `active` is another folder
    /// than the one on screen, everything of that one).
    pub const FOLDERS_CHANGED: &str = "folders-changed";
    /// Payload [`crate::RevealAction`]: a notification was clicked; the window shows that
    /// folder (the backend selected it) with that action.
    pub const REVEAL_ACTION: &str = "reveal-action";
}

/// One event for the page: its name (one of [`events`]) and payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ShellEvent {
    pub name: String,
    #[ts(type = "unknown")]
    pub payload: serde_json::Value,
}

/// The answer of [`commands::NEXT_EVENTS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EventBatch {
    /// In the order they were pushed; empty when none came while the call waited.
    pub events: Vec<ShellEvent>,
    /// The number to pass as `after` next time.
    #[ts(type = "number")]
    pub last: u64,
    /// Some events between `after` and these are gone (the page fell more than 10,000 behind):
    /// it reloads what it shows (queue, banners, conversation).
    pub missed: bool,
}

/// Payload of the `close-requested` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CloseRequested {
    /// How many actions are pending, over every open folder.
    pub pending: u32,
}

/// Payload of the `queue-changed` event: the store's new revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct QueueChanged {
    /// Monotonically increasing; bumped on every push, resolve, clear or status change.
    #[ts(type = "number")]
    pub revision: u64,
}

/// Why a command failed, as a stable machine-readable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum IpcErrorCode {
    /// The stack is empty.
    NoPendingAction,
    /// `expectedId` is not the id of the top action (a double click or a race).
    IdMismatch,
    /// The reason was empty after trimming.
    ReasonRequired,
    /// The files the preview read changed on disk.
    Stale,
    /// The action's apply failed; it stays on the stack.
    ApplyFailed,
    /// Another resolve or run is in progress.
    Busy,
    /// Arguments or tool parameters did not validate.
    InvalidParams,
    UnknownTool,
    UnknownAction,
    UnknownFile,
    PathOutsideWorkspace,
    NotFound,
    Io,
    Cancelled,
    /// The session was closed (another workspace was opened, or the window is closing).
    Closed,
    /// A tool of a folder the person has not trusted: nothing ran (the message says how to
    /// trust the folder).
    Untrusted,
    Internal,
}

impl IpcErrorCode {
    /// The wire spelling of the code (`"noPendingAction"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            IpcErrorCode::NoPendingAction => "noPendingAction",
            IpcErrorCode::IdMismatch => "idMismatch",
            IpcErrorCode::ReasonRequired => "reasonRequired",
            IpcErrorCode::Stale => "stale",
            IpcErrorCode::ApplyFailed => "applyFailed",
            IpcErrorCode::Busy => "busy",
            IpcErrorCode::InvalidParams => "invalidParams",
            IpcErrorCode::UnknownTool => "unknownTool",
            IpcErrorCode::UnknownAction => "unknownAction",
            IpcErrorCode::UnknownFile => "unknownFile",
            IpcErrorCode::PathOutsideWorkspace => "pathOutsideWorkspace",
            IpcErrorCode::NotFound => "notFound",
            IpcErrorCode::Io => "io",
            IpcErrorCode::Cancelled => "cancelled",
            IpcErrorCode::Closed => "closed",
            IpcErrorCode::Untrusted => "untrusted",
            IpcErrorCode::Internal => "internal",
        }
    }
}

/// The error half of every command's `Result`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct IpcError {
    pub code: IpcErrorCode,
    /// For people; names the offending value. Never parsed by the UI.
    pub message: String,
}

impl IpcError {
    pub fn new(code: IpcErrorCode, message: impl Into<String>) -> Self {
        IpcError { code, message: message.into() }
    }
}

impl fmt::Display for IpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for IpcError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_code_wire_spelling_matches_as_str() {
        for code in [
            IpcErrorCode::NoPendingAction,
            IpcErrorCode::IdMismatch,
            IpcErrorCode::ReasonRequired,
            IpcErrorCode::Stale,
            IpcErrorCode::ApplyFailed,
            IpcErrorCode::Busy,
            IpcErrorCode::InvalidParams,
            IpcErrorCode::UnknownTool,
            IpcErrorCode::UnknownAction,
            IpcErrorCode::UnknownFile,
            IpcErrorCode::PathOutsideWorkspace,
            IpcErrorCode::NotFound,
            IpcErrorCode::Io,
            IpcErrorCode::Cancelled,
            IpcErrorCode::Internal,
        ] {
            let json = serde_json::to_string(&code).expect("serialize code");
            assert_eq!(json, format!("\"{}\"", code.as_str()), "serde and as_str must agree for {code:?}");
        }
    }

    #[test]
    fn error_serializes_as_code_and_message() {
        let err = IpcError::new(IpcErrorCode::IdMismatch, "The top action is a2, not a1.");
        let json = serde_json::to_value(&err).expect("serialize error");
        assert_eq!(
            json,
            serde_json::json!({"code": "idMismatch", "message": "The top action is a2, not a1."}),
            "errors cross as {{code, message}}"
        );
        assert_eq!(err.to_string(), "idMismatch: The top action is a2, not a1.");
    }
}
