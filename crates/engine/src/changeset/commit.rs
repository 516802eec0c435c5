//! The commit: new contents staged beside their targets, then renames into place (sources
//! parked under temporary names first, so swaps and cycles work), each step journalled so
//! [`super::rollback`] can undo it.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::plan::Step;
use super::rollback::{Journal, Undo};

pub(super) type StepError = (PathBuf, &'static str, io::Error);

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A short, unique name beside `target` (short so that a 255-byte file name still fits).
fn temp_beside(target: &Path, suffix: &str) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = target.parent().unwrap_or(Path::new("."));
    dir.join(format!(".rdesk-{}-{n}.{suffix}", std::process::id()))
}

fn fault(path: &Path) -> io::Result<()> {
    #[cfg(feature = "fault-injection")]
    {
        crate::fault::check(path)
    }
    #[cfg(not(feature = "fault-injection"))]
    {
        let _ = path;
        Ok(())
    }
}

pub(super) fn commit(plan: &[Step], journal: &mut Journal) -> Result<(), StepError> {
    // Stage: every new content as a temporary beside its target.
    let mut staged: HashMap<usize, PathBuf> = HashMap::new();
    for (i, step) in plan.iter().enumerate() {
        if let Step::Replace { abs, contents, meta } = step {
            if let Some(parent) = abs.parent() {
                create_dirs(parent, journal).map_err(|e| (parent.to_path_buf(), "create the folder of", e))?;
            }
            let tmp = temp_beside(abs, "tmp");
            write_temp(&tmp, contents, meta.as_ref(), journal)
                .map_err(|e| (abs.clone(), "stage new contents for", e))?;
            staged.insert(i, tmp);
        }
    }
    // Renames, phase one: every source out of the way, under a temporary name.
    let mut parked: HashMap<usize, PathBuf> = HashMap::new();
    for (i, step) in plan.iter().enumerate() {
        if let Step::Move { from, to } = step {
            if from == to {
                continue;
            }
            let tmp = temp_beside(from, "mv");
            fault(from).and_then(|_| fs::rename(from, &tmp)).map_err(|e| (from.clone(), "rename", e))?;
            journal.undo.push(Undo::Moved { from: from.clone(), to: tmp.clone() });
            parked.insert(i, tmp);
        }
    }
    for (i, step) in plan.iter().enumerate() {
        match step {
            Step::Replace { abs, meta, .. } => {
                let tmp = &staged[&i];
                fault(abs).map_err(|e| (abs.clone(), "write", e))?;
                if meta.is_some() {
                    let backup = temp_beside(abs, "bak");
                    fs::hard_link(abs, &backup).map_err(|e| (abs.clone(), "back up", e))?;
                    if let Err(e) = fs::rename(tmp, abs) {
                        let _ = fs::remove_file(&backup);
                        return Err((abs.clone(), "write", e));
                    }
                    journal.forget_staged(tmp);
                    journal.undo.push(Undo::Replaced { path: abs.clone(), backup });
                } else {
                    if fs::symlink_metadata(abs).is_ok() {
                        return Err((
                            abs.clone(),
                            "create",
                            io::Error::new(io::ErrorKind::AlreadyExists, "it appeared during apply"),
                        ));
                    }
                    fs::rename(tmp, abs).map_err(|e| (abs.clone(), "create", e))?;
                    journal.forget_staged(tmp);
                    journal.undo.push(Undo::Created(abs.clone()));
                }
            }
            Step::Delete { abs } => {
                let backup = temp_beside(abs, "bak");
                fault(abs).and_then(|_| fs::rename(abs, &backup)).map_err(|e| (abs.clone(), "delete", e))?;
                journal.undo.push(Undo::Deleted { path: abs.clone(), backup });
            }
            Step::Move { to, .. } => {
                let Some(tmp) = parked.get(&i) else { continue };
                if fs::symlink_metadata(to).is_ok() {
                    return Err((
                        to.clone(),
                        "rename onto",
                        io::Error::new(io::ErrorKind::AlreadyExists, "the target appeared during apply"),
                    ));
                }
                fault(to).and_then(|_| fs::rename(tmp, to)).map_err(|e| (to.clone(), "rename", e))?;
                journal.undo.push(Undo::Moved { from: tmp.clone(), to: to.clone() });
            }
        }
    }
    Ok(())
}

fn create_dirs(dir: &Path, journal: &mut Journal) -> io::Result<()> {
    if dir.exists() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_dirs(parent, journal)?;
    }
    fs::create_dir(dir)?;
    journal.undo.push(Undo::CreatedDir(dir.to_path_buf()));
    Ok(())
}

fn write_temp(tmp: &Path, contents: &[u8], meta: Option<&fs::Metadata>, journal: &mut Journal) -> io::Result<()> {
    fault(tmp)?;
    let mut f = fs::OpenOptions::new().write(true).create_new(true).open(tmp)?;
    journal.undo.push(Undo::Staged(tmp.to_path_buf()));
    f.write_all(contents)?;
    if let Some(meta) = meta {
        f.set_permissions(meta.permissions())?;
        if meta.uid() != f.metadata()?.uid() || meta.gid() != f.metadata()?.gid() {
            // Keep the owner when we may (root); otherwise the mode is what matters.
            let _ = std::os::unix::fs::fchown(&f, Some(meta.uid()), Some(meta.gid()));
        }
    }
    f.sync_all()
}
