//! The rename plan: from the selected entries and `find`/`replace` to a checked list of
//! old → new names. Computing it reads the disk but never writes.
//!
//! Invariants of a [`RenamePlan`]:
//! - every `rename` row changes only the last component: the file stays in its folder;
//! - every new name is a valid single file name (not empty, not `.`/`..`, no `/`, no NUL,
//!   at most 255 bytes) that shows what it is: no control, bidirectional or invisible
//!   character (`resolve_engine::hidden`), so a name cannot read differently from what it is;
//! - no two rows share a target, and a target that exists on disk is the source of another
//!   `rename` row (a chain or a swap) or the same entry under another case;
//! - `before_hash` is [`ContentHash::of_entry`] of the source as the preview read it, so
//!   apply can refuse when the source changed.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use regex::Regex;
use resolve_engine::changeset::plural;
use resolve_engine::hidden::{self, HiddenKind};
use resolve_engine::{ChangeSet, ContentHash, EntryKind, Workspace};
use serde::Serialize;
use serde_json::{json, Value};

pub use crate::error::RenameError;
use crate::select::{Kind, Selected};

/// The longest file name most file systems accept, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// Compiles `find`, and checks that every `$name` / `${name}` in `replace` is one of its
/// capture groups (the regex crate would silently insert nothing for an unknown one, so
/// `$1_x`, which means the group named `1_x`, would quietly drop text).
pub fn compile(find: &str, replace: &str) -> Result<Regex, RenameError> {
    let regex = Regex::new(find)
        .map_err(|e| RenameError::InvalidRegex { pattern: find.to_string(), message: e.to_string() })?;
    for reference in capture_refs(replace) {
        let known = match reference.parse::<usize>() {
            Ok(i) => i < regex.captures_len(),
            Err(_) => regex.capture_names().flatten().any(|n| n == reference),
        };
        if !known {
            let digits: String = reference.chars().take_while(char::is_ascii_digit).collect();
            let hint = if !digits.is_empty() && digits.len() < reference.len() {
                format!("To follow group {digits} with text, write `${{{digits}}}{}`. ", &reference[digits.len()..])
            } else {
                String::new()
            };
            return Err(RenameError::UnknownCapture {
                reference: format!("${reference}"),
                find: find.to_string(),
                hint,
            });
        }
    }
    Ok(regex)
}

/// The group names or numbers a replacement refers to, with the regex crate's rules: `$$` is
/// a literal `$`, `${name}` is braced, `$name` takes the longest run of `[0-9A-Za-z_]`.
fn capture_refs(replace: &str) -> Vec<&str> {
    let mut refs = Vec::new();
    let mut rest = replace;
    while let Some(i) = rest.find('$') {
        rest = &rest[i + 1..];
        if let Some(after) = rest.strip_prefix('$') {
            rest = after;
        } else if let Some(braced) = rest.strip_prefix('{') {
            if let Some(end) = braced.find('}') {
                refs.push(&braced[..end]);
                rest = &braced[end + 1..];
            }
        } else {
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            if end > 0 {
                refs.push(&rest[..end]);
            }
            rest = &rest[end..];
        }
    }
    refs
}

/// What happens to one selected entry (the engine's rename-table status, so the app shows
/// the table without reading this tool's details).
pub use resolve_engine::RenameStatus as Status;

/// One line of the old → new table. `to` is where the entry is after apply (`from` unless
/// it is renamed).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub from: String,
    pub to: String,
    /// `rename`, `unchanged` or `directory_skipped` in the agent's result.
    #[serde(with = "resolve_engine::snake")]
    pub status: Status,
    #[serde(skip)]
    renamed: Option<(EntryKind, ContentHash)>,
}

/// A checked list of renames (see the module invariants).
#[derive(Debug)]
pub struct RenamePlan {
    rows: Vec<Row>,
}

