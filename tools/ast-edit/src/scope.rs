//! Which files a call looks at: the `path` entries (file, directory, glob, comma list) and
//! the `glob` filter, walked with the `ignore` crate.
//!
//! Invariants: every file listed is inside the workspace (explicit paths go through
//! [`Workspace::resolve`]; walks never follow symlinks); `.gitignore`/`.ignore` are honoured
//! even outside a git repository; `.git` (and `.hg`, `.svn`, `.jj`) are never entered;
//! `node_modules` only when the glob or the path names it. Paths are workspace-relative with
//! `/`, sorted and unique.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ast_grep_core::Language;
use ast_grep_language::SupportLang;
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use resolve_engine::{CancellationToken, ToolError, Workspace};

/// One file to scan.
#[derive(Debug, Clone)]
pub(crate) struct FileEntry {
    pub abs: PathBuf,
    pub rel: String,
    pub lang: SupportLang,
    pub size: u64,
}

/// The files of a call, plus what the walk left out and should be said.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    pub files: Vec<FileEntry>,
    pub symlinks_skipped: usize,
    pub notes: Vec<String>,
}

const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".jj"];

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

fn glob_matcher(pattern: &str) -> Result<GlobMatcher, ToolError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::InvalidParams(format!("Invalid glob `{pattern}`: {e}")))
}

/// The language of a file by its extension, or `lang` when the file is named explicitly and
/// its extension is unknown. None: not a file this call parses (skipped silently).
fn language_of(path: &Path, lang: Option<SupportLang>, explicit: bool) -> Option<SupportLang> {
    match (SupportLang::from_path(path), lang) {
        (Some(found), Some(wanted)) => (found == wanted).then_some(found),
        (Some(found), None) => Some(found),
        (None, Some(wanted)) if explicit => Some(wanted),
        (None, _) => None,
    }
}

/// Lists the files of `path` (default: the whole workspace) filtered by `glob` and `lang`.
pub(crate) fn list_files(
    ws: &Workspace,
    path: Option<&str>,
    glob: Option<&str>,
    lang: Option<SupportLang>,
    cancel: &CancellationToken,
) -> Result<Listing, ToolError> {
    let items: Vec<&str> = match path {
        Some(p) => p.split(',').map(str::trim).filter(|s| !s.is_empty()).collect(),
        None => Vec::new(),
    };
    let items = if items.is_empty() { vec![""] } else { items };
    let extra = glob.map(str::trim).filter(|g| !g.is_empty()).map(glob_matcher).transpose()?;
    let allow_node_modules = glob.is_some_and(|g| g.contains("node_modules"));

    let mut files: BTreeMap<String, FileEntry> = BTreeMap::new();
    let mut listing = Listing::default();
    for item in items {
        if is_glob(item) {
            // Walk from the literal directory prefix; match the whole pattern on the
            // workspace-relative path.
            let parts: Vec<&str> = item.split('/').collect();
            if parts.contains(&"..") {
                return Err(ToolError::OutsideWorkspace(item.to_string()));
            }
            let literal: Vec<&str> = parts.iter().take_while(|p| !is_glob(p)).copied().collect();
            let base_rel = literal.join("/");
            let base = ws.resolve_existing(&base_rel).map_err(|e| match e {
                resolve_engine::WorkspaceError::NotFound(_) => ToolError::NotFound(item.to_string()),
                other => other.into(),
            })?;
            let whole = glob_matcher(item.trim_start_matches("./").trim_start_matches('/'))?;
            let nm = allow_node_modules || item.contains("node_modules");
            walk(ws, &base, Some(&whole), extra.as_ref(), nm, lang, cancel, &mut files, &mut listing)?;
        } else {
            let abs = ws.resolve_existing(item)?;
            let meta = std::fs::metadata(&abs).map_err(|e| ToolError::Io(format!("Cannot read {item}: {e}")))?;
            if meta.is_dir() {
                let nm = allow_node_modules || item.split('/').any(|c| c == "node_modules");
                walk(ws, &abs, None, extra.as_ref(), nm, lang, cancel, &mut files, &mut listing)?;
            } else if meta.is_file() {
                let rel = ws.relative(&abs)?;
                let name_ok = match &extra {
                    Some(g) => g.is_match(abs.file_name().map(Path::new).unwrap_or(Path::new(""))),
                    None => true,
                };
                if name_ok {
                    if let Some(l) = language_of(&abs, lang, true) {
                        files.insert(rel.clone(), FileEntry { abs, rel, lang: l, size: meta.len() });
                    } else if lang.is_none() {
                        listing
                            .notes
                            .push(format!("{rel}: no language is known for this file; pass `lang` to parse it"));
                    }
                }
            }
        }
    }
    listing.files = files.into_values().collect();
    Ok(listing)
}

#[allow(clippy::too_many_arguments)]
fn walk(
    ws: &Workspace,
    base: &Path,
    whole: Option<&GlobMatcher>,
    extra: Option<&GlobMatcher>,
    allow_node_modules: bool,
    lang: Option<SupportLang>,
    cancel: &CancellationToken,
    files: &mut BTreeMap<String, FileEntry>,
    listing: &mut Listing,
) -> Result<(), ToolError> {
    let walker = WalkBuilder::new(base)
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let name = e.file_name().to_string_lossy();
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            !(is_dir && (VCS_DIRS.contains(&name.as_ref()) || (!allow_node_modules && name == "node_modules")))
        })
        .build();
    for entry in walker {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled("ast_edit was cancelled while listing files; nothing was changed".into()));
        }
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                listing.notes.push(format!("walk error: {e}"));
                continue;
            }
        };
        let Some(ft) = entry.file_type() else { continue };
        if ft.is_symlink() {
            listing.symlinks_skipped += 1;
            continue;
        }
        if !ft.is_file() {
            continue;
        }
        let abs = entry.path();
        let Some(l) = language_of(abs, lang, false) else { continue };
        let Ok(rel) = ws.relative(abs) else { continue };
        if let Some(g) = whole {
            if !g.is_match(&rel) {
                continue;
            }
        }
        if let Some(g) = extra {
            let under = abs.strip_prefix(base).unwrap_or(abs);
            if !g.is_match(under) {
                continue;
            }
        }
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        files.insert(rel.clone(), FileEntry { abs: abs.to_path_buf(), rel, lang: l, size });
    }
    Ok(())
}
