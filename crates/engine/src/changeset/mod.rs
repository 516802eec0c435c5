//! Change sets: the only way the engine writes files.
//!
//! A tool that previews file changes records them here, each pinned to the content it read:
//! an edit keeps the exact bytes the preview saw (`before`) and the bytes to write (`after`).
//! [`ChangeSet::apply`] then, holding the workspace lock (`lock`):
//! 1. **verifies** every entry against the disk (hash of the current bytes == hash of
//!    `before`; a create's target still missing; a rename's source still there with the same
//!    type and content; every file writable by this user, its owner keepable, not
//!    hard-linked) and refuses with the list — nothing is written;
//! 2. writes the **intent record** (`intent`) and commits in recorded phases
//!    (`commit`): staged temporaries, parked rename sources, then each file moved aside
//!    (its backup hashed again: a racing save is caught and kept) and the new one moved in
//!    without replacing anything that appeared;
//! 3. on any failure, **rolls back** from the disk and the record (`rollback`); a process
//!    killed midway is rolled back by the next open of the workspace ([`recovery`]).
//!
//! Paths are workspace-relative with `/`; every one is resolved through [`Workspace`], and
//! every operation is made relative to folder handles opened without following symlinks
//! (`fsops`).
//!
//! Files: `plan` (verification), `intent`, `record_check` (a record read back is checked
//! before recovery acts on it), `commit`, `rollback`, [`recovery`], `lock`, `fsops`,
//! `metadata` (per-file summaries and totals).

mod commit;
pub mod drift;
pub mod edits;
mod fsops;
mod intent;
mod lock;
mod metadata;
mod on_disk;
mod plan;
mod record_check;
pub mod recovery;
mod rollback;
pub mod select;

use std::fmt;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

pub use drift::{Affected, SincePreview};
pub use intent::RECORD_NAME;
pub use lock::LOCK_WAIT;
use metadata::summarise;
pub use metadata::{ActionCounts, FileChange, FileSummary};
pub use recovery::{recover, ApplyContext, Recovery, RecoveryOutcome, Refusal, RefusalReason, MAX_RECORD_BYTES};
pub use select::{
    grouped, hunks_of, LeaveOut, LeftOutHunks, LeftOutReplacements, PartialApply, Replacement, ReplacementRow,
    Replacements,
};

use crate::diff::{self, FileDiff};
use crate::tool::ToolError;
use crate::workspace::{Workspace, WorkspaceError};

/// BLAKE3 hash of a file's bytes (or of a symlink's target).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash([u8; 32]);

impl ContentHash {
    pub fn of(bytes: &[u8]) -> Self {
        Self(*blake3::hash(bytes).as_bytes())
    }

    /// The hash of what is at `path` now: file bytes, or a symlink's target.
    pub fn of_entry(path: &Path, kind: EntryKind) -> io::Result<Self> {
        match kind {
            EntryKind::File => {
                // Streamed: a folder of large videos must not be read whole into memory.
                let mut hasher = blake3::Hasher::new();
                hasher.update_reader(fs::File::open(path)?)?;
                Ok(Self(*hasher.finalize().as_bytes()))
            }
            EntryKind::Symlink => Ok(Self::of(fs::read_link(path)?.as_os_str().as_encoded_bytes())),
        }
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({})", &self.to_string()[..12])
    }
}

impl Serialize for ContentHash {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// What a directory entry is; renames keep links as links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Symlink,
}

/// One change. `before` is the exact bytes the preview read; its hash is what apply checks.
#[derive(Debug, Clone)]
pub enum Change {
    Edit { path: String, before: Arc<[u8]>, before_hash: ContentHash, after: Arc<[u8]> },
    Create { path: String, contents: Arc<[u8]> },
    Delete { path: String, before: Arc<[u8]>, before_hash: ContentHash },
    Rename { from: String, to: String, kind: EntryKind, before_hash: ContentHash },
}