impl RenamePlan {
    /// Applies `find`/`replace` to every selected entry's name and checks the result.
    /// `patterns` is only used to say what matched nothing.
    pub fn compute(
        ws: &Workspace,
        selected: Vec<Selected>,
        find: &Regex,
        replace: &str,
        patterns: &[String],
    ) -> Result<Self, RenameError> {
        if !selected.iter().any(|s| matches!(s.kind, Kind::Entry(_))) {
            let folders = if selected.is_empty() {
                String::new()
            } else {
                " (only folders matched, and batch rename renames files, never folders)".to_string()
            };
            return Err(RenameError::NoMatch { patterns: patterns.join(", "), folders });
        }
        let mut rows = Vec::new();
        // Target (absolute) → the rows (indices) that would take it.
        let mut targets: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
        let mut sources: HashSet<PathBuf> = HashSet::new();
        let mut pending_checks = Vec::new();
        for s in selected {
            let name = s.path.rsplit('/').next().unwrap_or(&s.path);
            let new_name = find.replace_all(name, replace);
            let kind = match s.kind {
                Kind::Directory => {
                    if find.is_match(name) {
                        rows.push(Row {
                            to: s.path.clone(),
                            from: s.path,
                            status: Status::DirectorySkipped,
                            renamed: None,
                        });
                    }
                    continue;
                }
                Kind::Entry(kind) => kind,
            };
            if new_name == name {
                rows.push(Row { to: s.path.clone(), from: s.path, status: Status::Unchanged, renamed: None });
                continue;
            }
            check_name(&s.path, &new_name)?;
            let to = match s.path.rsplit_once('/') {
                Some((folder, _)) => format!("{folder}/{new_name}"),
                None => new_name.to_string(),
            };
            let to_abs = ws.resolve_entry(&to).map_err(|_| RenameError::Outside(to.clone()))?;
            if to_abs.parent() != s.abs.parent() {
                return Err(RenameError::Outside(to));
            }
            let hash = ContentHash::of_entry(&s.abs, kind)
                .map_err(|e| RenameError::Unreadable { path: s.path.clone(), message: e.to_string() })?;
            targets.entry(to_abs.clone()).or_default().push(rows.len());
            sources.insert(s.abs.clone());
            pending_checks.push((rows.len(), s.abs, to_abs));
            rows.push(Row { from: s.path, to, status: Status::Rename, renamed: Some((kind, hash)) });
        }
        for indices in targets.values() {
            if indices.len() > 1 {
                let names: Vec<String> = indices.iter().map(|&i| format!("`{}`", rows[i].from)).collect();
                return Err(RenameError::DuplicateTarget {
                    target: rows[indices[0]].to.clone(),
                    sources: names.join(", "),
                });
            }
        }
        for (i, from_abs, to_abs) in pending_checks {
            let Ok(existing) = fs::symlink_metadata(&to_abs) else { continue };
            if sources.contains(&to_abs) || same_entry_other_case(&rows[i], &from_abs, &existing) {
                continue;
            }
            return Err(RenameError::TargetExists { from: rows[i].from.clone(), to: rows[i].to.clone() });
        }
        Ok(Self { rows })
    }

    /// Every row, sorted by source path.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// How many entries are renamed.
    pub fn count(&self) -> usize {
        self.rows.iter().filter(|r| r.status == Status::Rename).count()
    }

    /// The renames as a change set, each pinned to the kind and hash the preview read.
    pub fn change_set(&self) -> ChangeSet {
        let mut cs = ChangeSet::new();
        for row in &self.rows {
            if let Some((kind, hash)) = row.renamed {
                cs.rename(row.from.clone(), row.to.clone(), kind, hash);
            }
        }
        cs
    }

    /// The old → new table for the pending action ([`CustomToolPendingAction::with_renames`]).
    ///
    /// [`CustomToolPendingAction::with_renames`]: resolve_engine::CustomToolPendingAction::with_renames
    pub fn rename_rows(&self) -> Vec<resolve_engine::RenameRow> {
        self.rows
            .iter()
            .map(|r| resolve_engine::RenameRow { from: r.from.clone(), to: r.to.clone(), status: r.status })
            .collect()
    }

    /// `{"renames": [{"from", "to", "status"}…], "count": N}` for the agent's result.
    pub fn details(&self) -> Value {
        json!({ "renames": self.rows, "count": self.count() })
    }

    /// The old → new table for the agent (and anyone reading the transcript).
    pub fn table(&self) -> String {
        let width = self.rows.iter().map(|r| r.from.chars().count()).max().unwrap_or(0);
        let mut out = String::new();
        for row in &self.rows {
            let pad = " ".repeat(width - row.from.chars().count());
            let right = match row.status {
                Status::Rename => format!("→  {}", row.to),
                Status::Unchanged => "(unchanged)".to_string(),
                Status::DirectorySkipped => "(folder: not renamed, batch rename renames files only)".to_string(),
            };
            out.push_str(&format!("  {}{pad}  {right}\n", row.from));
        }
        out
    }

