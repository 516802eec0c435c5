//! What a preview found, and its three renderings: text for the model and the terminal
//! ([`Preview::text`]), a compact JSON object for scripts ([`Preview::to_json`]) and the
//! tool result's details ([`Preview::details`]: per-file numbers, never diff text).
//!
//! Why the details carry no diffs: a tool result lives as long as whoever keeps it (the
//! session's transcript, an agent's conversation, a script's output), and a preview of
//! thousands of replacements would carry megabytes of hunks each time. The pending action's
//! change set already holds every file's before and after; the UI reads a file's diff from
//! it on demand, and the text renders only the diffs it shows.

use std::borrow::Cow;
use std::collections::HashMap;

use resolve_engine::{diff, plural, Change, ChangeSet};
use serde::Serialize;
use serde_json::{json, Value};

/// Bytes of unified diff text in the tool result text; the rest is summarised.
pub const TEXT_DIFF_BYTES: usize = 200_000;
/// Lines of context in the diffs of the text when they are rendered from the change set.
pub const TEXT_DIFF_CONTEXT: usize = 3;

/// The start of one replaced match (1-based line, 0-based byte column) and its op index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MatchInfo {
    pub line: usize,
    pub column: usize,
    pub op: usize,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    pub path: String,
    pub lang: String,
    pub replacements: usize,
    /// Diff line counts (None when diffs were not rendered).
    pub added: Option<u32>,
    pub removed: Option<u32>,
    pub nested_skipped: usize,
    pub overlap_skipped: usize,
    pub matches: Vec<MatchInfo>,
}

/// Matches skipped in one file because they touch a region the parser could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParseIssue {
    pub path: String,
    /// The first skipped match's line (1-based).
    pub line: usize,
    pub count: usize,
    pub lines: Vec<usize>,
}

/// A file in scope that was not scanned (binary, not UTF-8, too large, unreadable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    pub path: String,
    pub reason: String,
}

/// An op that does not compile for one language (its files are scanned with the other ops).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatternIssue {
    pub op: usize,
    pub pat: String,
    pub lang: String,
    pub message: String,
}

/// Why a scan stopped before the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum StopReason {
    Limit { limit: usize },
    FileCap { cap: usize },
}

/// The result of a preview. `change_set` holds, for every changed file, the bytes read and
/// the bytes to write; `files` and `diffs` are in the same (path) order.
#[derive(Debug, Default)]
pub struct Preview {
    pub change_set: ChangeSet,
    pub replacements: usize,
    /// Every match found: replaced, nested, overlapping or touching a parse error (for
    /// comparison with tools that count matches, not replacements).
    pub matches_found: usize,
    pub files: Vec<FileReport>,
    pub parse_issues: Vec<ParseIssue>,
    pub skipped_files: Vec<SkippedFile>,
    pub pattern_issues: Vec<PatternIssue>,
    pub notes: Vec<String>,
    pub files_listed: usize,
    pub files_scanned: usize,
    pub nested_skipped: usize,
    pub overlap_skipped: usize,
    pub stopped: Option<StopReason>,
    /// Unified diff of each file of `files` (None when diffs were not rendered).
    pub diffs: Vec<Option<String>>,
}

impl Preview {
    /// `AST Edit: <N> replacement[s] in <M> file[s]` (SPEC §5.7).
    pub fn label(&self) -> String {
        format!(
            "AST Edit: {} in {}",
            plural(self.replacements, "replacement", "replacements"),
            plural(self.files.len(), "file", "files")
        )
    }

    /// `Applied <N> replacement[s] in <M> file[s].` (SPEC §5.8).
    pub fn applied_text(&self) -> String {
        format!(
            "Applied {} in {}.",
            plural(self.replacements, "replacement", "replacements"),
            plural(self.files.len(), "file", "files")
        )
    }

