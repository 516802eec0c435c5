//! A review: the person's comments on the lines of a pending action, and the verdict they go
//! with (issue 27).
//!
//! A [`Comment`] is anchored to what it was written against: a file of the action's change
//! set, a side (`old`: the bytes the preview read; `new`: the bytes it proposes), a line range
//! (1-based, inclusive) and the exact lines of that range ([`Comment::quote`]), so it still
//! reads right when the file moves on. A comment on one `ast_edit` replacement names it
//! (`replacement_id`) and is anchored to the new lines the replacement writes. The engine
//! makes the anchor ([`anchor`]): the caller says where, the engine quotes.
//!
//! Comments are drafts while the action is pending (added, edited, deleted through
//! [`crate::Session::add_comment`] and friends; kept with the action by the store's
//! persistence hook, so they survive a restart), and go with the decision: an apply, a partial
//! apply, or **Request changes** — a discard whose result carries the review
//! ([`Review::request_changes`]). The `resolve` result then says, after the decision line as
//! today, every comment in file order ([`Review::render`]):
//!
//! ```text
//! Discarded: AST Edit: 2 replacements in 1 file. Reason: not like this
//! Changes requested: 2 comments, in file order:
//! src/a.ts:3: "let x = 1;" — use const
//! src/a.ts:7-8: (old side) "if (a) {\n  b();" — keep this check
//! ```
//!
//! and its details carry the same as data (`review: {request_changes, comments: [...]}`).

use serde::{Deserialize, Serialize};

use crate::changeset::{Change, ChangeSet};

/// Which side of a file's diff a comment is on: the bytes the preview read (`old`, removed
/// lines) or the bytes the action proposes (`new`, added and unchanged lines).
pub use resolve_protocol::CommentSide;

/// One comment on lines of a pending action's file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    /// Unique within the action (`c1`, `c2`, …); never reused.
    pub id: String,
    /// Workspace-relative, as the action's file list shows it.
    pub path: String,
    pub side: CommentSide,
    /// 1-based, inclusive; `start_line <= end_line`.
    pub start_line: u32,
    pub end_line: u32,
    /// The exact lines `start_line..=end_line` of that side, joined by `\n` (at most
    /// [`QUOTE_LINES`] lines and [`QUOTE_BYTES`] bytes; a longer range ends with `…`).
    pub quote: String,
    /// What the person says, verbatim.
    pub text: String,
    /// The `ast_edit` replacement it is on (1-based id in the file), when it is on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement_id: Option<u32>,
}

/// Where a new comment goes and what it says; the engine quotes the lines ([`anchor`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CommentDraft {
    pub path: String,
    #[serde(default)]
    pub side: CommentSide,
    /// Ignored when `replacement_id` is given (the replacement's lines are used).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_line: u32,
    /// Defaults to `start_line`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement_id: Option<u32>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The review that goes with a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Review {
    /// "Request changes": the action was discarded so that the agent proposes again.
    #[serde(default)]
    pub request_changes: bool,
    /// In file order (the action's file order, then line, then old before new).
    pub comments: Vec<Comment>,
}

/// What a caller of `resolve` adds to the comments kept with the action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ReviewRequest {
    #[serde(default)]
    pub request_changes: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<CommentDraft>,
}

/// Lines a quote keeps.
pub const QUOTE_LINES: usize = 20;
/// Bytes a quote keeps.
pub const QUOTE_BYTES: usize = 4000;
/// Characters a comment's text may have.
pub const MAX_COMMENT_CHARS: usize = 10_000;
/// Comments one action may carry.
pub const MAX_COMMENTS: usize = 500;

/// Why a comment cannot be made (a message naming the value and what to do).
pub type AnchorError = String;

/// Why a comment could not be added, edited or deleted; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommentError {
    #[error("No pending action {id}: it was decided or is gone, so its comments cannot change.")]
    NoAction { id: String },
    #[error("Action {action_id} has no comment {comment_id} (deleted already?).")]
    NoComment { action_id: String, comment_id: String },
    #[error("\"{label}\" has no file list to comment on: say it in the reason instead.")]
    NoFiles { label: String },
    #[error("{0}")]
    Refused(String),
}

