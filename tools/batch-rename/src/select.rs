//! Which directory entries `files` names: literal paths and globs, relative to the workspace.
//!
//! Invariants: every selected entry is inside the workspace (checked through
//! [`Workspace::resolve_entry`], so a symlinked folder that leads outside is refused); symlinks
//! are never followed (a link is selected as a link, a linked folder is not walked into);
//! `.git` is never walked; the result is sorted by path and has no duplicates.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use resolve_engine::{CancellationToken, EntryKind, Workspace};

use crate::error::RenameError;

/// What a selected entry is. Directories are selected only to be reported as skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Entry(EntryKind),
    Directory,
}

/// One selected directory entry.
#[derive(Debug, Clone)]
pub struct Selected {
    /// Workspace-relative, with `/`, parent folders canonical (as the change set resolves it).
    pub path: String,
    /// The entry itself (the last component is not followed).
    pub abs: PathBuf,
    pub kind: Kind,
}

/// The entries `files` names, plus notes for the preview (a glob that matched nothing, an
/// entry that was skipped and why).
#[derive(Debug, Default)]
pub struct Selection {
    pub entries: Vec<Selected>,
    pub notes: Vec<String>,
}

/// Characters that make a pattern a glob (unless a file with that literal name exists).
fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

/// Selects the entries named by `patterns`. A literal path must exist; a glob may match
/// nothing (it gets a note). `*` does not cross `/`; `**` does.
pub fn select(ws: &Workspace, patterns: &[String], cancel: &CancellationToken) -> Result<Selection, RenameError> {
    let mut found: BTreeMap<String, Selected> = BTreeMap::new();
    let mut notes = Vec::new();
    for pattern in patterns {
        let rel = relative_pattern(ws, pattern)?;
        if !is_glob(&rel) || fs::symlink_metadata(ws.root().join(&rel)).is_ok() {
            let abs = ws.resolve_entry(&rel)?;
            match entry_kind(&abs) {
                Some(kind) => {
                    let path = ws.relative(&abs)?;
                    found.insert(path.clone(), Selected { path, abs, kind });
                }
                None if fs::symlink_metadata(&abs).is_err() => return Err(RenameError::NotFound(pattern.clone())),
                None => notes.push(format!("`{pattern}` is not a file, a symlink or a folder; skipped.")),
            }
            continue;
        }
        let before = found.len();
        walk_glob(ws, pattern, &rel, cancel, &mut found, &mut notes)?;
        if found.len() == before {
            notes.push(format!("`{pattern}` matched no new file."));
        }
    }
    Ok(Selection { entries: found.into_values().collect(), notes })
}

/// Trims, drops a leading `./`, turns an absolute path inside the workspace into a relative one.
fn relative_pattern(ws: &Workspace, pattern: &str) -> Result<String, RenameError> {
    let trimmed = pattern.trim();
    let mut rel = trimmed;
    while let Some(rest) = rel.strip_prefix("./") {
        rel = rest;
    }
    if rel.is_empty() || rel == "." {
        return Err(RenameError::EmptyFilesEntry(pattern.to_string()));
    }
    if Path::new(rel).is_absolute() {
        let inside = Path::new(rel).strip_prefix(ws.root()).map_err(|_| RenameError::Outside(pattern.to_string()))?;
        return Ok(inside.to_string_lossy().into_owned());
    }
    Ok(rel.to_string())
}

fn walk_glob(
    ws: &Workspace,
    pattern: &str,
    rel: &str,
    cancel: &CancellationToken,
    found: &mut BTreeMap<String, Selected>,
    notes: &mut Vec<String>,
) -> Result<(), RenameError> {
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    if parts.first() == Some(&"..") {
        return Err(RenameError::Outside(pattern.to_string()));
    }
    if parts.contains(&"..") {
        return Err(RenameError::InvalidGlob {
            pattern: pattern.to_string(),
            message: "`..` is not allowed in a glob; write it relative to the workspace root".into(),
        });
    }
    let matcher = GlobBuilder::new(&parts.join("/"))
        .literal_separator(true)
        .build()
        .map_err(|e| RenameError::InvalidGlob { pattern: pattern.to_string(), message: e.kind().to_string() })?
        .compile_matcher();
    // Walk only below the literal prefix of the glob (`photos/*.jpg` walks `photos`).
    let base: Vec<&str> = parts.iter().take_while(|p| !is_glob(p)).copied().collect();
    let base = base.join("/");
    let base_abs = ws.resolve(&base)?;
    if !base_abs.is_dir() {
        return Ok(());
    }
    walk(ws, &ws.root().join(&base), &base, &matcher, cancel, found, notes)
}

/// Depth-first walk of `dir` (whose workspace-relative, lexical form is `rel_dir`).
fn walk(
    ws: &Workspace,
    dir: &Path,
    rel_dir: &str,
    matcher: &GlobMatcher,
    cancel: &CancellationToken,
    found: &mut BTreeMap<String, Selected>,
    notes: &mut Vec<String>,
) -> Result<(), RenameError> {
    if cancel.is_cancelled() {
        return Err(RenameError::Cancelled);
    }
    let shown_dir = if rel_dir.is_empty() { "." } else { rel_dir };
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            notes.push(format!("Could not read folder `{shown_dir}` ({e}); its files were not considered."));
            return Ok(());
        }
    };
    let mut names: Vec<_> = entries.filter_map(Result::ok).map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        let Some(name) = name.to_str() else {
            notes.push(format!("Skipped `{}` in `{shown_dir}`: its name is not valid UTF-8.", name.to_string_lossy()));
            continue;
        };
        if name == ".git" {
            continue;
        }
        let rel = if rel_dir.is_empty() { name.to_string() } else { format!("{rel_dir}/{name}") };
        let abs = dir.join(name);
        let Some(kind) = entry_kind(&abs) else { continue };
        if matcher.is_match(&rel) {
            let abs = ws.resolve_entry(&rel)?;
            let path = ws.relative(&abs)?;
            found.insert(path.clone(), Selected { path, abs, kind });
        }
        if kind == Kind::Directory {
            walk(ws, &dir.join(name), &rel, matcher, cancel, found, notes)?;
        }
    }
    Ok(())
}

/// The kind of the entry at `abs` (not following a symlink), `None` when missing or special
/// (a socket, a device…).
fn entry_kind(abs: &Path) -> Option<Kind> {
    let ft = fs::symlink_metadata(abs).ok()?.file_type();
    if ft.is_symlink() {
        Some(Kind::Entry(EntryKind::Symlink))
    } else if ft.is_dir() {
        Some(Kind::Directory)
    } else if ft.is_file() {
        Some(Kind::Entry(EntryKind::File))
    } else {
        None
    }
}
