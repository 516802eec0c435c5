//! Undo and redo of applied change sets.
//!
//! When a change set is applied, [`UndoRecord::of`] keeps what is needed to put the disk back:
//! for an edit, only the byte ranges the apply replaced (each hunk: where it is in the new
//! contents, how long it is there, and the old bytes), never a copy of the file or of the
//! workspace; for a created file, its hash (the undo deletes it); for a deleted file, its
//! bytes; for a rename, the reverse rename. Every entry is pinned to the hash the apply left.
//!
//! An undo ([`UndoRecord::inverse`]) reads the disk now, refuses with every file that changed
//! since the apply (nothing written), and otherwise builds an ordinary [`ChangeSet`] that the
//! normal apply writes (hash-pinned, atomic, crash-safe). The record of that change set is the
//! redo; the record of the redo is the next undo, and so on.
//!
//! Records are serialisable (serde) and have a compact binary form ([`UndoRecord::encode`])
//! for the journal.

use std::fs;
use std::io;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::changeset::{plural, ApplyError, Change, ChangeSet, ContentHash, EntryKind};
use crate::workspace::Workspace;

/// The (hidden) tool names an undo and a redo are recorded under in the transcript.
pub const UNDO_TOOL_NAME: &str = "undo";
pub const REDO_TOOL_NAME: &str = "redo";

/// How long the line diff of one edited file may take before it settles for a coarser
/// (still exact) set of hunks.
const DIFF_DEADLINE: Duration = Duration::from_secs(2);

/// What it takes to revert one applied change set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoRecord {
    pub changes: Vec<UndoChange>,
}

/// One file of an [`UndoRecord`]. Hashes are BLAKE3 in hex ([`ContentHash`]'s display).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum UndoChange {
    /// The apply left `path` with hash `now`; putting `hunks` back gives the bytes of hash `was`.
    Edited { path: String, now: String, was: String, hunks: Vec<UndoHunk> },
    /// The apply created `path` with hash `now`: undoing deletes it.
    Created { path: String, now: String },
    /// The apply deleted `path`, whose bytes were `bytes`: undoing creates it again.
    Deleted { path: String, bytes: Vec<u8> },
    /// The apply renamed `from` to `to` (an entry of `kind` with hash `hash`): undoing renames back.
    Renamed { from: String, to: String, kind: EntryKind, hash: String },
}

/// A replaced byte range: `len` bytes at `offset` of the contents the apply left were `old`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoHunk {
    pub offset: u64,
    pub len: u64,
    pub old: Vec<u8>,
}

/// Why an undo (or a redo) was not made. Nothing was written in any case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UndoError {
    /// Files changed on disk since the apply: `(path, what happened)`.
    #[error(
        "{} changed since the apply: {}. Nothing was written; the files are as they are now.",
        plural(.files.len(), "file", "files"),
        .files.iter().map(|(p, why)| format!("{p} ({why})")).collect::<Vec<_>>().join(", ")
    )]
    Changed { files: Vec<(String, String)> },
    /// The record cannot be used (it does not give back the bytes it names).
    #[error("{0}")]
    Invalid(String),
    /// The apply of the reverting change set failed (its message says why).
    #[error("{0}")]
    Apply(ApplyError),
}

impl UndoError {
    /// The workspace-relative files that changed since the apply (empty for other failures).
    pub fn changed_files(&self) -> Vec<String> {
        match self {
            UndoError::Changed { files } => files.iter().map(|(p, _)| p.clone()).collect(),
            UndoError::Invalid(_) | UndoError::Apply(_) => Vec::new(),
        }
    }
}

impl From<ApplyError> for UndoError {
    fn from(e: ApplyError) -> Self {
        match e {
            // A file that changed between our check and the apply's: the same refusal.
            ApplyError::Stale { files } => UndoError::Changed { files },
            other => UndoError::Apply(other),
        }
    }
}

fn hex(h: ContentHash) -> String {
    h.to_string()
}

