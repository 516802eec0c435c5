//! Patches: what each of the two formats says ([`FilePatch`]), read by [`codex`] (`*** Begin
//! Patch`, the format Codex-style models emit) or [`unified`] (`git diff` and `diff -u`
//! output), and applied to the bytes a preview read by [`apply`].

pub mod apply;
pub mod codex;
pub mod unified;

use resolve_engine::ToolError;

/// What a patch does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilePatch {
    /// Creates `path` with `content` (which must not exist).
    Add { path: String, content: String },
    /// Deletes `path` (which must exist).
    Delete { path: String },
    /// Changes `path` by `hunks`, then moves it to `move_to` if set. No hunk and a
    /// `move_to`: a plain rename.
    Update { path: String, move_to: Option<String>, hunks: Vec<Hunk> },
}

impl FilePatch {
    /// The file the patch names first (the source of a move).
    pub fn path(&self) -> &str {
        match self {
            FilePatch::Add { path, .. } | FilePatch::Delete { path } | FilePatch::Update { path, .. } => path,
        }
    }
}

/// One line of a hunk, without its line end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    Context(String),
    Remove(String),
    Add(String),
}

/// One hunk of an update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    /// How the patch names it (`@@ -10,4 +10,5 @@`, or `@@ fn main()`), for messages.
    pub header: String,
    /// A Codex hunk's `@@ <line>`: a line to find first; the hunk's lines come after it.
    pub anchor: Option<String>,
    /// A unified hunk's first old line (1-based; 0 for an insertion at the top).
    pub old_start: Option<usize>,
    pub lines: Vec<HunkLine>,
    /// Codex `*** End of File`: the hunk's lines end the file.
    pub at_end: bool,
    /// Unified `\ No newline at end of file` after the old side's last line.
    pub old_no_newline: bool,
    /// The same after the new side's last line.
    pub new_no_newline: bool,
}

impl Hunk {
    /// The lines the file has before (context and removed).
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Remove(s) => Some(s.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect()
    }

    /// The lines it has after (context and added).
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Add(s) => Some(s.as_str()),
                HunkLine::Remove(_) => None,
            })
            .collect()
    }
}

/// The two formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `*** Begin Patch` … `*** End Patch`.
    Codex,
    /// `--- a/x` / `+++ b/x` / `@@ -1,2 +1,3 @@`, with or without `diff --git` headers.
    Unified,
}

/// Which format `patch` is in, or why it is neither.
pub fn detect(patch: &str) -> Result<Format, ToolError> {
    let first = patch.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
    if first.starts_with("*** Begin Patch") || first.starts_with("<<") && patch.contains("*** Begin Patch") {
        return Ok(Format::Codex);
    }
    let unified = patch.lines().any(|l| l.starts_with("diff --git ") || l.starts_with("--- "))
        && patch.lines().any(|l| l.starts_with("+++ ") || l.starts_with("rename to "));
    if unified {
        return Ok(Format::Unified);
    }
    Err(ToolError::InvalidParams(format!(
        "`patch` is neither a `*** Begin Patch` patch nor a unified diff (it starts with {}). Send either \
         \"*** Begin Patch\\n*** Update File: src/a.ts\\n@@\\n-old line\\n+new line\\n*** End Patch\" or `git diff` output \
         (\"--- a/src/a.ts\\n+++ b/src/a.ts\\n@@ -1 +1 @@\\n-old line\\n+new line\\n\").",
        crate::edit::quoted(first)
    )))
}

/// Reads `patch` in the format it is in.
pub fn parse(patch: &str) -> Result<Vec<FilePatch>, ToolError> {
    let files = match detect(patch)? {
        Format::Codex => codex::parse(patch)?,
        Format::Unified => unified::parse(patch)?,
    };
    if files.is_empty() {
        return Err(ToolError::InvalidParams("`patch` changes no file; it needs at least one file section.".into()));
    }
    let mut seen = std::collections::BTreeSet::new();
    for f in &files {
        let names: Vec<&str> = match f {
            FilePatch::Update { path, move_to: Some(to), .. } => vec![path, to],
            other => vec![other.path()],
        };
        for n in names {
            if !seen.insert(n.to_string()) {
                return Err(ToolError::InvalidParams(format!(
                    "`patch` names {n} in more than one file section; put every change to one file in one section."
                )));
            }
        }
    }
    Ok(files)
}
