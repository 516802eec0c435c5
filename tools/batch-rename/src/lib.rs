//! # resolve-tool-batch-rename
//!
//! `batch_rename_preview`, the reference custom tool of Resolve Desk: rename many files at
//! once with a regular expression, shown first as an old → new table, renamed only when the
//! person (or the agent, under the `agent` policy) applies the pending action it queues.
//!
//! It uses nothing but the public custom tool API, so it doubles as the example to copy.
//!
//! ## How a custom tool is written (a walkthrough of this crate)
//!
//! 1. **A factory.** A session loads tools from a factory that receives the
//!    [`CustomToolApi`] and returns the tools; each tool keeps a clone of the API:
//!    ```no_run
//!    # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//!    use resolve_engine::{Actor, ResolvePolicy, Session};
//!    use serde_json::json;
//!
//!    let session = Session::open("/path/to/folder", ResolvePolicy::Human)?;
//!    session.load(resolve_tool_batch_rename::factory())?;
//!    let preview = session
//!        .call(Actor::Agent, "batch_rename_preview", json!({"files": "photos/*.jpg", "find": "^IMG_", "replace": "holiday-"}))
//!        .await;
//!    println!("{}", preview.text_content()); // the old → new table; nothing renamed yet
//!    let applied = session.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "looks right"})).await;
//!    assert_eq!(applied.text_content(), "Renamed 3 files.");
//!    # Ok(()) }
//!    ```
//! 2. **A [`Tool`].** `name`, `label`, `description`, a JSON Schema for `parameters` (the
//!    session validates calls against it before `execute`; `additionalProperties: false`
//!    makes an unknown key a named error), optionally `check_params` (the tool's own checks,
//!    run first so its messages win; here [`resolve_engine::params`] helpers name the key and
//!    quote the bad value), and `execute` (see [`tool`]).
//! 3. **A preview without side effects.** `execute` reads the disk, checks everything that
//!    can be checked now (here: every new name is valid, no two files collide, no existing
//!    file is overwritten) and refuses with a [`ToolError`](resolve_engine::ToolError) naming the value — nothing is
//!    queued then. See [`plan`] and [`select`].
//! 4. **A pending action.** On success it calls [`CustomToolApi::push_from`] with its call's
//!    [`ToolContext`](resolve_engine::ToolContext) (the action records the call and client) and a
//!    [`CustomToolPendingAction`](resolve_engine::CustomToolPendingAction): a `label` (shown in the queue), `apply(reason)` (makes the
//!    change; here the engine's [`ChangeSet`](resolve_engine::ChangeSet), pinned to the content hash of every file the
//!    preview read, so a stale preview is refused and a failure midway is rolled back),
//!    optional `reject(reason)` (its text replaces the default discard message; here
//!    `with_discard_text`, a text rather than a closure, so it survives a restart with the
//!    action), `details` (structured data for the UI) and `source_tool_name`.
//! 5. **A result for the model.** The preview text, ending with the reminder that nothing was
//!    changed yet. The session then steers the agent to `resolve`.
//!
//! ## Behaviour (SPEC §8)
//!
//! - `files`: paths or globs relative to the workspace (`*` does not cross `/`, `**` does;
//!   `.git` is never walked; a path with glob characters that exists is taken literally).
//! - `find` is matched against each file *name*, never its folder; every non-overlapping
//!   match is replaced by `replace` (regex crate semantics: `$1`, `${name}`, `$$`). A
//!   reference to a capture group `find` does not have (`$1_x`) is refused, not silently
//!   dropped.
//! - Refused: two files to one name, a target that exists and is not renamed away, an empty
//!   name, `.`/`..`, a `/` or NUL, a name over 255 bytes, a target outside the workspace,
//!   no matching file. Chains (`a → a.a`, `a.a → a.a.a`), swaps and case-only renames work.
//! - Folders are listed as skipped, never renamed; symlinks are renamed as links.
//! - Label `Batch rename: <N> file[s]`, source `batch_rename_preview`; apply answers
//!   `Renamed <N> file[s].`, reject `Discarded batch rename of <N> file[s]. Reason: <reason>`.
//!
//! Modules, in reading order:
//! - [`tool`] — the `Tool` implementation and the pending action it pushes
//! - [`select`] — which entries `files` names (literal paths and globs)
//! - [`plan`] — old → new names, and every check made before anything is queued

use std::sync::Arc;

pub mod error;
pub mod plan;
pub mod select;
pub mod tool;

pub use plan::{RenameError, RenamePlan, Row, Status};
pub use tool::{label, BatchRenamePreview, TOOL_NAME};

use resolve_engine::{CustomToolApi, Tool};

/// The factory a session loads: `session.load(resolve_tool_batch_rename::factory())`.
pub fn factory() -> impl FnOnce(&CustomToolApi) -> Vec<Arc<dyn Tool>> {
    |api| vec![Arc::new(BatchRenamePreview::new(api.clone())) as Arc<dyn Tool>]
}