impl UndoRecord {
    /// About how many bytes the record holds (paths, hashes, the bytes it puts back): what
    /// the journal's write queue counts for it (`Writer::run_sized`).
    pub fn held_bytes(&self) -> u64 {
        self.changes
            .iter()
            .map(|c| match c {
                UndoChange::Edited { path, now, was, hunks } => {
                    (path.len() + now.len() + was.len()) as u64 + hunks.iter().map(|h| h.old.len() as u64 + 16).sum::<u64>()
                }
                UndoChange::Created { path, now } => (path.len() + now.len()) as u64,
                UndoChange::Deleted { path, bytes } => (path.len() + bytes.len()) as u64,
                UndoChange::Renamed { from, to, hash, .. } => (from.len() + to.len() + hash.len()) as u64,
            } + 32)
            .sum()
    }

    /// The record that reverts `cs` once it has been applied.
    pub fn of(cs: &ChangeSet) -> UndoRecord {
        let changes = cs
            .changes()
            .iter()
            .map(|c| match c {
                Change::Edit { path, before, before_hash, after } => UndoChange::Edited {
                    path: path.clone(),
                    now: hex(ContentHash::of(after)),
                    was: hex(*before_hash),
                    hunks: replaced_hunks(before, after),
                },
                Change::Create { path, contents } => {
                    UndoChange::Created { path: path.clone(), now: hex(ContentHash::of(contents)) }
                }
                Change::Delete { path, before, .. } => {
                    UndoChange::Deleted { path: path.clone(), bytes: before.to_vec() }
                }
                Change::Rename { from, to, kind, before_hash } => {
                    UndoChange::Renamed { from: from.clone(), to: to.clone(), kind: *kind, hash: hex(*before_hash) }
                }
            })
            .collect();
        UndoRecord { changes }
    }

    /// The files it touches (the path shown for each change; the target for a rename).
    pub fn files(&self) -> Vec<&str> {
        self.changes
            .iter()
            .map(|c| match c {
                UndoChange::Edited { path, .. }
                | UndoChange::Created { path, .. }
                | UndoChange::Deleted { path, .. } => path.as_str(),
                UndoChange::Renamed { to, .. } => to.as_str(),
            })
            .collect()
    }

    /// The change set that reverts the apply, built from the disk now. Refuses with every
    /// file that changed since the apply (content, deleted, or a file where the undo would
    /// create one). Reads only; writes nothing.
    pub fn inverse(&self, ws: &Workspace) -> Result<ChangeSet, UndoError> {
        let mut cs = ChangeSet::new();
        let mut changed: Vec<(String, String)> = Vec::new();
        let invalid = |e: crate::workspace::WorkspaceError| UndoError::Invalid(e.to_string());
        for change in &self.changes {
            match change {
                UndoChange::Edited { path, now, was, hunks } => match read_file(ws, path)? {
                    None => changed.push((path.clone(), "deleted".into())),
                    Some(bytes) if hex(ContentHash::of(&bytes)) != *now => {
                        changed.push((path.clone(), "content changed".into()))
                    }
                    Some(bytes) => {
                        let old = put_back(&bytes, hunks).ok_or_else(|| corrupt(path))?;
                        if hex(ContentHash::of(&old)) != *was {
                            return Err(corrupt(path));
                        }
                        cs.edit(path.clone(), bytes, old);
                    }
                },
                UndoChange::Created { path, now } => match read_file(ws, path)? {
                    None => changed.push((path.clone(), "deleted".into())),
                    Some(bytes) if hex(ContentHash::of(&bytes)) != *now => {
                        changed.push((path.clone(), "content changed".into()))
                    }
                    Some(bytes) => {
                        cs.delete(path.clone(), bytes);
                    }
                },
                UndoChange::Deleted { path, bytes } => {
                    let abs = ws.resolve_entry(path).map_err(invalid)?;
                    if fs::symlink_metadata(&abs).is_ok() {
                        changed.push((path.clone(), "a file appeared there".into()));
                    } else {
                        cs.create(path.clone(), bytes.clone());
                    }
                }
                UndoChange::Renamed { from, to, kind, hash } => {
                    let target = ws.resolve_entry(to).map_err(invalid)?;
                    match ContentHash::of_entry(&target, *kind) {
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {
                            changed.push((to.clone(), "deleted".into()));
                            continue;
                        }
                        Err(e) => return Err(UndoError::Invalid(format!("Cannot read {to}: {e}."))),
                        Ok(h) if hex(h) != *hash => {
                            changed.push((to.clone(), "content changed".into()));
                            continue;
                        }
                        Ok(h) => {
                            cs.rename(to.clone(), from.clone(), *kind, h);
                        }
                    }
                }
            }
        }
        // A rename back onto a name that is taken now: the apply would refuse it as stale;
        // say it here with the other files.
        for change in &self.changes {
            if let UndoChange::Renamed { from, .. } = change {
                let abs = ws.resolve_entry(from).map_err(invalid)?;
                let freed_by_undo =
                    self.changes.iter().any(|c| matches!(c, UndoChange::Renamed { to, .. } if to == from))
                        || self.changes.iter().any(|c| matches!(c, UndoChange::Created { path, .. } if path == from));
                if !freed_by_undo && fs::symlink_metadata(&abs).is_ok() {
                    changed.push((from.clone(), "a file appeared there".into()));
                }
            }
        }
        if !changed.is_empty() {
            return Err(UndoError::Changed { files: changed });
        }
        Ok(cs)
    }