impl Change {
    /// The path shown for this change (the target for a rename).
    pub fn path(&self) -> &str {
        match self {
            Change::Edit { path, .. } | Change::Create { path, .. } | Change::Delete { path, .. } => path,
            Change::Rename { to, .. } => to,
        }
    }

    /// The bytes this change holds: what the preview read and what it will write (a rename
    /// holds none). What the pending-action bounds and the journal's write queue count.
    pub fn held_bytes(&self) -> u64 {
        match self {
            Change::Edit { before, after, .. } => (before.len() + after.len()) as u64,
            Change::Create { contents, .. } => contents.len() as u64,
            Change::Delete { before, .. } => before.len() as u64,
            Change::Rename { .. } => 0,
        }
    }
}

/// What an apply did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ApplyReport {
    pub edited: usize,
    pub created: usize,
    pub deleted: usize,
    pub renamed: usize,
    /// Non-fatal leftovers (a backup that could not be removed, say).
    pub warnings: Vec<String>,
}

/// Why an apply did not happen. In every case the workspace is as it was before the call,
/// unless `restore_failures` lists what could not be put back (and where it is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("{}", stale_message(.files))]
    Stale { files: Vec<(String, String)> },
    #[error("{0}")]
    Invalid(String),
    /// Files marked read-only are never replaced behind their owner's back.
    #[error(
        "{} read-only: {}. Nothing was written; make {} writable and apply again, or discard this action.",
        plural(.files.len(), "file is", "files are"), .files.join(", "), if .files.len() == 1 { "it" } else { "them" }
    )]
    ReadOnly { files: Vec<String> },
    /// Files that cannot be replaced without changing what they are (another user's file,
    /// a file with several hard links): `(path, why)`.
    #[error(
        "Cannot replace {} without changing {}: {}. Nothing was written; {}",
        plural(.files.len(), "file", "files"),
        if .files.len() == 1 { "it" } else { "them" },
        .files.iter().map(|(p, why)| format!("{p} ({why})")).collect::<Vec<_>>().join("; "),
        "edit it yourself, or discard this action."
    )]
    Refused { files: Vec<(String, String)> },
    /// Another apply holds the workspace lock (another window, or `rdesk`).
    #[error(
        "Another apply is running in this workspace ({root}), in another Resolve Desk window or rdesk. Nothing was written; apply again when it has finished."
    )]
    Busy { root: String },
    #[error("{}", io_message(.path, .op, .message, .restore_failures))]
    Io { path: String, op: &'static str, message: String, restore_failures: Vec<String> },
    /// An apply record at the root that recovery refused (see [`Refusal`]): nothing is
    /// written while it is there.
    #[error(
        "Cannot apply while the apply record {} is there: it was refused, because {}. Nothing was written. Resolve Desk did not write this record, or it was changed since. If no apply of yours was interrupted here, delete it; otherwise check the files it names by hand, then delete it.",
        .refusal.record.display(), .refusal.reason
    )]
    RecordRefused { refusal: Refusal },
    /// An earlier interrupted apply whose rollback could not put everything back: its record
    /// stays until the person has dealt with it.
    #[error(
        "Cannot apply while an earlier interrupted apply is unfinished: {record} names files that could not be put back{}. Nothing was written; put those files right by hand, then delete {record} (or open the folder again to retry).",
        if .problems.is_empty() { String::new() } else { format!(" ({})", .problems.join("; ")) }
    )]
    Unfinished { record: String, problems: Vec<String> },
}

fn stale_message(files: &[(String, String)]) -> String {
    let list: Vec<String> = files.iter().map(|(p, why)| format!("{p} ({why})")).collect();
    format!(
        "Preview is stale: {} changed on disk since the preview: {}. Nothing was written; discard this action or run the preview again.",
        plural(files.len(), "file", "files"),
        list.join(", ")
    )
}

fn io_message(path: &str, op: &str, message: &str, restore_failures: &[String]) -> String {
    if restore_failures.is_empty() {
        format!("Could not {op} {path}: {message}. Every file was restored; nothing was changed.")
    } else {
        format!(
            "Could not {op} {path}: {message}. Restoring failed for: {}. Check these files by hand.",
            restore_failures.join("; ")
        )
    }
}

