//! The durable intent record of an apply: `.rdesk-apply.log` at the workspace root.
//!
//! Its first line (JSON) is written and synced before anything else is touched: every file
//! the apply will change, the temporary, backup and parking names it will use, and the
//! previewed and new hashes. Each later line marks a phase reached (after the folders
//! involved were synced): `staged` (every new content is in a synced temporary file),
//! `parked` (every rename source is under its parking name), `committed` (every file is in
//! place). With that, the state of every file on disk is unambiguous at any instant, and
//! `super::rollback` can finish an apply that a killed process left half-done. A rollback
//! that could not put everything back adds `{"rollback":"incomplete"}`: from then on every
//! recovery of this record only moves its own files back with no-replace renames and never
//! replaces or removes a file at a name the person sees (`super::rollback::Care::Cautious`).
//!
//! The record is created mode 0600 (set with `fchmod`, whatever the umask) and is read back
//! only after `super::record_check` found it to be one the desk could have written.

use std::fs;
use std::io::{self, Read, Write};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::fsops::Tree;
use super::record_check::{self, RefusalReason, MAX_RECORD_BYTES};
use super::recovery::ApplyContext;
use super::EntryKind;

/// The record's name at the workspace root.
pub const RECORD_NAME: &str = ".rdesk-apply.log";

/// The record format this desk writes and reads.
pub(super) const VERSION: u32 = 1;

/// How far a commit got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Phase {
    /// The record exists; folders and temporary files may be partly created.
    Prepared,
    /// Every temporary file is written and synced; rename sources may be partly parked.
    Staged,
    /// Every rename source is parked; files may be partly moved into place.
    Parked,
    /// Every file is in place; only backups remain to remove.
    Committed,
}

/// One file operation, with every name it uses (workspace-relative).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum Op {
    Edit { path: String, tmp: String, backup: String, before: String, after: String },
    Create { path: String, tmp: String, after: String },
    Delete { path: String, backup: String, before: String },
    Move { from: String, to: String, parked: String, kind: EntryKind, before: String },
}

/// The first line of the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Intent {
    pub version: u32,
    pub pid: u32,
    pub started_at: DateTime<Utc>,
    pub context: Option<ApplyContext>,
    /// Folders the apply creates, parents first.
    pub dirs: Vec<String>,
    pub ops: Vec<Op>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PhaseLine {
    phase: Phase,
}

/// The mark of a rollback that could not put everything back.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RollbackLine {
    rollback: RollbackMark,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RollbackMark {
    Incomplete,
}

impl<'de> Deserialize<'de> for EntryKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match String::deserialize(d)?.as_str() {
            "file" => Ok(EntryKind::File),
            "symlink" => Ok(EntryKind::Symlink),
            other => Err(serde::de::Error::custom(format!("unknown entry kind `{other}`"))),
        }
    }
}

/// The open record of a running apply.
pub(super) struct Record {
    file: fs::File,
}

impl Record {
    /// Writes the intent and syncs it (and the root folder, so the record's name is durable).
    /// The file is mode 0600 whatever the umask. When anything fails, the record is removed
    /// again (nothing else was touched yet).
    pub(super) fn create(tree: &mut Tree, intent: &Intent) -> io::Result<Self> {
        let mut line = serde_json::to_vec(intent).map_err(io::Error::other)?;
        line.push(b'\n');
        // Room for the marks (a few short lines) within the limit recovery reads.
        if line.len() as u64 + 256 > MAX_RECORD_BYTES {
            return Err(io::Error::other(format!(
                "the record of this apply would be {} bytes, more than the {MAX_RECORD_BYTES} a record may have; apply fewer files at once",
                line.len()
            )));
        }
        let file = tree.create_new(RECORD_NAME, 0o600)?;
        let written = (|| {
            let mut file = file;
            rustix::fs::fchmod(&file, rustix::fs::Mode::from_raw_mode(0o600))?;
            file.write_all(&line)?;
            tree.sync_file(&file, RECORD_NAME)?;
            tree.sync_dir("")?;
            Ok::<_, io::Error>(file)
        })();
        match written {
            Ok(file) => Ok(Self { file }),
            Err(e) => {
                let _ = remove(tree);
                Err(e)
            }
        }
    }