    /// Reverts the apply: [`inverse`](Self::inverse), then the normal apply. Returns the record
    /// that reverts this revert (the redo).
    pub fn revert(
        &self,
        ws: &Workspace,
        context: Option<crate::changeset::ApplyContext>,
    ) -> Result<(crate::changeset::ApplyReport, UndoRecord), UndoError> {
        let cs = self.inverse(ws)?;
        let report = cs.apply_with_context(ws, context)?;
        Ok((report, UndoRecord::of(&cs)))
    }

    /// The number of bytes of file contents the record holds (old bytes of hunks, deleted files).
    pub fn content_bytes(&self) -> u64 {
        self.changes
            .iter()
            .map(|c| match c {
                UndoChange::Edited { hunks, .. } => hunks.iter().map(|h| h.old.len() as u64).sum(),
                UndoChange::Deleted { bytes, .. } => bytes.len() as u64,
                UndoChange::Created { .. } | UndoChange::Renamed { .. } => 0,
            })
            .sum()
    }

    /// A compact binary form for storage (bytes are kept as bytes, not as JSON numbers).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.content_bytes() as usize);
        out.extend_from_slice(MAGIC);
        put_u64(&mut out, self.changes.len() as u64);
        for change in &self.changes {
            match change {
                UndoChange::Edited { path, now, was, hunks } => {
                    out.push(1);
                    put_bytes(&mut out, path.as_bytes());
                    put_bytes(&mut out, now.as_bytes());
                    put_bytes(&mut out, was.as_bytes());
                    put_u64(&mut out, hunks.len() as u64);
                    for h in hunks {
                        put_u64(&mut out, h.offset);
                        put_u64(&mut out, h.len);
                        put_bytes(&mut out, &h.old);
                    }
                }
                UndoChange::Created { path, now } => {
                    out.push(2);
                    put_bytes(&mut out, path.as_bytes());
                    put_bytes(&mut out, now.as_bytes());
                }
                UndoChange::Deleted { path, bytes } => {
                    out.push(3);
                    put_bytes(&mut out, path.as_bytes());
                    put_bytes(&mut out, bytes);
                }
                UndoChange::Renamed { from, to, kind, hash } => {
                    out.push(4);
                    put_bytes(&mut out, from.as_bytes());
                    put_bytes(&mut out, to.as_bytes());
                    out.push(match kind {
                        EntryKind::File => 0,
                        EntryKind::Symlink => 1,
                    });
                    put_bytes(&mut out, hash.as_bytes());
                }
            }
        }
        out
    }

    /// Reads [`encode`](Self::encode)'s form back.
    pub fn decode(data: &[u8]) -> Result<UndoRecord, String> {
        let mut r = Reader { data, pos: 0 };
        if r.take(MAGIC.len())? != MAGIC {
            return Err("not an undo record (unknown format)".into());
        }
        let n = r.u64()?;
        let mut changes = Vec::new();
        for _ in 0..n {
            let change = match r.byte()? {
                1 => {
                    let (path, now, was) = (r.string()?, r.string()?, r.string()?);
                    let count = r.u64()?;
                    let mut hunks = Vec::new();
                    for _ in 0..count {
                        hunks.push(UndoHunk { offset: r.u64()?, len: r.u64()?, old: r.bytes()?.to_vec() });
                    }
                    UndoChange::Edited { path, now, was, hunks }
                }
                2 => UndoChange::Created { path: r.string()?, now: r.string()? },
                3 => UndoChange::Deleted { path: r.string()?, bytes: r.bytes()?.to_vec() },
                4 => {
                    let (from, to) = (r.string()?, r.string()?);
                    let kind = match r.byte()? {
                        0 => EntryKind::File,
                        1 => EntryKind::Symlink,
                        k => return Err(format!("unknown entry kind {k}")),
                    };
                    UndoChange::Renamed { from, to, kind, hash: r.string()? }
                }
                t => return Err(format!("unknown change tag {t}")),
            };
            changes.push(change);
        }
        if r.pos != data.len() {
            return Err("trailing bytes after the undo record".into());
        }
        Ok(UndoRecord { changes })
    }
}

