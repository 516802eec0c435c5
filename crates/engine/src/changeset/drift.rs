//! Drift: how far the disk has moved from what a change set's preview saw, checked without
//! applying (for live staleness, see [`crate::staleness`]).
//!
//! The rules are the verification's (`plan`), with the same words for each file
//! (`content changed`, `deleted`, `now exists`, `missing`, `target now exists`, …), so a
//! stale status found by a re-check reads exactly like the refusal an apply would give. Only
//! the entries touching the paths asked about are read: a re-check after one save hashes
//! one file, whatever the size of the change set.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use super::lock::WorkspaceLock;
use super::{ApplyError, Change, ChangeSet, ContentHash, EntryKind};
use crate::diff::{FileDiff, MAX_DIFF_BYTES};
use crate::workspace::Workspace;

/// Lines of context in a since-preview diff (as in the preview's own diffs).
const CONTEXT: usize = 3;

/// Which paths a re-check looks at.
#[derive(Debug, Clone, Copy)]
pub enum Affected<'a> {
    /// Workspace-relative paths (with `/`) that changed; a folder stands for everything
    /// below it (a folder moved or deleted as a whole is one event).
    Paths(&'a HashSet<String>),
    /// Everything (the watcher lost events, or the action was just restored).
    All,
}

impl Affected<'_> {
    fn touches(&self, path: &str) -> bool {
        match self {
            Affected::All => true,
            // The path itself or one of its folders (the root is ""): as many lookups as the
            // path is deep, however large the batch.
            Affected::Paths(set) => {
                set.contains(path) || set.contains("") || path.match_indices('/').any(|(i, _)| set.contains(&path[..i]))
            }
        }
    }
}

/// What is at a previewed path now, compared with the preview (one file of a stale action).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SincePreview {
    /// The path as the change set names it (a rename's source or target).
    pub path: String,
    /// Why it is stale (`content changed`, `deleted`, …), or `None` when it is as previewed.
    pub why: Option<String>,
    /// The previewed content → the disk now (a create's or a rename target's previewed
    /// content is nothing; a rename source keeps no bytes, only its hash: a summary says so).
    pub diff: FileDiff,
}

impl ChangeSet {
    /// Every path the change set depends on, as it names them: edited, deleted and created
    /// files, and both sides of each rename.
    pub fn watched_paths(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for change in &self.changes {
            match change {
                Change::Edit { path, .. } | Change::Delete { path, .. } | Change::Create { path, .. } => {
                    out.push(path.as_str())
                }
                Change::Rename { from, to, .. } => {
                    out.push(from.as_str());
                    out.push(to.as_str());
                }
            }
        }
        out
    }

    /// The files whose disk state no longer matches the preview, among the entries touching
    /// `affected` (paths as the change set names them, each with why, in change order). The
    /// same rules as the apply's verification: an empty list means an apply would not be
    /// refused as stale for these entries.
    pub fn drift(&self, ws: &Workspace, affected: Affected<'_>) -> Vec<(String, String)> {
        let mut stale = Vec::new();
        let rename_sources: HashSet<std::path::PathBuf> = self
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Rename { from, .. } => ws.resolve_entry(from).ok(),
                _ => None,
            })
            .collect();
        for change in &self.changes {
            match change {
                Change::Edit { path, before_hash, .. } | Change::Delete { path, before_hash, .. } => {
                    if !affected.touches(&normalised(ws, path, false)) {
                        continue;
                    }
                    let missing = if matches!(change, Change::Edit { .. }) { "deleted" } else { "already deleted" };
                    let Ok(abs) = ws.resolve(path) else {
                        stale.push((path.clone(), "outside the workspace now".into()));
                        continue;
                    };
                    match file_hash(&abs) {
                        Ok(Some(h)) if h == *before_hash => {}
                        Ok(Some(_)) => stale.push((path.clone(), "content changed".into())),
                        Ok(None) => stale.push((path.clone(), missing.into())),
                        Err(e) => stale.push((path.clone(), format!("unreadable: {e}"))),
                    }
                }
                Change::Create { path, .. } => {
                    if !affected.touches(&normalised(ws, path, false)) {
                        continue;
                    }
                    let exists = ws.resolve(path).map(|abs| fs::symlink_metadata(abs).is_ok()).unwrap_or(false);
                    if exists {
                        stale.push((path.clone(), "now exists".into()));
                    }
                }
                Change::Rename { from, to, kind, before_hash } => {
                    let (Ok(from_abs), Ok(to_abs)) = (ws.resolve_entry(from), ws.resolve_entry(to)) else {
                        stale.push((from.clone(), "outside the workspace now".into()));
                        continue;
                    };
                    if affected.touches(&normalised(ws, from, true)) {
                        if let Some(why) = source_drift(&from_abs, *kind, before_hash) {
                            stale.push((from.clone(), why));
                            continue;
                        }
                    }
                    if from_abs != to_abs && affected.touches(&normalised(ws, to, true)) {
                        if let Ok(target) = fs::symlink_metadata(&to_abs) {
                            let same_inode = fs::symlink_metadata(&from_abs)
                                .map(|m| m.ino() == target.ino() && m.dev() == target.dev())
                                .unwrap_or(false);
                            if !rename_sources.contains(&to_abs) && !same_inode {
                                stale.push((to.clone(), "target now exists".into()));
                            }
                        }
                    }
                }
            }
        }
        stale
    }

    /// What changed at `path` (as [`drift`](Self::drift) names it) since the preview: the
    /// previewed content → the disk now. `None` when the change set does not name `path`.
    pub fn since_preview(&self, ws: &Workspace, path: &str) -> Option<SincePreview> {
        let change = self.changes.iter().find(|c| match c {
            Change::Rename { from, to, .. } => from == path || to == path,
            other => other.path() == path,
        })?;
        // Only this file is read (a stale action of a thousand files asks once per file).
        let only: HashSet<String> = [normalised(ws, path, false), normalised(ws, path, true)].into_iter().collect();
        let why = self.drift(ws, Affected::Paths(&only)).into_iter().find(|(p, _)| p == path).map(|(_, why)| why);
        let diff = match change {
            Change::Edit { before, .. } | Change::Delete { before, .. } => match read_now(ws, path, false) {
                Ok(Some(now)) => FileDiff::compute(path, None, before, &now, CONTEXT),
                Ok(None) => FileDiff::compute(path, None, before, b"", CONTEXT),
                Err(e) => summary_only(path, format!("Cannot read {path} now: {e}")),
            },
            Change::Create { .. } => created_since(ws, path),
            Change::Rename { from, kind, before_hash, .. } if from == path => {
                let abs = ws.resolve_entry(path).ok();
                let text = match abs.as_deref().and_then(|a| source_drift(a, *kind, before_hash)) {
                    None => "Unchanged since the preview".to_string(),
                    Some(why) if why == "missing" => "Missing since the preview (moved or deleted)".to_string(),
                    Some(why) => format!(
                        "{} since the preview (a rename keeps only the hash of the previewed content, so no diff can be shown)",
                        capitalised(&why)
                    ),
                };
                summary_only(path, text)
            }
            Change::Rename { .. } => created_since(ws, path),
        };
        Some(SincePreview { path: path.to_string(), why, diff })
    }
}