/// A comment's text, checked: not blank, at most [`MAX_COMMENT_CHARS`]; trailing blanks cut.
pub fn check_text(text: &str) -> Result<String, AnchorError> {
    let text = text.trim_end();
    if text.trim().is_empty() {
        return Err("A comment needs some text: say what should change.".into());
    }
    let n = text.chars().count();
    if n > MAX_COMMENT_CHARS {
        return Err(format!("A comment has at most {MAX_COMMENT_CHARS} characters; this one has {n}. Shorten it."));
    }
    Ok(text.to_string())
}

/// The lines of `bytes` (without their line ends).
fn lines_of(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(&text);
    body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect()
}

/// `start..=end` of `lines` as a quote, cut at [`QUOTE_LINES`] / [`QUOTE_BYTES`].
fn quote(lines: &[String], start: u32, end: u32) -> String {
    let range = &lines[(start - 1) as usize..end as usize];
    let mut out = String::new();
    for (i, line) in range.iter().enumerate() {
        if i == QUOTE_LINES || out.len() + line.len() > QUOTE_BYTES {
            out.push('…');
            return out;
        }
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

/// The 1-based line of byte `offset` in `bytes`.
fn line_at(bytes: &[u8], offset: usize) -> u32 {
    let end = offset.min(bytes.len());
    bytes[..end].iter().filter(|&&b| b == b'\n').count() as u32 + 1
}

/// Makes the comment `draft` describes on `cs` (id `id`): checks the file, side, lines and
/// replacement against the change set, quotes the lines. Refuses with what to do.
pub fn anchor(cs: &ChangeSet, draft: &CommentDraft, id: String) -> Result<Comment, AnchorError> {
    let text = check_text(&draft.text)?;
    let path = draft.path.strip_prefix("./").unwrap_or(&draft.path);
    let change = cs.changes().iter().find(|c| c.path() == path).ok_or_else(|| {
        let files: Vec<&str> = cs.changes().iter().map(|c| c.path()).take(10).collect();
        format!(
            "Cannot comment on {:?}: it is not one of the action's files ({}{}).",
            draft.path,
            files.join(", "),
            if cs.changes().len() > files.len() { ", …" } else { "" }
        )
    })?;
    let (old, new): (Option<&[u8]>, Option<&[u8]>) = match change {
        Change::Edit { before, after, .. } => (Some(before), Some(after)),
        Change::Create { contents, .. } => (None, Some(contents)),
        Change::Delete { before, .. } => (Some(before), None),
        Change::Rename { .. } => (None, None),
    };
    if old.is_none() && new.is_none() {
        return Err(format!("Cannot comment on a line of {path}: it is only renamed, it has no lines in this action."));
    }
    let (side, start, end) = match draft.replacement_id {
        Some(rid) => {
            let (Some(_), Some(after)) = (old, new) else {
                return Err(format!("{path} has no single replacements: comment on its lines instead."));
            };
            let reps = cs
                .replacements(path)
                .ok_or_else(|| format!("{path} has no single replacements: comment on its lines instead."))?;
            let r = reps.get(rid).ok_or_else(|| {
                format!("{path} has no replacement {rid} (its replacements are 1 to {}).", reps.len())
            })?;
            // Where the replacement's text lands in the new bytes: its start moved by what
            // the replacements before it added or removed.
            let shift: i64 =
                reps.iter().take_while(|p| p.id < rid).map(|p| p.text.len() as i64 - (p.end - p.start) as i64).sum();
            let new_start = (r.start as i64 + shift).max(0) as usize;
            let start = line_at(after, new_start);
            let end = match r.text.len() {
                0 => start,
                n => line_at(after, new_start + n - 1).max(start),
            };
            (CommentSide::New, start, end)
        }
        None => (draft.side, draft.start_line, draft.end_line.unwrap_or(draft.start_line)),
    };
    let bytes = match side {
        CommentSide::Old => old.ok_or_else(|| {
            format!(
                "{path} is created by this action: it has no old side. Comment on the new side (\"side\": \"new\")."
            )
        })?,
        CommentSide::New => new.ok_or_else(|| {
            format!(
                "{path} is deleted by this action: it has no new side. Comment on the old side (\"side\": \"old\")."
            )
        })?,
    };
    if crate::diff::is_binary(bytes) {
        return Err(format!("Cannot comment on a line of {path}: it is a binary file."));
    }
    let lines = lines_of(bytes);
    if start == 0 || end < start || end as usize > lines.len() {
        return Err(format!(
            "Lines {start}-{end} are not in the {} side of {path}, which has {} line{}: give 1 <= start_line <= end_line <= {}.",
            side.as_str(),
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            lines.len()
        ));
    }
    Ok(Comment {
        id,
        path: path.to_string(),
        side,
        start_line: start,
        end_line: end,
        quote: quote(&lines, start, end),
        text,
        replacement_id: draft.replacement_id,
    })
}

/// Puts `comments` in file order: the order of `cs`'s files (when known), then line, then the
/// old side before the new, then the order they were written.
pub fn sort_in_file_order(comments: &mut [Comment], cs: Option<&ChangeSet>) {
    let position =
        |path: &str| cs.and_then(|cs| cs.changes().iter().position(|c| c.path() == path)).unwrap_or(usize::MAX);
    comments.sort_by(|a, b| {
        (position(&a.path), &a.path, a.start_line, a.side, a.end_line).cmp(&(
            position(&b.path),
            &b.path,
            b.start_line,
            b.side,
            b.end_line,
        ))
    });
}

impl Comment {
    /// `path:line: "quoted line" — comment` (a range as `start-end`; `(old side)` and
    /// `(replacement N)` before the quote when they apply; the quote JSON-escaped, so a
    /// multi-line quote stays on one line; later lines of the text indented by four spaces).
    pub fn render(&self) -> String {
        let lines = if self.start_line == self.end_line {
            self.start_line.to_string()
        } else {
            format!("{}-{}", self.start_line, self.end_line)
        };
        let mut marks = Vec::new();
        if self.side == CommentSide::Old {
            marks.push("old side".to_string());
        }
        if let Some(r) = self.replacement_id {
            marks.push(format!("replacement {r}"));
        }
        let marks = if marks.is_empty() { String::new() } else { format!("({}) ", marks.join(", ")) };
        let quoted = serde_json::to_string(&self.quote).unwrap_or_default();
        let text = self.text.replace("\r\n", "\n").replace('\n', "\n    ");
        format!("{}:{lines}: {marks}{quoted} — {text}", self.path)
    }
}

impl Review {
    /// Whether there is anything to say (a request for changes, or a comment).
    pub fn is_empty(&self) -> bool {
        !self.request_changes && self.comments.is_empty()
    }

    /// The text that follows the decision line in the `resolve` result: the reason when the
    /// decision line does not say it (`reason`: `Some` for an apply), a line saying what the
    /// review is, then every comment ([`Comment::render`]) in the order held (file order).
    pub fn render(&self, reason: Option<&str>) -> String {
        let mut lines = Vec::new();
        if let Some(reason) = reason {
            lines.push(format!("Reason: {reason}"));
        }
        let n = self.comments.len();
        let count = crate::changeset::plural(n, "comment", "comments");
        lines.push(match (self.request_changes, n) {
            (true, 0) => "Changes requested (no line comments).".to_string(),
            (true, _) => format!("Changes requested: {count}, in file order:"),
            (false, _) => format!("Review: {count}, in file order:"),
        });
        lines.extend(self.comments.iter().map(Comment::render));
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changeset::Replacements;

    fn cs() -> ChangeSet {
        let mut cs = ChangeSet::new();
        cs.edit("a.ts", b"one\ntwo\nthree\n".to_vec(), b"one\n2\nthree\nfour\n".to_vec());
        cs.create("new.ts", b"fresh\n".to_vec());
        cs.delete("old.ts", b"gone\r\nbye\r\n".to_vec());
        cs
    }

    fn draft(path: &str, side: CommentSide, start: u32, end: u32, text: &str) -> CommentDraft {
        CommentDraft {
            path: path.into(),
            side,
            start_line: start,
            end_line: Some(end),
            text: text.into(),
            replacement_id: None,
        }
    }

    #[test]
    fn a_comment_quotes_the_exact_lines_of_its_side() {
        let c = anchor(&cs(), &draft("a.ts", CommentSide::New, 2, 3, "why 2?"), "c1".into()).unwrap();
        assert_eq!(c.quote, "2\nthree");
        let c = anchor(&cs(), &draft("a.ts", CommentSide::Old, 2, 2, "keep"), "c2".into()).unwrap();
        assert_eq!(c.quote, "two");
        let c = anchor(&cs(), &draft("./old.ts", CommentSide::Old, 1, 2, "x"), "c3".into()).unwrap();
        assert_eq!((c.path.as_str(), c.quote.as_str()), ("old.ts", "gone\nbye"), "CR LF ends are not quoted");
    }

    #[test]
    fn bad_anchors_are_refused_with_what_to_do() {
        let err = |d: CommentDraft| anchor(&cs(), &d, "c".into()).unwrap_err();
        assert!(err(draft("b.ts", CommentSide::New, 1, 1, "x"))
            .contains("not one of the action's files (a.ts, new.ts, old.ts)"));
        assert!(err(draft("a.ts", CommentSide::New, 0, 1, "x")).contains("which has 4 lines"));
        assert!(err(draft("a.ts", CommentSide::Old, 3, 4, "x")).contains("which has 3 lines"));
        assert!(err(draft("a.ts", CommentSide::New, 3, 2, "x")).contains("Lines 3-2"));
        assert!(err(draft("new.ts", CommentSide::Old, 1, 1, "x")).contains("no old side"));
        assert!(err(draft("old.ts", CommentSide::New, 1, 1, "x")).contains("no new side"));
        assert!(err(draft("a.ts", CommentSide::New, 1, 1, "  \n")).contains("needs some text"));
    }

    #[test]
    fn a_comment_on_a_replacement_is_anchored_to_the_lines_it_writes() {
        let before = "a(1);\nb(2);\na(3);\n";
        let after = "xx(1);\nb(2);\nmulti\nline(3);\n";
        let mut cs = ChangeSet::new();
        cs.edit("f.ts", before.as_bytes().to_vec(), after.as_bytes().to_vec());
        let mut reps = Replacements::new();
        reps.push(1, 0, 1, b"xx");
        reps.push(3, 12, 13, b"multi\nline");
        assert!(cs.set_replacements("f.ts", reps));
        let d =
            CommentDraft { path: "f.ts".into(), text: "split?".into(), replacement_id: Some(2), ..Default::default() };
        let c = anchor(&cs, &d, "c1".into()).unwrap();
        assert_eq!((c.side, c.start_line, c.end_line), (CommentSide::New, 3, 4));
        assert_eq!(c.quote, "multi\nline(3);");
        let d = CommentDraft { replacement_id: Some(3), ..d };
        assert!(anchor(&cs, &d, "c2".into()).unwrap_err().contains("no replacement 3 (its replacements are 1 to 2)"));
    }

    #[test]
    fn comments_render_one_line_each_in_file_order() {
        let set = cs();
        let mut comments = vec![
            anchor(&set, &draft("old.ts", CommentSide::Old, 1, 1, "why delete?"), "c1".into()).unwrap(),
            anchor(&set, &draft("a.ts", CommentSide::New, 4, 4, "new \"line\"\nsecond line"), "c2".into()).unwrap(),
            anchor(&set, &draft("a.ts", CommentSide::Old, 2, 3, "was fine"), "c3".into()).unwrap(),
        ];
        sort_in_file_order(&mut comments, Some(&set));
        let review = Review { request_changes: true, comments };
        assert_eq!(
            review.render(None),
            "Changes requested: 3 comments, in file order:\n\
             a.ts:2-3: (old side) \"two\\nthree\" — was fine\n\
             a.ts:4: \"four\" — new \"line\"\n    second line\n\
             old.ts:1: (old side) \"gone\" — why delete?"
        );
        let review = Review { request_changes: false, comments: review.comments[..1].to_vec() };
        assert_eq!(
            review.render(Some("ok")),
            "Reason: ok\nReview: 1 comment, in file order:\na.ts:2-3: (old side) \"two\\nthree\" — was fine"
        );
        assert_eq!(
            Review { request_changes: true, comments: vec![] }.render(None),
            "Changes requested (no line comments)."
        );
    }

    #[test]
    fn a_long_range_is_quoted_up_to_the_cap() {
        let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let mut cs = ChangeSet::new();
        cs.create("long.txt", body.into_bytes());
        let c = anchor(&cs, &draft("long.txt", CommentSide::New, 1, 30, "too long"), "c1".into()).unwrap();
        assert_eq!(c.quote.lines().count(), QUOTE_LINES);
        assert!(c.quote.ends_with("line 20…"), "{}", c.quote);
    }
}
