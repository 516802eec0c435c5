//! The commit, in four phases, each ending with the folders it changed synced and its mark
//! in the intent record (`super::intent`):
//! 1. **staging** — the folders for new files are created and every new content is written
//!    to a temporary file beside its target, created with the target's mode (and owner),
//!    then synced;
//! 2. **parking** — every rename source is moved to a parking name (so swaps and cycles
//!    work), and its content checked there;
//! 3. **commit** — in change order: an edited or deleted file is moved aside to its backup
//!    name and *the backup* is hashed (a save that raced the apply is caught here and kept),
//!    then the new file is moved in; creates and renames never replace a path that appeared
//!    since the preview (`RENAME_NOREPLACE`);
//! 4. **clean-up** — the backups are removed and the record deleted.
//!
//! Any failure before the `committed` mark is undone by `super::rollback`, which reads
//! the disk and the phase, never an in-memory journal: the same code finishes an apply that
//! a killed process left half-done.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::Utc;

use super::fsops::{split, Tree};
use super::intent::{self, Intent, Op, Phase, Record};
use super::plan::{Plan, Step};
use super::recovery::ApplyContext;
use super::rollback::{self, Care};
use super::{ApplyError, ApplyReport, ContentHash, EntryKind};

/// Why a commit stopped: an I/O failure (with the path and what was being done), or a file
/// found changed at the moment it was moved aside.
pub(super) enum Stop {
    Io { path: String, op: &'static str, error: io::Error },
    Stale { path: String, why: String },
}

fn io_stop<'a>(path: &'a str, op: &'static str) -> impl FnOnce(io::Error) -> Stop + 'a {
    move |error| Stop::Io { path: path.to_string(), op, error }
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A token unique to this apply (process, time, counter), short so that a 255-byte file name
/// still fits beside it.
fn token() -> String {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = Utc::now().timestamp_subsec_nanos();
    format!("{:x}{:x}{n:x}", std::process::id(), nanos & 0xffff)
}

/// The temporary, backup or parking name (`suffix` `tmp`, `bak`, `mv`) of op `i` of the
/// apply with `token`: beside `path`, so a rename never crosses a folder or a file system.
/// `super::record_check` accepts only these names in a record.
pub(super) fn beside(path: &str, token: &str, i: usize, suffix: &str) -> String {
    let (dir, _) = split(path);
    let name = format!(".rdesk-{token}-{i}.{suffix}");
    if dir.is_empty() {
        name
    } else {
        format!("{dir}/{name}")
    }
}

/// The record's operations for `plan`, each with its own temporary names.
fn ops(plan: &Plan) -> Vec<Op> {
    let t = token();
    plan.steps
        .iter()
        .enumerate()
        .map(|(i, step)| match step {
            Step::Edit { path, contents, before, .. } => Op::Edit {
                path: path.clone(),
                tmp: beside(path, &t, i, "tmp"),
                backup: beside(path, &t, i, "bak"),
                before: before.to_string(),
                after: ContentHash::of(contents).to_string(),
            },
            Step::Create { path, contents } => Op::Create {
                path: path.clone(),
                tmp: beside(path, &t, i, "tmp"),
                after: ContentHash::of(contents).to_string(),
            },
            Step::Delete { path, before } => {
                Op::Delete { path: path.clone(), backup: beside(path, &t, i, "bak"), before: before.to_string() }
            }
            Step::Move { from, to, kind, before } => Op::Move {
                from: from.clone(),
                to: to.clone(),
                parked: beside(from, &t, i, "mv"),
                kind: *kind,
                before: before.to_string(),
            },
        })
        .collect()
}

#[cfg(feature = "fault-injection")]
pub(super) fn point(tree: &Tree, phase: &'static str, index: usize) -> io::Result<()> {
    crate::fault::at(crate::fault::Point { root: tree.root_path(), phase, index, target: "" })
}

#[cfg(not(feature = "fault-injection"))]
pub(super) fn point(_tree: &Tree, _phase: &'static str, _index: usize) -> io::Result<()> {
    Ok(())
}

#[cfg(feature = "fault-injection")]
fn fault(tree: &Tree, rel: &str) -> io::Result<()> {
    crate::fault::check(&tree.root_path().join(rel))
}

#[cfg(not(feature = "fault-injection"))]
fn fault(_tree: &Tree, _rel: &str) -> io::Result<()> {
    Ok(())
}

/// Carries out `plan` under the workspace lock (held by the caller).
pub(super) fn run(tree: &mut Tree, plan: &Plan, context: Option<ApplyContext>) -> Result<ApplyReport, ApplyError> {
    point(tree, "planned", 0).map_err(|e| io_error("the workspace", "start writing", e, Vec::new()))?;
    let intent = Intent {
        version: intent::VERSION,
        pid: std::process::id(),
        started_at: Utc::now(),
        context,
        dirs: plan.dirs.clone(),
        ops: ops(plan),
    };
    let mut record = Record::create(tree, &intent).map_err(|e| {
        if e.kind() == io::ErrorKind::AlreadyExists {
            // Recovery ran just before (under the same lock) and left it: not ours to remove.
            let record = tree.root_path().join(intent::RECORD_NAME).display().to_string();
            ApplyError::Unfinished { record, problems: Vec::new() }
        } else {
            io_error(intent::RECORD_NAME, "write the apply record", e, Vec::new())
        }
    })?;
    let mut phase = Phase::Prepared;
    match forward(tree, plan, &intent, &mut record, &mut phase) {
        Ok(()) => {
            let warnings = rollback::clean_up(tree, &intent, &|t: &Tree, i| point(t, "cleanup", i));
            let mut report = report(plan);
            report.warnings = warnings;
            if let Err(e) = intent::remove(tree) {
                report.warnings.push(format!("could not remove {}: {e}", intent::RECORD_NAME));
            }
            Ok(report)
        }
        Err(stop) => {
            let mut problems = rollback::roll_back(tree, &intent, phase, Care::Normal).failed;
            if problems.is_empty() {
                let _ = intent::remove(tree);
            } else if let Err(e) = record.mark_rollback_incomplete(tree) {
                problems.push(format!(
                    "{} (could not be marked: {e})",
                    tree.root_path().join(intent::RECORD_NAME).display()
                ));
            }
            Err(match stop {
                Stop::Stale { path, why } if problems.is_empty() => ApplyError::Stale { files: vec![(path, why)] },
                Stop::Stale { path, why } => io_error(&path, "apply", io::Error::other(why), problems),
                Stop::Io { path, op, error } => io_error(&path, op, error, problems),
            })
        }
    }
}

fn io_error(path: &str, op: &'static str, error: io::Error, restore_failures: Vec<String>) -> ApplyError {
    ApplyError::Io { path: path.to_string(), op, message: error.to_string(), restore_failures }
}

fn report(plan: &Plan) -> ApplyReport {
    let mut report = ApplyReport::default();
    for step in &plan.steps {
        match step {
            Step::Edit { .. } => report.edited += 1,
            Step::Create { .. } => report.created += 1,
            Step::Delete { .. } => report.deleted += 1,
            Step::Move { .. } => report.renamed += 1,
        }
    }
    report
}

/// Syncs the folders changed in the phase that ends (`index`: 0 staging, 1 parking, 2 commit).
fn sync(tree: &mut Tree, index: usize) -> Result<(), Stop> {
    point(tree, "sync", index).map_err(|error| Stop::Io { path: "the workspace".into(), op: "sync", error })?;
    tree.sync_changed().map_err(|(dir, error)| Stop::Io {
        path: if dir.is_empty() { "the workspace root".into() } else { dir },
        op: "sync the folder",
        error,
    })
}

/// Marks `phase` in the record (test point `mark`: 0 staged, 1 parked, 2 committed).
fn mark(tree: &mut Tree, record: &mut Record, phase: Phase) -> Result<(), Stop> {
    let index = phase as usize - 1;
    point(tree, "mark", index).map_err(io_stop(intent::RECORD_NAME, "write the apply record"))?;
    record.mark(tree, phase).map_err(io_stop(intent::RECORD_NAME, "write the apply record"))
}

/// The phases up to `committed`; `phase` is always the last one marked.
fn forward(tree: &mut Tree, plan: &Plan, intent: &Intent, record: &mut Record, phase: &mut Phase) -> Result<(), Stop> {
    // 1. Staging.
    for dir in &intent.dirs {
        tree.mkdir(dir).map_err(io_stop(dir, "create the folder"))?;
    }
    let mut n = 0;
    for (step, op) in plan.steps.iter().zip(&intent.ops) {
        let (path, tmp, contents, meta) = match (step, op) {
            (Step::Edit { contents, mode, uid, gid, .. }, Op::Edit { path, tmp, .. }) => {
                (path, tmp, contents, Some((*mode, *uid, *gid)))
            }
            (Step::Create { contents, .. }, Op::Create { path, tmp, .. }) => (path, tmp, contents, None),
            _ => continue,
        };
        point(tree, "staging", n).map_err(io_stop(path, "stage new contents for"))?;
        n += 1;
        stage(tree, tmp, contents, meta).map_err(io_stop(path, "stage new contents for"))?;
    }
    sync(tree, 0)?;
    mark(tree, record, Phase::Staged)?;
    *phase = Phase::Staged;

    // 2. Parking.
    for (i, op) in intent.ops.iter().filter(|op| matches!(op, Op::Move { .. })).enumerate() {
        let Op::Move { from, parked, kind, before, .. } = op else { continue };
        point(tree, "parking", i).map_err(io_stop(from, "rename"))?;
        fault(tree, from).map_err(io_stop(from, "rename"))?;
        tree.rename_noreplace(from, parked).map_err(|e| moved_or(e, from, "rename"))?;
        check_held(tree, parked, *kind, before, from)?;
    }
    sync(tree, 1)?;
    mark(tree, record, Phase::Parked)?;
    *phase = Phase::Parked;

    // 3. Commit.
    for (i, op) in intent.ops.iter().enumerate() {
        match op {
            Op::Edit { path, tmp, backup, before, .. } => {
                point(tree, "commit", i).map_err(io_stop(path, "write"))?;
                fault(tree, path).map_err(io_stop(path, "write"))?;
                tree.rename_noreplace(path, backup).map_err(|e| moved_or(e, path, "write"))?;
                check_held(tree, backup, EntryKind::File, before, path)?;
                tree.rename_noreplace(tmp, path).map_err(|e| appeared_or(e, path, "write"))?;
            }
            Op::Create { path, tmp, .. } => {
                point(tree, "commit", i).map_err(io_stop(path, "create"))?;
                fault(tree, path).map_err(io_stop(path, "create"))?;
                tree.rename_noreplace(tmp, path).map_err(|e| appeared_or(e, path, "create"))?;
            }
            Op::Delete { path, backup, before } => {
                point(tree, "commit", i).map_err(io_stop(path, "delete"))?;
                fault(tree, path).map_err(io_stop(path, "delete"))?;
                tree.rename_noreplace(path, backup).map_err(|e| moved_or(e, path, "delete"))?;
                check_held(tree, backup, EntryKind::File, before, path)?;
            }
            Op::Move { to, parked, .. } => {
                point(tree, "commit", i).map_err(io_stop(to, "rename"))?;
                fault(tree, to).map_err(io_stop(to, "rename"))?;
                tree.rename_noreplace(parked, to).map_err(|e| appeared_or(e, to, "rename onto"))?;
            }
        }
    }
    sync(tree, 2)?;
    mark(tree, record, Phase::Committed)?;
    *phase = Phase::Committed;
    Ok(())
}

/// A file that vanished between the check and the move is a stale preview, not an I/O error.
fn moved_or(error: io::Error, path: &str, op: &'static str) -> Stop {
    if error.kind() == io::ErrorKind::NotFound {
        Stop::Stale { path: path.to_string(), why: "deleted during the apply".into() }
    } else {
        Stop::Io { path: path.to_string(), op, error }
    }
}

/// A path that appeared since the preview is never replaced: the preview is stale.
fn appeared_or(error: io::Error, path: &str, op: &'static str) -> Stop {
    if error.kind() == io::ErrorKind::AlreadyExists {
        Stop::Stale { path: path.to_string(), why: "appeared during the apply".into() }
    } else {
        Stop::Io { path: path.to_string(), op, error }
    }
}

/// The entry now held at `held` (a backup or a parking name) must still be what the preview
/// read: a save that raced the apply is caught here, and the rollback puts it back.
fn check_held(tree: &mut Tree, held: &str, kind: EntryKind, before: &str, shown: &str) -> Result<(), Stop> {
    match tree.hash(held, kind) {
        Ok(h) if h.to_string() == before => Ok(()),
        Ok(_) => Err(Stop::Stale { path: shown.to_string(), why: "changed during the apply".into() }),
        Err(error) => Err(Stop::Io { path: shown.to_string(), op: "read back", error }),
    }
}

/// Writes `contents` to the new file `tmp`, created with the target's mode from the start
/// (`meta`: mode, owner, group of the file it replaces) and synced.
fn stage(tree: &mut Tree, tmp: &str, contents: &[u8], meta: Option<(u32, u32, u32)>) -> io::Result<()> {
    // Owner-only until the mode is set exactly (the umask may only have narrowed it).
    let mode = meta.map_or(0o666, |(mode, _, _)| mode & 0o777);
    let mut file = tree.create_new(tmp, mode)?;
    if let Some((mode, uid, gid)) = meta {
        let st = rustix::fs::fstat(&file)?;
        if st.st_uid != uid || st.st_gid != gid {
            rustix::fs::fchown(
                &file,
                Some(rustix::process::Uid::from_raw(uid)),
                Some(rustix::process::Gid::from_raw(gid)),
            )
            .map_err(|e| {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("its owner (uid {uid}, gid {gid}) cannot be kept: {e}; nothing was written"),
                )
            })?;
        }
        rustix::fs::fchmod(&file, rustix::fs::Mode::from_raw_mode(mode))?;
    }
    file.write_all(contents)?;
    tree.sync_file(&file, tmp)
}
