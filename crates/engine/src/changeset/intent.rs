//! The durable intent record of an apply: `.rdesk-apply.log` at the workspace root.
//!
//! Its first line (JSON) is written and synced before anything else is touched: every file
//! the apply will change, the temporary, backup and parking names it will use, and the
//! previewed and new hashes. Each later line marks a phase reached (after the folders
//! involved were synced): `staged` (every new content is in a synced temporary file),
//! `parked` (every rename source is under its parking name), `committed` (every file is in
//! place). With that, the state of every file on disk is unambiguous at any instant, and
//! `super::rollback` can finish an apply that a killed process left half-done.

use std::fs;
use std::io::{self, Write};
use std::os::fd::AsFd;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::fsops::Tree;
use super::recovery::ApplyContext;
use super::EntryKind;

/// The record's name at the workspace root.
pub const RECORD_NAME: &str = ".rdesk-apply.log";

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
struct PhaseLine {
    phase: Phase,
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
    pub(super) fn create(tree: &mut Tree, intent: &Intent) -> io::Result<Self> {
        let mut line = serde_json::to_vec(intent).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut file = tree.create_new(RECORD_NAME, 0o600)?;
        file.write_all(&line)?;
        file.sync_all()?;
        rustix::fs::fsync(tree.root_fd())?;
        Ok(Self { file })
    }

    /// Marks `phase` reached, durably.
    pub(super) fn mark(&mut self, phase: Phase) -> io::Result<()> {
        let mut line = serde_json::to_vec(&PhaseLine { phase }).map_err(io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        rustix::fs::fdatasync(self.file.as_fd())?;
        Ok(())
    }
}

/// Removes the record (the apply is finished, either way) and syncs the root.
pub(super) fn remove(tree: &mut Tree) -> io::Result<()> {
    tree.unlink(RECORD_NAME)?;
    rustix::fs::fsync(tree.root_fd())?;
    Ok(())
}

/// What a record on disk says.
pub(super) enum Found {
    /// A complete intent and the last phase marked.
    Intent(Box<Intent>, Phase),
    /// The first line never finished: nothing else was touched.
    Torn,
}

/// Reads the record at the root, if there is one.
pub(super) fn read(tree: &mut Tree) -> io::Result<Option<Found>> {
    let fd = match rustix::fs::openat(
        tree.root_fd(),
        RECORD_NAME,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut raw = Vec::new();
    io::Read::read_to_end(&mut fs::File::from(fd), &mut raw)?;
    // A line without its newline was cut short by the stop: it never counted.
    let complete: Vec<&[u8]> =
        raw.split_inclusive(|b| *b == b'\n').filter_map(|chunk| chunk.strip_suffix(b"\n")).collect();
    let Some(first) = complete.first() else { return Ok(Some(Found::Torn)) };
    let Ok(intent) = serde_json::from_slice::<Intent>(first) else { return Ok(Some(Found::Torn)) };
    let mut phase = Phase::Prepared;
    for line in &complete[1..] {
        if let Ok(p) = serde_json::from_slice::<PhaseLine>(line) {
            phase = phase.max(p.phase);
        }
    }
    Ok(Some(Found::Intent(Box::new(intent), phase)))
}
