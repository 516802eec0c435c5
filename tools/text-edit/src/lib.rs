//! # resolve-tool-text-edit
//!
//! The plain text edits a coding agent makes, as previews: nothing is written until the
//! pending action each one pushes is applied (by the person, or by the agent under the
//! `agent` policy).
//!
//! - `write_file {path, content}` creates or replaces one file;
//! - `edit_file {path, edits: [{oldText, newText}], replaceAll?}` replaces exact text (the
//!   shapes of the official filesystem MCP server);
//! - `apply_patch {patch}` takes a `*** Begin Patch` patch (Codex) or a unified diff (`git
//!   diff`: new, deleted and renamed files);
//! - `gate_edit` (hidden): what an outside agent's edit hook pushes (`rdesk hook`): the exact
//!   bytes the agent's own tool would write, as an action the agent writes itself once the
//!   person approves it ([`CustomToolPendingAction::written_by_agent`](resolve_engine::CustomToolPendingAction::written_by_agent)).
//!
//! Every file is pinned to the bytes the preview read (a file changed by hand before the
//! apply makes the action stale), must be inside the folder (no `..`, no symlink that leaves
//! it), text (not binary) and at most [`MAX_FILE_BYTES`]; a file another pending action
//! already changes is refused, naming that action (the stack is per folder and LIFO).
//!
//! Modules, in reading order:
//! - [`files`] — where a path leads, reading it within bounds, the pending-action conflict check
//! - [`edit`] — `oldText` → `newText` replacements and their errors
//! - [`patch`] — the two patch formats, parsed and applied to the previewed bytes
//! - [`preview`] — labels, the result text, pushing the change set
//! - [`tools`] — the four tools

use std::sync::Arc;

pub mod edit;
pub mod files;
pub mod patch;
pub mod preview;
pub mod tools;

pub use files::MAX_FILE_BYTES;
pub use tools::{ApplyPatch, EditFile, GateEdit, WriteFile, APPLY_PATCH, EDIT_FILE, GATE_EDIT, WRITE_FILE};

use resolve_engine::{CustomToolApi, Tool};

/// The factory a session loads: `session.load(resolve_tool_text_edit::factory())`.
pub fn factory() -> impl FnOnce(&CustomToolApi) -> Vec<Arc<dyn Tool>> {
    |api| {
        vec![
            Arc::new(WriteFile::new(api.clone())) as Arc<dyn Tool>,
            Arc::new(EditFile::new(api.clone())) as Arc<dyn Tool>,
            Arc::new(ApplyPatch::new(api.clone())) as Arc<dyn Tool>,
            Arc::new(GateEdit::new(api.clone())) as Arc<dyn Tool>,
        ]
    }
}