/// `1 file`, `2 files`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl ApplyError {
    /// The workspace-relative files a stale refusal names.
    pub fn stale_files(&self) -> Vec<String> {
        match self {
            ApplyError::Stale { files } => files.iter().map(|(p, _)| p.clone()).collect(),
            ApplyError::Invalid(_)
            | ApplyError::ReadOnly { .. }
            | ApplyError::Refused { .. }
            | ApplyError::Busy { .. }
            | ApplyError::Io { .. }
            | ApplyError::RecordRefused { .. }
            | ApplyError::Unfinished { .. } => Vec::new(),
        }
    }
}

impl From<ApplyError> for ToolError {
    fn from(e: ApplyError) -> Self {
        match e {
            ApplyError::Stale { .. } => ToolError::Stale { files: e.stale_files(), message: e.to_string() },
            ApplyError::Invalid(m) => ToolError::InvalidParams(m),
            ApplyError::ReadOnly { .. }
            | ApplyError::Refused { .. }
            | ApplyError::Busy { .. }
            | ApplyError::RecordRefused { .. }
            | ApplyError::Unfinished { .. } => ToolError::Failed(e.to_string()),
            ApplyError::Io { .. } => ToolError::Io(e.to_string()),
        }
    }
}

/// An ordered set of file changes pinned to the content they were computed from.
#[derive(Debug, Default)]
pub struct ChangeSet {
    changes: Vec<Change>,
    summaries: OnceLock<Vec<FileSummary>>,
    /// The single replacements of some edits, by path (see [`select`]).
    replacements: std::collections::BTreeMap<String, Arc<Replacements>>,
}

impl Clone for ChangeSet {
    fn clone(&self) -> Self {
        Self { changes: self.changes.clone(), summaries: OnceLock::new(), replacements: self.replacements.clone() }
    }
}