const MAGIC: &[u8] = b"RDUNDO1\n";

fn put_u64(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len()).ok_or("truncated undo record")?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| "truncated undo record")?))
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = usize::try_from(self.u64()?).map_err(|_| "undo record too large")?;
        self.take(n)
    }
    fn string(&mut self) -> Result<String, String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| "undo record has a path that is not UTF-8".to_string())
    }
}

fn corrupt(path: &str) -> UndoError {
    UndoError::Invalid(format!(
        "The undo data of {path} does not give back the bytes the apply replaced; nothing was written."
    ))
}

/// The regular file at `path` now, or `None` when nothing is there.
fn read_file(ws: &Workspace, path: &str) -> Result<Option<Vec<u8>>, UndoError> {
    let abs = ws.resolve(path).map_err(|e| UndoError::Invalid(e.to_string()))?;
    match fs::read(&abs) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(UndoError::Invalid(format!("Cannot read {path}: {e}. Nothing was written."))),
    }
}

/// Splits after each `\n` (the last line may have none).
fn lines(b: &[u8]) -> Vec<&[u8]> {
    b.split_inclusive(|&c| c == b'\n').collect()
}

/// Byte offset of each line start, plus the total length at the end.
fn starts(lines: &[&[u8]]) -> Vec<usize> {
    let mut out = Vec::with_capacity(lines.len() + 1);
    let mut at = 0;
    out.push(0);
    for l in lines {
        at += l.len();
        out.push(at);
    }
    out
}

