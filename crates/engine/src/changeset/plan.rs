//! Verification: every entry of a change set checked against the disk before anything is
//! written. The result is the list of steps `super::commit` carries out (workspace-relative
//! paths, each with the hash it must still have), or the refusal (stale, read-only, a file
//! that cannot be replaced without changing it, invalid) with nothing written.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{ApplyError, Change, ChangeSet, ContentHash, EntryKind};
use crate::workspace::Workspace;

/// A verified step of the commit (paths workspace-relative, with `/`).
pub(super) enum Step {
    /// Replace `path`'s contents; the new file gets `mode`, `uid` and `gid` of the old one.
    Edit {
        path: String,
        contents: Arc<[u8]>,
        before: ContentHash,
        mode: u32,
        uid: u32,
        gid: u32,
    },
    Create {
        path: String,
        contents: Arc<[u8]>,
    },
    Delete {
        path: String,
        before: ContentHash,
    },
    Move {
        from: String,
        to: String,
        kind: EntryKind,
        before: ContentHash,
    },
}

/// The steps, and the folders to create for new files (parents first).
pub(super) struct Plan {
    pub steps: Vec<Step>,
    pub dirs: Vec<String>,
}

/// Why a file that still has the previewed content cannot be written.
#[derive(Default)]
struct Refusals {
    read_only: Vec<String>,
    other: Vec<(String, String)>,
}

impl ChangeSet {
    pub(super) fn plan(&self, ws: &Workspace) -> Result<Plan, ApplyError> {
        let mut stale = Vec::new();
        let mut refusals = Refusals::default();
        let mut steps = Vec::new();
        let mut dirs: Vec<String> = Vec::new();
        let mut touched: HashSet<PathBuf> = HashSet::new();
        let rename_sources: HashSet<PathBuf> = self
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Rename { from, .. } => ws.resolve_entry(from).ok(),
                _ => None,
            })
            .collect();
        let resolve = |p: &str, entry: bool| -> Result<(PathBuf, String), ApplyError> {
            let r = if entry { ws.resolve_entry(p) } else { ws.resolve(p) };
            let abs = r.map_err(|e| ApplyError::Invalid(format!("{e}")))?;
            let rel = ws.relative(&abs).map_err(|e| ApplyError::Invalid(format!("{e}")))?;
            if rel.is_empty() {
                return Err(ApplyError::Invalid(format!("{p} is the workspace root, not a file.")));
            }
            Ok((abs, rel))
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
                    let (abs, rel) = resolve(path, false)?;
                    claim(&mut touched, &abs, path)?;
                    if let Some(meta) = check_unchanged(&abs, path, before_hash, "deleted", &mut stale) {
                        check_replaceable(&abs, path, &meta, true, &mut refusals);
                        steps.push(Step::Edit {
                            path: rel,
                            contents: after.clone(),
                            before: *before_hash,
                            mode: meta.mode() & 0o7777,
                            uid: meta.uid(),
                            gid: meta.gid(),
                        });
                    }
                }
                Change::Delete { path, before_hash, .. } => {
                    let (abs, rel) = resolve(path, false)?;
                    claim(&mut touched, &abs, path)?;
                    if let Some(meta) = check_unchanged(&abs, path, before_hash, "already deleted", &mut stale) {
                        check_replaceable(&abs, path, &meta, false, &mut refusals);
                        steps.push(Step::Delete { path: rel, before: *before_hash });
                    }
                }
                Change::Create { path, contents } => {
                    let (abs, rel) = resolve(path, false)?;
                    claim(&mut touched, &abs, path)?;
                    if fs::symlink_metadata(&abs).is_ok() {
                        stale.push((path.clone(), "now exists".into()));
                    } else {
                        missing_dirs(ws, &abs, &mut dirs);
                        steps.push(Step::Create { path: rel, contents: contents.clone() });
                    }
                }
                Change::Rename { from, to, kind, before_hash } => {
                    let (from_abs, from_rel) = resolve(from, true)?;
                    let (to_abs, to_rel) = resolve(to, true)?;
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
                    if from_abs != to_abs {
                        steps.push(Step::Move { from: from_rel, to: to_rel, kind: *kind, before: *before_hash });
                    }
                }
            }
        }
        if !stale.is_empty() {
            return Err(ApplyError::Stale { files: stale });
        }
        if !refusals.read_only.is_empty() {
            return Err(ApplyError::ReadOnly { files: refusals.read_only });
        }
        if !refusals.other.is_empty() {
            return Err(ApplyError::Refused { files: refusals.other });
        }
        Ok(Plan { steps, dirs })
    }
}

/// Adds the folders above `abs` that do not exist yet (parents first) to `dirs`.
fn missing_dirs(ws: &Workspace, abs: &Path, dirs: &mut Vec<String>) {
    let mut missing = Vec::new();
    let mut dir = abs.parent();
    while let Some(d) = dir {
        if d == ws.root() || fs::symlink_metadata(d).is_ok() {
            break;
        }
        if let Ok(rel) = ws.relative(d) {
            missing.push(rel);
        }
        dir = d.parent();
    }
    for rel in missing.into_iter().rev() {
        if !dirs.contains(&rel) {
            dirs.push(rel);
        }
    }
}

/// Notes why the file at `abs` (which has the previewed content) cannot be replaced or
/// deleted without changing what it is: marked read-only, not writable by this user,
/// owned by someone else (its owner could not be kept), or hard-linked (an edit would split
/// the links: the other names would keep the old contents).
fn check_replaceable(abs: &Path, path: &str, meta: &fs::Metadata, edit: bool, refusals: &mut Refusals) {
    let marked_read_only = meta.mode() & 0o222 == 0;
    let user_cannot_write =
        rustix::fs::accessat(rustix::fs::CWD, abs, rustix::fs::Access::WRITE_OK, rustix::fs::AtFlags::EACCESS)
            .is_err_and(|e| e != rustix::io::Errno::NOENT);
    if marked_read_only || user_cannot_write {
        refusals.read_only.push(path.to_string());
        return;
    }
    if !edit {
        return;
    }
    let euid = rustix::process::geteuid();
    if !euid.is_root() && meta.uid() != euid.as_raw() {
        refusals.other.push((
            path.to_string(),
            format!(
                "it belongs to another user (uid {}); its new contents would belong to you (uid {})",
                meta.uid(),
                euid.as_raw()
            ),
        ));
    } else if meta.nlink() > 1 {
        refusals.other.push((
            path.to_string(),
            format!("it has {} hard links; writing it would leave the other names with the old contents", meta.nlink()),
        ));
    }
}

/// The file's metadata when it still has the previewed content; otherwise records why not
/// (`stale`).
fn check_unchanged(
    abs: &Path,
    path: &str,
    before_hash: &ContentHash,
    missing: &str,
    stale: &mut Vec<(String, String)>,
) -> Option<fs::Metadata> {
    match current_file(abs) {
        Ok(Some((hash, meta))) if hash == *before_hash => Some(meta),
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
    Ok(Some((ContentHash::of_entry(abs, EntryKind::File)?, meta)))
}