/// Runs `f` holding the workspace lock (so it never sees an apply half-way), waiting up to
/// `wait` for an apply in progress; `Ok(None)` when the lock stayed taken.
pub(crate) fn with_workspace_lock<T>(root: &Path, wait: Duration, f: impl FnOnce() -> T) -> io::Result<Option<T>> {
    let lock = if wait.is_zero() { WorkspaceLock::try_acquire(root)? } else { WorkspaceLock::acquire(root, wait)? };
    Ok(lock.map(|_held| f()))
}

/// The stale message for these files, word for word the one an apply refused with.
pub(crate) fn stale_message(files: &[(String, String)]) -> String {
    ApplyError::Stale { files: files.to_vec() }.to_string()
}

/// A path in the form the watcher reports (workspace-relative, symlinks in folders resolved).
fn normalised(ws: &Workspace, path: &str, entry: bool) -> String {
    let abs = if entry { ws.resolve_entry(path) } else { ws.resolve(path) };
    abs.ok().and_then(|a| ws.relative(&a).ok()).unwrap_or_else(|| path.trim_start_matches("./").to_string())
}

/// Why a rename's source is not what the preview saw, or `None`.
fn source_drift(abs: &Path, kind: EntryKind, before_hash: &ContentHash) -> Option<String> {
    let meta = match fs::symlink_metadata(abs) {
        Err(_) => return Some("missing".into()),
        Ok(m) => m,
    };
    let now = if meta.file_type().is_symlink() {
        EntryKind::Symlink
    } else if meta.is_file() {
        EntryKind::File
    } else {
        return Some("no longer a file".into());
    };
    if now != kind {
        return Some("file type changed".into());
    }
    match ContentHash::of_entry(abs, kind) {
        Ok(h) if h == *before_hash => None,
        Ok(_) => Some("content changed".into()),
        Err(e) => Some(format!("unreadable: {e}")),
    }
}

/// The hash of the regular file at `abs`; `Ok(None)` when missing.
fn file_hash(abs: &Path) -> io::Result<Option<ContentHash>> {
    match fs::metadata(abs) {
        Ok(m) if m.is_file() => Ok(Some(ContentHash::of_entry(abs, EntryKind::File)?)),
        Ok(_) => Err(io::Error::other("not a regular file")),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The bytes at `path` now (at most `MAX_DIFF_BYTES + 1`: more is summarised anyway);
/// `Ok(None)` when nothing is there.
fn read_now(ws: &Workspace, path: &str, entry: bool) -> io::Result<Option<Vec<u8>>> {
    let abs = if entry { ws.resolve_entry(path) } else { ws.resolve(path) }.map_err(io::Error::other)?;
    let meta = match fs::symlink_metadata(&abs) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        return Ok(Some(fs::read_link(&abs)?.as_os_str().as_encoded_bytes().to_vec()));
    }
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    fs::File::open(&abs)?.take(MAX_DIFF_BYTES as u64 + 1).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// A path the preview saw empty (a create, a rename's target): nothing → the disk now.
fn created_since(ws: &Workspace, path: &str) -> FileDiff {
    match read_now(ws, path, true) {
        Ok(Some(now)) => FileDiff::compute(path, None, b"", &now, CONTEXT),
        Ok(None) => summary_only(path, "Still absent, as previewed".into()),
        Err(e) => summary_only(path, format!("Cannot read {path} now: {e}")),
    }
}

fn summary_only(path: &str, summary: String) -> FileDiff {
    FileDiff { path: path.to_string(), old_path: None, summary: Some(summary), hunks: Vec::new(), added: 0, removed: 0 }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}