impl ChangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace `path`'s contents: `before` is exactly what the preview read.
    pub fn edit(
        &mut self,
        path: impl Into<String>,
        before: impl Into<Arc<[u8]>>,
        after: impl Into<Arc<[u8]>>,
    ) -> &mut Self {
        let before = before.into();
        let before_hash = ContentHash::of(&before);
        self.push(Change::Edit { path: path.into(), before, before_hash, after: after.into() })
    }

    /// Create `path` (it must not exist at apply time; missing folders are created).
    pub fn create(&mut self, path: impl Into<String>, contents: impl Into<Arc<[u8]>>) -> &mut Self {
        self.push(Change::Create { path: path.into(), contents: contents.into() })
    }

    /// Delete `path`, whose bytes the preview read as `before`.
    pub fn delete(&mut self, path: impl Into<String>, before: impl Into<Arc<[u8]>>) -> &mut Self {
        let before = before.into();
        let before_hash = ContentHash::of(&before);
        self.push(Change::Delete { path: path.into(), before, before_hash })
    }

    /// Rename the entry `from` (a file or a symlink, never followed) to `to`. `before_hash`
    /// is [`ContentHash::of_entry`] at preview time.
    pub fn rename(
        &mut self,
        from: impl Into<String>,
        to: impl Into<String>,
        kind: EntryKind,
        before_hash: ContentHash,
    ) -> &mut Self {
        self.push(Change::Rename { from: from.into(), to: to.into(), kind, before_hash })
    }

    fn push(&mut self, change: Change) -> &mut Self {
        self.changes.push(change);
        self.summaries = OnceLock::new();
        self
    }

    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The bytes its changes hold together ([`Change::held_bytes`]).
    pub fn held_bytes(&self) -> u64 {
        self.changes.iter().map(Change::held_bytes).sum()
    }

    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// Per-file summaries in change order (computed once, on first use).
    pub fn files(&self) -> &[FileSummary] {
        self.summaries.get_or_init(|| self.changes.iter().map(summarise).collect())
    }

    /// Total added and removed lines over all files.
    pub fn line_totals(&self) -> (u64, u64) {
        self.files().iter().fold((0, 0), |(a, r), f| (a + f.added as u64, r + f.removed as u64))
    }

    /// Files, added and removed lines, and renames (saturating at `u32::MAX`).
    pub fn counts(&self) -> ActionCounts {
        let files = self.files();
        let (added, removed) = self.line_totals();
        let to_u32 = |n: u64| n.min(u32::MAX as u64) as u32;
        ActionCounts {
            files: to_u32(files.len() as u64),
            added: to_u32(added),
            removed: to_u32(removed),
            renames: to_u32(files.iter().filter(|f| f.change == FileChange::Renamed).count() as u64),
        }
    }

    /// The hidden and look-alike characters this change set writes (added lines, new names),
    /// and in how many files ([`crate::hidden`]).
    pub fn hidden(&self) -> crate::hidden::ActionFindings {
        let mut out = crate::hidden::ActionFindings::default();
        for f in self.files().iter().filter(|f| !f.hidden.is_empty()) {
            out.tally.add(f.hidden);
            out.files = out.files.saturating_add(1);
        }
        out
    }

    /// The structured diff of one file (by the path shown in [`files`](Self::files)).
    /// Both sides of `path` whole, as text (`None` for a side that does not exist, and for
    /// both sides of a binary or too-large file: no diff is shown for those). `None` when
    /// `path` is not part of the change set.
    pub fn file_texts(&self, path: &str) -> Option<(Option<String>, Option<String>)> {
        let change = self.changes.iter().find(|c| c.path() == path)?;
        let (old, new): (Option<&[u8]>, Option<&[u8]>) = match change {
            Change::Edit { before, after, .. } => (Some(before), Some(after)),
            Change::Create { contents, .. } => (None, Some(contents)),
            Change::Delete { before, .. } => (Some(before), None),
            Change::Rename { .. } => (None, None),
        };
        let shown = |b: &[u8]| !crate::diff::is_binary(b) && b.len() <= crate::diff::MAX_DIFF_BYTES;
        if !old.is_none_or(shown) || !new.is_none_or(shown) {
            return Some((None, None));
        }
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        Some((old.map(text), new.map(text)))
    }

    pub fn diff_file(&self, path: &str, context: usize) -> Option<FileDiff> {
        let change = self.changes.iter().find(|c| c.path() == path)?;
        Some(match change {
            Change::Edit { path, before, after, .. } => FileDiff::compute(path, None, before, after, context),
            Change::Create { path, contents } => FileDiff::compute(path, None, b"", contents, context),
            Change::Delete { path, before, .. } => FileDiff::compute(path, None, before, b"", context),
            Change::Rename { from, to, .. } => FileDiff {
                path: to.clone(),
                old_path: Some(from.clone()),
                summary: Some(format!("Renamed from {from}")),
                hunks: Vec::new(),
                added: 0,
                removed: 0,
            },
        })
    }

    /// A unified diff of every change (renames as `rename from/to` lines).
    pub fn unified_diff(&self, context: usize) -> String {
        let mut out = String::new();
        for change in &self.changes {
            match change {
                Change::Edit { path, before, after, .. } => out.push_str(&diff::unified(path, before, after, context)),
                Change::Create { path, contents } => out.push_str(&diff::unified(path, b"", contents, context)),
                Change::Delete { path, before, .. } => out.push_str(&diff::unified(path, before, b"", context)),
                Change::Rename { from, to, .. } => out.push_str(&format!("rename from {from}\nrename to {to}\n")),
            }
        }
        out
    }

    /// Verifies, then writes everything or nothing (see the module docs), naming no action in
    /// the intent record (`resolve` uses [`apply_with_context`](Self::apply_with_context)).
    pub fn apply(&self, ws: &Workspace) -> Result<ApplyReport, ApplyError> {
        self.apply_with_context(ws, None)
    }

    /// [`apply`](Self::apply), naming `context` (the action being applied) in the intent
    /// record, so a recovery can say which action it was.
    pub fn apply_with_context(&self, ws: &Workspace, context: Option<ApplyContext>) -> Result<ApplyReport, ApplyError> {
        let root = ws.root();
        let shown_root = root.display().to_string();
        let lock = lock::WorkspaceLock::acquire(root, LOCK_WAIT)
            .map_err(|e| ApplyError::Io {
                path: shown_root.clone(),
                op: "lock",
                message: e.to_string(),
                restore_failures: Vec::new(),
            })?
            .ok_or(ApplyError::Busy { root: shown_root.clone() })?;
        // An apply interrupted here earlier (by a process that has since died) is finished
        // first, so this one starts from whole files.
        let recovered = recovery::recover_locked(root);
        match recovered.as_ref().map(|r| &r.outcome) {
            Some(RecoveryOutcome::Refused(refusal)) => {
                return Err(ApplyError::RecordRefused { refusal: refusal.clone() });
            }
            Some(RecoveryOutcome::Incomplete) => {
                let problems = recovered.map(|r| r.problems).unwrap_or_default();
                let record = root.join(RECORD_NAME).display().to_string();
                return Err(ApplyError::Unfinished { record, problems });
            }
            Some(RecoveryOutcome::RolledBack | RecoveryOutcome::Completed) | None => {}
        }
        let plan = self.plan(ws)?;
        let mut tree = fsops::Tree::open(root).map_err(|e| ApplyError::Io {
            path: shown_root,
            op: "open",
            message: e.to_string(),
            restore_failures: Vec::new(),
        })?;
        let mut report = commit::run(&mut tree, &plan, context)?;
        if let Some(r) = recovered {
            report.warnings.insert(0, r.message());
        }
        drop(lock);
        Ok(report)
    }
}