    /// The summary: totals, per-file counts, skipped matches, parse issues, skipped files,
    /// pattern issues and notes. Exactly `No replacements made` (plus any issues on later
    /// lines) when nothing would change.
    pub fn summary_text(&self) -> String {
        let mut out = String::new();
        if self.replacements == 0 {
            out.push_str("No replacements made");
        } else {
            out.push_str(&format!(
                "AST Edit preview: {} in {} ({} scanned). Nothing is written until this is applied.\n",
                plural(self.replacements, "replacement", "replacements"),
                plural(self.files.len(), "file", "files"),
                plural(self.files_scanned, "file", "files"),
            ));
            out.push_str("Files:");
            for f in &self.files {
                out.push_str(&format!("\n  {}: {}", f.path, plural(f.replacements, "replacement", "replacements")));
            }
        }
        match self.stopped {
            Some(StopReason::Limit { limit }) => out.push_str(&format!(
                "\nStopped at the limit of {}: later matches are not rewritten.",
                plural(limit, "replacement", "replacements")
            )),
            Some(StopReason::FileCap { cap }) => out.push_str(&format!(
                "\nStopped at the cap of {cap} changed files: later files are not rewritten (narrow `path` or run again after applying)."
            )),
            None => {}
        }
        if self.nested_skipped > 0 {
            out.push_str(&format!(
                "\nSkipped {} nested inside another match of the same op (the outermost match wins; run again to rewrite the inner ones).",
                plural(self.nested_skipped, "match", "matches")
            ));
        }
        if self.overlap_skipped > 0 {
            out.push_str(&format!(
                "\nSkipped {} overlapping a match of an earlier op (the earlier op wins).",
                plural(self.overlap_skipped, "match", "matches")
            ));
        }
        if !self.parse_issues.is_empty() {
            out.push_str("\nParse issues (matches touching a syntax error were skipped):");
            for p in &self.parse_issues {
                let lines: Vec<String> = p.lines.iter().map(usize::to_string).collect();
                out.push_str(&format!(
                    "\n  {}: {} skipped at line {}",
                    p.path,
                    plural(p.count, "match", "matches"),
                    lines.join(", ")
                ));
            }
        }
        if !self.skipped_files.is_empty() {
            out.push_str("\nSkipped files:");
            for s in &self.skipped_files {
                out.push_str(&format!("\n  {}: {}", s.path, s.reason));
            }
        }
        if !self.pattern_issues.is_empty() {
            out.push_str("\nPattern issues:");
            for p in &self.pattern_issues {
                out.push_str(&format!("\n  ops[{}] `{}` for {}: {}", p.op, p.pat, p.lang, p.message));
            }
        }
        for n in &self.notes {
            out.push_str(&format!("\nNote: {n}"));
        }
        out
    }

    /// Every changed file's unified diff, in path order (empty when diffs were not rendered).
    pub fn unified_diff(&self) -> String {
        self.diffs.iter().flatten().map(String::as_str).collect()
    }