/// The ranges of `after` that differ from `before`, each with the bytes of `before` it
/// replaced (a line diff: a one-line edit of a large file keeps one line).
pub fn replaced_hunks(before: &[u8], after: &[u8]) -> Vec<UndoHunk> {
    // Common prefix and suffix first (bytes), then a line diff of the middle.
    let prefix = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    let max_suffix = before.len().min(after.len()) - prefix;
    let suffix = before.iter().rev().zip(after.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    let (old, new) = (&before[prefix..before.len() - suffix], &after[prefix..after.len() - suffix]);
    if old.is_empty() && new.is_empty() {
        return Vec::new();
    }
    let (old_lines, new_lines) = (lines(old), lines(new));
    let (old_at, new_at) = (starts(&old_lines), starts(&new_lines));
    let ops = similar::capture_diff_slices_deadline(
        similar::Algorithm::Myers,
        &old_lines,
        &new_lines,
        Some(Instant::now() + DIFF_DEADLINE),
    );
    let mut hunks: Vec<UndoHunk> = Vec::new();
    for op in ops {
        let (o, n) = (op.old_range(), op.new_range());
        if matches!(op, similar::DiffOp::Equal { .. }) {
            continue;
        }
        let (ob, oe) = (old_at[o.start], old_at[o.end]);
        let (nb, ne) = (new_at[n.start], new_at[n.end]);
        match hunks.last_mut() {
            // Adjacent to the previous hunk: one hunk.
            Some(last) if last.offset + last.len == (prefix + nb) as u64 => {
                last.len += (ne - nb) as u64;
                last.old.extend_from_slice(&old[ob..oe]);
            }
            _ => {
                hunks.push(UndoHunk { offset: (prefix + nb) as u64, len: (ne - nb) as u64, old: old[ob..oe].to_vec() })
            }
        }
    }
    hunks
}

/// `now` with every hunk's range replaced by its old bytes; `None` if a hunk does not fit.
fn put_back(now: &[u8], hunks: &[UndoHunk]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(now.len());
    let mut pos = 0usize;
    for h in hunks {
        let start = usize::try_from(h.offset).ok()?;
        let end = start.checked_add(usize::try_from(h.len).ok()?)?;
        if start < pos || end > now.len() {
            return None;
        }
        out.extend_from_slice(&now[pos..start]);
        out.extend_from_slice(&h.old);
        pos = end;
    }
    out.extend_from_slice(&now[pos..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(before: &[u8], after: &[u8]) -> Vec<UndoHunk> {
        let hunks = replaced_hunks(before, after);
        assert_eq!(put_back(after, &hunks).unwrap(), before, "{:?} -> {:?}", before, after);
        hunks
    }

    #[test]
    fn hunks_give_back_the_old_bytes() {
        roundtrip(b"", b"");
        roundtrip(b"a\nb\nc\n", b"a\nB\nc\n");
        roundtrip(b"a\nb\nc\n", b"");
        roundtrip(b"", b"x\ny");
        roundtrip(b"one\ntwo\nthree\nfour\n", b"zero\none\nthree\nfour\nfive");
        roundtrip(b"same", b"same");
        roundtrip(b"abc", b"abd\nx");
        roundtrip(b"x\n\n\ny\n", b"x\n\ny\n\n");
    }

    #[test]
    fn a_one_line_edit_keeps_only_that_line() {
        let before: Vec<u8> = (0..10_000).flat_map(|i| format!("line number {i}\n").into_bytes()).collect();
        let after = String::from_utf8(before.clone()).unwrap().replace("line number 5000\n", "LINE 5000\n");
        let hunks = roundtrip(&before, after.as_bytes());
        let kept: usize = hunks.iter().map(|h| h.old.len()).sum();
        assert!(kept <= "line number 5000\n".len(), "kept {kept} bytes");
        // Two edits far apart keep two small hunks, not the range between them.
        let after2 = after.replace("line number 9000\n", "LINE 9000\n");
        let hunks = roundtrip(&before, after2.as_bytes());
        assert_eq!(hunks.len(), 2);
        assert!(hunks.iter().map(|h| h.old.len()).sum::<usize>() < 64);
    }

    #[test]
    fn records_encode_and_decode() {
        let mut cs = ChangeSet::new();
        cs.edit("a.txt", b"one\ntwo\n".to_vec(), b"one\n2\n".to_vec())
            .create("n.txt", b"new".to_vec())
            .delete("d.bin", vec![0u8, 255, 10, 13])
            .rename("x", "y", EntryKind::Symlink, ContentHash::of(b"t"));
        let record = UndoRecord::of(&cs);
        let data = record.encode();
        assert_eq!(UndoRecord::decode(&data).unwrap(), record);
        assert!(UndoRecord::decode(&data[..data.len() - 1]).is_err());
        assert!(UndoRecord::decode(b"junk").is_err());
        let json = serde_json::to_string(&record).unwrap();
        assert_eq!(serde_json::from_str::<UndoRecord>(&json).unwrap(), record);
        assert_eq!(record.files(), vec!["a.txt", "n.txt", "d.bin", "y"]);
    }

    #[test]
    fn held_bytes_counts_the_bytes_a_record_puts_back() {
        let mut small = ChangeSet::new();
        small.delete("d.bin", vec![1u8; 10]);
        let mut big = ChangeSet::new();
        big.delete("d.bin", vec![1u8; 100_000]);
        let (small, big) = (UndoRecord::of(&small).held_bytes(), UndoRecord::of(&big).held_bytes());
        assert_eq!(big - small, 100_000 - 10, "a deleted file's bytes are held whole");
        assert!(big < 100_000 + 200, "plus little else: {big}");
    }
}