impl From<WorkspaceError> for ApplyError {
    fn from(e: WorkspaceError) -> Self {
        ApplyError::Invalid(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    fn write(ws: &Workspace, p: &str, s: &str) {
        let abs = ws.root().join(p);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, s).unwrap();
    }

    fn read(ws: &Workspace, p: &str) -> String {
        fs::read_to_string(ws.root().join(p)).unwrap()
    }

    fn listing(ws: &Workspace) -> Vec<String> {
        let mut v: Vec<String> = walk(ws.root()).into_iter().map(|p| ws.relative(&p).unwrap()).collect();
        v.sort();
        v
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
        out
    }

    #[test]
    fn file_texts_give_both_sides_whole_and_nothing_for_binary_files() {
        let mut cs = ChangeSet::new();
        cs.edit("a.ts", b"/* one\n two */\nx\n".to_vec(), b"/* one\n two */\ny\n".to_vec())
            .create("new.ts", b"fresh\n".to_vec())
            .delete("gone.ts", b"bye\n".to_vec())
            .edit("logo.png", b"\x89PNG\0\x01".to_vec(), b"\x89PNG\0\x02".to_vec());
        assert_eq!(
            cs.file_texts("a.ts"),
            Some((Some("/* one\n two */\nx\n".to_string()), Some("/* one\n two */\ny\n".to_string())))
        );
        assert_eq!(cs.file_texts("new.ts"), Some((None, Some("fresh\n".to_string()))));
        assert_eq!(cs.file_texts("gone.ts"), Some((Some("bye\n".to_string()), None)));
        assert_eq!(cs.file_texts("logo.png"), Some((None, None)), "no text for a binary file");
        assert_eq!(cs.file_texts("elsewhere.ts"), None);
        let png = cs.files().iter().find(|f| f.path == "logo.png").unwrap();
        assert_eq!((png.old_size, png.new_size), (Some(6), Some(6)));
        assert_eq!(png.old_hash.as_deref(), Some(ContentHash::of(b"\x89PNG\0\x01").to_string().as_str()));
        assert_ne!(png.old_hash, png.new_hash, "each side is hashed");
        let text = cs.files().iter().find(|f| f.path == "a.ts").unwrap();
        assert_eq!(text.old_hash, None, "text files are not hashed for the list (their diff is shown)");
        let created = cs.files().iter().find(|f| f.path == "new.ts").unwrap();
        assert_eq!((created.old_size, created.new_size), (None, Some(6)));
    }

    #[test]
    fn apply_writes_edits_creates_and_deletes() {
        let (_d, ws) = setup();
        write(&ws, "a.txt", "old a\n");
        write(&ws, "gone.txt", "bye\n");
        let mut cs = ChangeSet::new();
        cs.edit("a.txt", b"old a\n".to_vec(), b"new a\n".to_vec())
            .create("sub/dir/new.txt", b"fresh\n".to_vec())
            .delete("gone.txt", b"bye\n".to_vec());
        let report = cs.apply(&ws).unwrap();
        assert_eq!((report.edited, report.created, report.deleted), (1, 1, 1));
        assert_eq!(read(&ws, "a.txt"), "new a\n");
        assert_eq!(read(&ws, "sub/dir/new.txt"), "fresh\n");
        assert_eq!(listing(&ws), vec!["a.txt", "sub/dir/new.txt"], "no temporaries or backups left");
    }

    #[test]
    fn apply_refuses_when_file_changed_since_preview() {
        let (_d, ws) = setup();
        write(&ws, "a.txt", "one\n");
        write(&ws, "b.txt", "two\n");
        let mut cs = ChangeSet::new();
        cs.edit("a.txt", b"one\n".to_vec(), b"ONE\n".to_vec()).edit("b.txt", b"two\n".to_vec(), b"TWO\n".to_vec());
        write(&ws, "b.txt", "edited behind our back\n");
        let err = cs.apply(&ws).unwrap_err();
        assert_eq!(err.stale_files(), vec!["b.txt"]);
        assert!(
            err.to_string()
                .starts_with("Preview is stale: 1 file changed on disk since the preview: b.txt (content changed)."),
            "{err}"
        );
        assert_eq!(read(&ws, "a.txt"), "one\n", "nothing is written when one file is stale");
        let tool_err: ToolError = err.into();
        assert_eq!(tool_err.code(), "stale");
    }

    #[test]
    fn deleted_file_is_stale() {
        let (_d, ws) = setup();
        write(&ws, "a.txt", "one\n");
        let mut cs = ChangeSet::new();
        cs.edit("a.txt", b"one\n".to_vec(), b"ONE\n".to_vec());
        fs::remove_file(ws.root().join("a.txt")).unwrap();
        assert!(matches!(cs.apply(&ws), Err(ApplyError::Stale { files }) if files[0].1 == "deleted"));
    }

    #[test]
    fn mode_is_kept() {
        let (_d, ws) = setup();
        write(&ws, "run.sh", "echo 1\n");
        fs::set_permissions(ws.root().join("run.sh"), fs::Permissions::from_mode(0o751)).unwrap();
        let mut cs = ChangeSet::new();
        cs.edit("run.sh", b"echo 1\n".to_vec(), b"echo 2\n".to_vec());
        cs.apply(&ws).unwrap();
        let mode = fs::metadata(ws.root().join("run.sh")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
    }

    #[test]
    fn read_only_files_are_refused_and_nothing_is_written() {
        let (_d, ws) = setup();
        write(&ws, "a.txt", "a\n");
        write(&ws, "locked.txt", "l\n");
        fs::set_permissions(ws.root().join("locked.txt"), fs::Permissions::from_mode(0o444)).unwrap();
        let mut cs = ChangeSet::new();
        cs.edit("a.txt", b"a\n".to_vec(), b"A\n".to_vec()).edit("locked.txt", b"l\n".to_vec(), b"L\n".to_vec());
        let err = cs.apply(&ws).unwrap_err();
        assert_eq!(
            err.to_string(),
            "1 file is read-only: locked.txt. Nothing was written; make it writable and apply again, or discard this action."
        );
        assert_eq!((read(&ws, "a.txt"), read(&ws, "locked.txt")), ("a\n".into(), "l\n".into()));
        fs::set_permissions(ws.root().join("locked.txt"), fs::Permissions::from_mode(0o644)).unwrap();
        cs.apply(&ws).expect("applies once the file is writable");
        assert_eq!(read(&ws, "locked.txt"), "L\n");
    }

    #[test]
    fn swaps_and_chains_rename_through_temporaries() {
        let (_d, ws) = setup();
        write(&ws, "x_1", "X");
        write(&ws, "1_x", "ONE");
        write(&ws, "a", "A");
        write(&ws, "a.a", "AA");
        let h = |p: &str| ContentHash::of_entry(&ws.root().join(p), EntryKind::File).unwrap();
        let mut cs = ChangeSet::new();
        cs.rename("x_1", "1_x", EntryKind::File, h("x_1"))
            .rename("1_x", "x_1", EntryKind::File, h("1_x"))
            .rename("a", "a.a", EntryKind::File, h("a"))
            .rename("a.a", "a.a.a", EntryKind::File, h("a.a"));
        assert_eq!(cs.apply(&ws).unwrap().renamed, 4);
        assert_eq!(read(&ws, "1_x"), "X");
        assert_eq!(read(&ws, "x_1"), "ONE");
        assert_eq!(read(&ws, "a.a"), "A");
        assert_eq!(read(&ws, "a.a.a"), "AA");
        assert_eq!(listing(&ws), vec!["1_x", "a.a", "a.a.a", "x_1"]);
    }

    #[test]
    fn rename_onto_an_existing_file_is_refused() {
        let (_d, ws) = setup();
        write(&ws, "a", "A");
        write(&ws, "b", "B");
        let mut cs = ChangeSet::new();
        cs.rename("a", "b", EntryKind::File, ContentHash::of(b"A"));
        let err = cs.apply(&ws).unwrap_err();
        assert!(err.to_string().contains("b (target now exists)"), "{err}");
        assert_eq!((read(&ws, "a"), read(&ws, "b")), ("A".into(), "B".into()));
    }

    #[test]
    fn the_same_path_twice_is_invalid() {
        let (_d, ws) = setup();
        write(&ws, "a", "A");
        let mut cs = ChangeSet::new();
        cs.edit("a", b"A".to_vec(), b"1".to_vec()).edit("./a", b"A".to_vec(), b"2".to_vec());
        assert!(matches!(cs.apply(&ws), Err(ApplyError::Invalid(m)) if m.contains("twice")));
        assert_eq!(read(&ws, "a"), "A");
    }

    #[test]
    fn paths_outside_the_workspace_are_refused() {
        let (_d, ws) = setup();
        let mut cs = ChangeSet::new();
        cs.create("../escape.txt", b"x".to_vec());
        let err = cs.apply(&ws).unwrap_err();
        assert_eq!(err.to_string(), "Path is outside the workspace: ../escape.txt");
    }

    #[test]
    fn create_refuses_when_target_appeared() {
        let (_d, ws) = setup();
        let mut cs = ChangeSet::new();
        cs.create("n.txt", b"x".to_vec());
        write(&ws, "n.txt", "someone else");
        assert!(matches!(cs.apply(&ws), Err(ApplyError::Stale { .. })));
        assert_eq!(read(&ws, "n.txt"), "someone else");
    }

    #[test]
    fn summaries_and_diffs_are_per_file() {
        let mut cs = ChangeSet::new();
        cs.edit("a.ts", b"a\nb\n".to_vec(), b"a\nc\nd\n".to_vec()).create("n.ts", b"x\n".to_vec());
        let files = cs.files();
        assert_eq!(files[0].change, FileChange::Modified);
        assert_eq!((files[0].added, files[0].removed), (2, 1));
        assert_eq!(files[1].change, FileChange::Added);
        assert_eq!(cs.line_totals(), (3, 1));
        assert_eq!(cs.counts(), ActionCounts { files: 2, added: 3, removed: 1, renames: 0 });
        assert_eq!(cs.diff_file("a.ts", 3).unwrap().hunks.len(), 1);
        assert!(cs.diff_file("missing", 3).is_none());
        assert!(cs.unified_diff(3).contains("+++ b/n.ts"));
    }
}