    /// Marks `phase` reached, durably.
    pub(super) fn mark(&mut self, tree: &mut Tree, phase: Phase) -> io::Result<()> {
        append(tree, &mut self.file, &PhaseLine { phase })
    }

    /// Marks that a rollback could not put everything back (see the module docs).
    pub(super) fn mark_rollback_incomplete(&mut self, tree: &mut Tree) -> io::Result<()> {
        append(tree, &mut self.file, &RollbackLine { rollback: RollbackMark::Incomplete })
    }

    /// The record of an interrupted apply, opened to add a mark (by a recovery).
    pub(super) fn reopen(tree: &mut Tree) -> io::Result<Self> {
        let fd = rustix::fs::openat(
            tree.root_fd(),
            RECORD_NAME,
            rustix::fs::OFlags::WRONLY
                | rustix::fs::OFlags::APPEND
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?;
        Ok(Self { file: fs::File::from(fd) })
    }
}

fn append(tree: &mut Tree, file: &mut fs::File, line: &impl Serialize) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(line).map_err(io::Error::other)?;
    bytes.push(b'\n');
    file.write_all(&bytes)?;
    tree.sync_data(file, RECORD_NAME)
}

/// Removes the record (the apply is finished, either way) and syncs the root.
pub(super) fn remove(tree: &mut Tree) -> io::Result<()> {
    tree.unlink(RECORD_NAME)?;
    tree.sync_dir("")
}

/// What a record on disk says.
pub(super) enum Found {
    /// A complete intent, checked (`super::record_check`), and what its marks say.
    Intent { intent: Box<Intent>, phase: Phase, rollback_incomplete: bool },
    /// The first line never finished: nothing else was touched.
    Torn,
}

/// Reads the record at the root, if there is one. `Err` when it must not be acted on.
pub(super) fn read(tree: &mut Tree) -> Result<Option<Found>, RefusalReason> {
    use rustix::fs::{Mode, OFlags};
    let unreadable = |e: io::Error| RefusalReason::Unreadable { error: e.to_string() };
    let fd = match rustix::fs::openat(
        tree.root_fd(),
        RECORD_NAME,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(rustix::io::Errno::LOOP) => return Err(RefusalReason::Symlink),
        Err(e) => return Err(unreadable(e.into())),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| unreadable(e.into()))?;
    record_check::check_file(&st)?;
    let mut raw = Vec::new();
    fs::File::from(fd).take(MAX_RECORD_BYTES + 1).read_to_end(&mut raw).map_err(unreadable)?;
    if raw.len() as u64 > MAX_RECORD_BYTES {
        return Err(RefusalReason::TooLarge { size: raw.len() as u64, limit: MAX_RECORD_BYTES });
    }
    parse(&raw).map(Some)
}

/// The start of every record this desk writes (`Intent` serialises `version` first).
const START: &[u8] = b"{\"version\":";

