//! Verification: every entry of a change set checked against the disk before anything is
//! written. The result is the list of steps [`super::commit`] carries out, or the refusal
//! (stale, read-only, invalid) with nothing written.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{ApplyError, Change, ChangeSet, ContentHash, EntryKind};
use crate::workspace::Workspace;

/// A verified step of the commit.
pub(super) enum Step {
    /// Write `contents` at `abs` (replacing the file when `meta` is its metadata, creating it
    /// otherwise).
    Replace {
        abs: PathBuf,
        contents: Arc<[u8]>,
        meta: Option<fs::Metadata>,
    },
    Delete {
        abs: PathBuf,
    },
    Move {
        from: PathBuf,
        to: PathBuf,
    },
}

impl ChangeSet {
    pub(super) fn plan(&self, ws: &Workspace) -> Result<Vec<Step>, ApplyError> {
        let mut stale = Vec::new();
        let mut read_only = Vec::new();
        let mut steps = Vec::new();
        let mut touched: HashSet<PathBuf> = HashSet::new();
        let rename_sources: HashSet<PathBuf> = self
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Rename { from, .. } => ws.resolve_entry(from).ok(),
                _ => None,
            })
            .collect();
        let resolve = |p: &str, entry: bool| -> Result<PathBuf, ApplyError> {
            let r = if entry { ws.resolve_entry(p) } else { ws.resolve(p) };
            r.map_err(|e| ApplyError::Invalid(format!("{e}")))
        };
        let mut targets: HashSet<PathBuf> = HashSet::new();
        fn claim(touched: &mut HashSet<PathBuf>, abs: &Path, shown: &str) -> Result<(), ApplyError> {
            if touched.insert(abs.to_path_buf()) {
                Ok(())
            } else {
                Err(ApplyError::Invalid(format!(
                    "The change set touches {shown} twice; a path may appear in one change only."
                )))
            }
        }
        for change in &self.changes {
            match change {
                Change::Edit { path, before_hash, after, .. } => {
                    let abs = resolve(path, false)?;
                    claim(&mut touched, &abs, path)?;
                    if let Some(meta) = check_unchanged(&abs, path, before_hash, "deleted", &mut stale, &mut read_only)
                    {
                        steps.push(Step::Replace { abs, contents: after.clone(), meta: Some(meta) });
                    }
                }
                Change::Delete { path, before_hash, .. } => {
                    let abs = resolve(path, false)?;
                    claim(&mut touched, &abs, path)?;
                    if check_unchanged(&abs, path, before_hash, "already deleted", &mut stale, &mut read_only).is_some()
                    {
                        steps.push(Step::Delete { abs });
                    }
                }
                Change::Create { path, contents } => {
                    let abs = resolve(path, false)?;
                    claim(&mut touched, &abs, path)?;
                    if fs::symlink_metadata(&abs).is_ok() {
                        stale.push((path.clone(), "now exists".into()));
                    } else {
                        steps.push(Step::Replace { abs, contents: contents.clone(), meta: None });
                    }
                }
                Change::Rename { from, to, kind, before_hash } => {
                    let from_abs = resolve(from, true)?;
                    let to_abs = resolve(to, true)?;
                    claim(&mut touched, &from_abs, from)?;
                    if to_abs != from_abs {
                        // A target may be another rename's source (chains, swaps), never twice a target.
                        let clash = (touched.contains(&to_abs) && !rename_sources.contains(&to_abs))
                            || !targets.insert(to_abs.clone());
                        if clash {
                            return Err(ApplyError::Invalid(format!(
                                "The change set touches {to} twice; a path may appear in one change only."
                            )));
                        }
                    }
                    match fs::symlink_metadata(&from_abs) {
                        Err(_) => {
                            stale.push((from.clone(), "missing".into()));
                            continue;
                        }
                        Ok(m) => {
                            let now = if m.file_type().is_symlink() {
                                EntryKind::Symlink
                            } else if m.is_file() {
                                EntryKind::File
                            } else {
                                stale.push((from.clone(), "no longer a file".into()));
                                continue;
                            };
                            if now != *kind {
                                stale.push((from.clone(), "file type changed".into()));
                                continue;
                            }
                            match ContentHash::of_entry(&from_abs, *kind) {
                                Ok(h) if h == *before_hash => {}
                                Ok(_) => {
                                    stale.push((from.clone(), "content changed".into()));
                                    continue;
                                }
                                Err(e) => {
                                    stale.push((from.clone(), format!("unreadable: {e}")));
                                    continue;
                                }
                            }
                        }
                    }
                    if let Ok(target) = fs::symlink_metadata(&to_abs) {
                        let same_inode = fs::symlink_metadata(&from_abs)
                            .map(|m| m.ino() == target.ino() && m.dev() == target.dev())
                            .unwrap_or(false);
                        if !rename_sources.contains(&to_abs) && !same_inode {
                            stale.push((to.clone(), "target now exists".into()));
                            continue;
                        }
                    }
                    steps.push(Step::Move { from: from_abs, to: to_abs });
                }
            }
        }
        if !stale.is_empty() {
            return Err(ApplyError::Stale { files: stale });
        }
        if !read_only.is_empty() {
            return Err(ApplyError::ReadOnly { files: read_only });
        }
        Ok(steps)
    }
}

/// The file's metadata when it still has the previewed content; otherwise records why not
/// (`stale`), and notes it in `read_only` when it is marked read-only.
fn check_unchanged(
    abs: &Path,
    path: &str,
    before_hash: &ContentHash,
    missing: &str,
    stale: &mut Vec<(String, String)>,
    read_only: &mut Vec<String>,
) -> Option<fs::Metadata> {
    match current_file(abs) {
        Ok(Some((hash, meta))) if hash == *before_hash => {
            if meta.permissions().readonly() {
                read_only.push(path.to_string());
            }
            Some(meta)
        }
        Ok(Some(_)) => {
            stale.push((path.to_string(), "content changed".into()));
            None
        }
        Ok(None) => {
            stale.push((path.to_string(), missing.into()));
            None
        }
        Err(e) => {
            stale.push((path.to_string(), format!("unreadable: {e}")));
            None
        }
    }
}

/// `Ok(None)` when missing; an error when it is not a regular file or cannot be read.
fn current_file(abs: &Path) -> io::Result<Option<(ContentHash, fs::Metadata)>> {
    let meta = match fs::metadata(abs) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(Some((ContentHash::of(&fs::read(abs)?), meta)))
}