    /// One line: `3 files to rename, 1 unchanged, 1 folder skipped`.
    pub fn summary(&self) -> String {
        let unchanged = self.rows.iter().filter(|r| r.status == Status::Unchanged).count();
        let folders = self.rows.iter().filter(|r| r.status == Status::DirectorySkipped).count();
        let mut parts = vec![format!("{} to rename", plural(self.count(), "file", "files"))];
        if unchanged > 0 {
            parts.push(format!("{unchanged} unchanged"));
        }
        if folders > 0 {
            parts.push(format!("{} skipped", plural(folders, "folder", "folders")));
        }
        parts.join(", ")
    }
}

/// A new name must be one valid path component.
fn check_name(from: &str, name: &str) -> Result<(), RenameError> {
    let err_name = || name.replace('\0', "\\0");
    if name.is_empty() {
        Err(RenameError::EmptyName { from: from.to_string() })
    } else if name.contains('\0') {
        Err(RenameError::Nul { from: from.to_string(), name: err_name() })
    } else if let Some(f) = hidden::scan_line(name, hidden::Place::Elsewhere)
        .into_iter()
        .find(|f| matches!(f.kind, HiddenKind::Control | HiddenKind::Bidi | HiddenKind::Invisible))
    {
        let kind = match f.kind {
            HiddenKind::Control => "a control character",
            HiddenKind::Bidi => "a bidirectional control",
            _ => "an invisible character",
        };
        Err(RenameError::HiddenCharacter {
            from: hidden::escape(from).into_owned(),
            name: hidden::escape(name).into_owned(),
            position: f.char_index + 1,
            what: format!("{} ({kind})", f.name()),
        })
    } else if name.contains('/') {
        Err(RenameError::Separator { from: from.to_string(), name: name.to_string() })
    } else if name == "." || name == ".." {
        Err(RenameError::DotName { from: from.to_string(), name: name.to_string() })
    } else if name.len() > MAX_NAME_BYTES {
        Err(RenameError::TooLong { from: from.to_string(), name: name.to_string(), bytes: name.len() })
    } else {
        Ok(())
    }
}

/// On a case-insensitive file system `a.TXT` → `a.txt` finds its own source at the target:
/// that is the same entry, not a collision.
fn same_entry_other_case(row: &Row, from_abs: &std::path::Path, target: &fs::Metadata) -> bool {
    let same_inode =
        fs::symlink_metadata(from_abs).map(|m| m.ino() == target.ino() && m.dev() == target.dev()).unwrap_or(false);
    same_inode && row.from.to_lowercase() == row.to.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_refs_follow_regex_crate_rules() {
        assert_eq!(capture_refs("a$1b${name}c$$d$x_1-"), vec!["1b", "name", "x_1"]);
        assert_eq!(capture_refs("${1}_x $ end$"), vec!["1"]);
        assert_eq!(capture_refs("no refs"), Vec::<&str>::new());
    }

    #[test]
    fn unknown_capture_is_refused_with_a_hint() {
        let err = compile(r"(\d+)", "$1_x").unwrap_err().to_string();
        assert!(err.contains("`$1_x`") && err.contains("write `${1}_x`"), "{err}");
        assert!(compile(r"(?P<n>\d+)", "${n}_x-$1-$0").is_ok());
        assert!(compile(r"(\d+)", "$2").is_err(), "group 2 does not exist");
    }

    #[test]
    fn names_are_checked() {
        assert!(matches!(check_name("a", ""), Err(RenameError::EmptyName { .. })));
        assert!(matches!(check_name("a", ".."), Err(RenameError::DotName { .. })));
        assert!(matches!(check_name("a", "x/y"), Err(RenameError::Separator { .. })));
        assert!(matches!(check_name("a", "x\0y"), Err(RenameError::Nul { .. })));
        assert!(matches!(check_name("a", &"é".repeat(128)), Err(RenameError::TooLong { bytes: 256, .. })));
        assert!(
            check_name("a", "caf\u{e9} \u{A0}n\u{0430}me.txt").is_ok(),
            "accents, odd spaces and look-alikes are names"
        );
        assert!(check_name("a", &"x".repeat(255)).is_ok());
    }

    #[test]
    fn replace_all_on_a_whole_name_replaces_it_once() {
        let re = Regex::new(".*").unwrap();
        assert_eq!(re.replace_all("abc", "X"), "X", "an empty match right after a match is not reported");
    }
}