fn parse(raw: &[u8]) -> Result<Found, RefusalReason> {
    let not_a_record = |what: String| RefusalReason::NotARecord { what };
    // A line without its newline was cut short by the stop: it never counted.
    let complete: Vec<&[u8]> =
        raw.split_inclusive(|b| *b == b'\n').filter_map(|chunk| chunk.strip_suffix(b"\n")).collect();
    let Some(first) = complete.first() else {
        // Only a first line cut short is the desk's torn record; anything else is not ours.
        let n = raw.len().min(START.len());
        return if raw[..n] == START[..n] {
            Ok(Found::Torn)
        } else {
            Err(not_a_record("its first line is not the start of an apply record".into()))
        };
    };
    let intent: Intent = match serde_json::from_slice(first) {
        Ok(i) => i,
        Err(e) => {
            // The version first, so a newer format is named as such.
            #[derive(Deserialize)]
            struct Versioned {
                version: u32,
            }
            if let Ok(v) = serde_json::from_slice::<Versioned>(first) {
                if v.version != VERSION {
                    return Err(RefusalReason::UnknownVersion { found: v.version, known: VERSION });
                }
            }
            return Err(not_a_record(format!("line 1: {e}")));
        }
    };
    record_check::check_intent(&intent)?;
    let mut phase = Phase::Prepared;
    let mut rollback_incomplete = false;
    for (n, line) in complete.iter().enumerate().skip(1) {
        if let Ok(p) = serde_json::from_slice::<PhaseLine>(line) {
            if p.phase <= phase || rollback_incomplete {
                return Err(not_a_record(format!("line {}: the phase `{:?}` is out of order", n + 1, p.phase)));
            }
            phase = p.phase;
        } else if serde_json::from_slice::<RollbackLine>(line).is_ok() && phase < Phase::Committed {
            rollback_incomplete = true;
        } else {
            return Err(not_a_record(format!("line {} is not a phase mark", n + 1)));
        }
    }
    Ok(Found::Intent { intent: Box::new(intent), phase, rollback_incomplete })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent_line() -> String {
        let h = "0".repeat(64);
        format!(
            r#"{{"version":1,"pid":1,"started_at":"2024-01-01T00:00:00Z","context":null,"dirs":[],"ops":[{{"op":"delete","path":"a","backup":".rdesk-ab-0.bak","before":"{h}"}}]}}"#
        )
    }

    #[test]
    fn marks_are_read_in_order_and_a_line_cut_short_never_counts() {
        let raw = format!("{}\n{{\"phase\":\"staged\"}}\n{{\"phase\":\"parked\"}}\n{{\"phase\":\"comm", intent_line());
        let Ok(Found::Intent { phase, rollback_incomplete, .. }) = parse(raw.as_bytes()) else { panic!("a record") };
        assert_eq!((phase, rollback_incomplete), (Phase::Parked, false));
        let raw = format!("{}\n{{\"phase\":\"staged\"}}\n{{\"rollback\":\"incomplete\"}}\n", intent_line());
        let Ok(Found::Intent { phase, rollback_incomplete, .. }) = parse(raw.as_bytes()) else { panic!("a record") };
        assert_eq!((phase, rollback_incomplete), (Phase::Staged, true));
    }

    #[test]
    fn only_a_cut_short_start_of_a_record_is_torn_and_anything_else_is_refused() {
        for torn in ["", "{", "{\"version\":", "{\"version\":1,\"pid\":4"] {
            assert!(matches!(parse(torn.as_bytes()), Ok(Found::Torn)), "{torn:?}");
        }
        for garbage in ["hello", "{\"ops\":[]", "not json\n", "{\"version\":1}\n"] {
            assert!(matches!(parse(garbage.as_bytes()), Err(RefusalReason::NotARecord { .. })), "{garbage:?}");
        }
        let out_of_order = format!("{}\n{{\"phase\":\"parked\"}}\n{{\"phase\":\"staged\"}}\n", intent_line());
        assert!(matches!(parse(out_of_order.as_bytes()), Err(RefusalReason::NotARecord { .. })));
        let unknown_line = format!("{}\n{{\"phase\":\"staged\",\"x\":1}}\n", intent_line());
        assert!(matches!(parse(unknown_line.as_bytes()), Err(RefusalReason::NotARecord { .. })));
        let newer = intent_line().replace("\"version\":1", "\"version\":7") + "\n";
        assert_eq!(parse(newer.as_bytes()).err(), Some(RefusalReason::UnknownVersion { found: 7, known: 1 }));
    }
}