    /// File `i`'s unified diff: the one rendered while scanning, else rendered now from the
    /// change set (`None` when neither has it).
    fn file_diff(&self, i: usize, context: usize) -> Option<Cow<'_, str>> {
        if let Some(Some(d)) = self.diffs.get(i) {
            return Some(Cow::Borrowed(d.as_str()));
        }
        let path = &self.files.get(i)?.path;
        match self.change_set.changes().iter().find(|c| c.path() == path)? {
            Change::Edit { before, after, .. } => Some(Cow::Owned(diff::unified(path, before, after, context))),
            _ => None,
        }
    }

    /// What the tool answers: the summary, then unified diffs up to `max_diff_bytes` (see
    /// [`text_with_context`](Self::text_with_context)).
    pub fn text(&self, max_diff_bytes: usize) -> String {
        self.text_with_context(max_diff_bytes, TEXT_DIFF_CONTEXT)
    }

    /// The summary, then unified diffs in path order up to `max_diff_bytes` (at least one),
    /// then, when some are left out, the line saying how many were shown. Diffs not rendered
    /// while scanning are rendered here from the change set with `context` lines, one file
    /// at a time and only for the files shown.
    pub fn text_with_context(&self, max_diff_bytes: usize, context: usize) -> String {
        let mut out = self.summary_text();
        if self.replacements == 0 {
            return out;
        }
        out.push_str("\n\n");
        let mut used = 0;
        let mut shown = 0;
        for i in 0..self.files.len() {
            let Some(d) = self.file_diff(i, context) else { break };
            if used + d.len() > max_diff_bytes && shown > 0 {
                break;
            }
            out.push_str(&d);
            used += d.len();
            shown += 1;
        }
        if shown < self.files.len() {
            out.push_str(&format!(
                "\n({} of {} file diffs shown. The pending action holds every file's diff for the person's review; narrow `path` to see another file's diff here.)",
                shown,
                self.files.len()
            ));
        }
        out
    }

    fn summary_json(&self) -> Value {
        json!({
            "replacements": self.replacements,
            "matches_found": self.matches_found,
            "files": self.files.len(),
            "files_listed": self.files_listed,
            "files_scanned": self.files_scanned,
            "nested_skipped": self.nested_skipped,
            "overlap_skipped": self.overlap_skipped,
            "stopped": self.stopped,
        })
    }

    /// A compact JSON form for scripts: a summary and per-file match positions (no text).
    pub fn to_json(&self) -> Value {
        json!({
            "summary": self.summary_json(),
            "files": self.files,
            "parse_issues": self.parse_issues,
            "skipped_files": self.skipped_files,
            "pattern_issues": self.pattern_issues,
            "notes": self.notes,
        })
    }

    /// Each changed path's index in the change set (and in its summaries).
    fn change_index(&self) -> HashMap<&str, usize> {
        self.change_set.changes().iter().enumerate().map(|(i, c)| (c.path(), i)).collect()
    }

    /// The tool result's details: the summary, per-file numbers and issues — no diff text.
    /// Each file has `path`, `lang`, `replacements`, `added` and `removed` (diff lines),
    /// `lines` (the file's line count after the rewrite) and `before_hash` (BLAKE3 of the
    /// bytes previewed, hex); the last three are `null` when the change set was not kept.
    /// Diffs come from the pending action's change set, on demand.
    pub fn details(&self) -> Value {
        let summaries = self.change_set.files();
        let index = self.change_index();
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|f| {
                let change = index.get(f.path.as_str()).copied();
                let (before_hash, lines) = match change.map(|i| &self.change_set.changes()[i]) {
                    Some(Change::Edit { before_hash, after, .. }) => {
                        (Some(before_hash.to_string()), Some(line_count(after)))
                    }
                    _ => (None, None),
                };
                let summary = change.and_then(|i| summaries.get(i));
                json!({
                    "path": f.path,
                    "lang": f.lang,
                    "replacements": f.replacements,
                    "added": f.added.or(summary.map(|s| s.added)),
                    "removed": f.removed.or(summary.map(|s| s.removed)),
                    "lines": lines,
                    "before_hash": before_hash,
                })
            })
            .collect();
        json!({
            "summary": self.summary_json(),
            "files": files,
            "parse_issues": self.parse_issues,
            "skipped_files": self.skipped_files,
            "pattern_issues": self.pattern_issues,
            "notes": self.notes,
        })
    }

    /// The pending action's details: per-file summary list and issues (no hunks; the UI reads
    /// diffs lazily from the change set).
    pub fn action_details(&self) -> Value {
        let summaries = self.change_set.files();
        let index = self.change_index();
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|f| {
                let summary = index.get(f.path.as_str()).and_then(|&i| summaries.get(i));
                json!({
                    "path": f.path,
                    "replacements": f.replacements,
                    "added": f.added.or(summary.map(|s| s.added)),
                    "removed": f.removed.or(summary.map(|s| s.removed)),
                })
            })
            .collect();
        json!({
            "summary": self.summary_json(),
            "files": files,
            "parse_issues": self.parse_issues,
            "skipped_files": self.skipped_files,
            "pattern_issues": self.pattern_issues,
            "notes": self.notes,
        })
    }
}

/// Lines in `bytes` (a last line without a newline counts).
fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}
