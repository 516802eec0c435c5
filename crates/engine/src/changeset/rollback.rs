//! The undo journal of a commit: every step recorded as it is done, undone newest first on
//! any failure; on success the backups are removed and the folders synced.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::plan::Step;
use super::ApplyReport;

/// What was done, so it can be undone.
pub(super) enum Undo {
    /// A temporary file to remove (never renamed into place).
    Staged(PathBuf),
    /// A directory created for a new file.
    CreatedDir(PathBuf),
    /// `path` now has new contents; the original is at `backup`.
    Replaced { path: PathBuf, backup: PathBuf },
    /// `path` did not exist before.
    Created(PathBuf),
    /// `path` was moved to `backup`.
    Deleted { path: PathBuf, backup: PathBuf },
    /// An entry was moved from `from` to `to`.
    Moved { from: PathBuf, to: PathBuf },
}

#[derive(Default)]
pub(super) struct Journal {
    pub(super) undo: Vec<Undo>,
}

impl Journal {
    pub(super) fn forget_staged(&mut self, tmp: &Path) {
        self.undo.retain(|u| !matches!(u, Undo::Staged(p) if p == tmp));
    }

    /// Undoes every step, newest first. Returns what could not be restored.
    pub(super) fn rollback(&mut self) -> Vec<String> {
        let mut failures = Vec::new();
        while let Some(step) = self.undo.pop() {
            let result = match &step {
                Undo::Staged(p) | Undo::Created(p) => fs::remove_file(p),
                Undo::CreatedDir(p) => fs::remove_dir(p),
                Undo::Replaced { path, backup } | Undo::Deleted { path, backup } => fs::rename(backup, path),
                Undo::Moved { from, to } => fs::rename(to, from),
            };
            if let Err(e) = result {
                let what = match &step {
                    Undo::Staged(p) | Undo::Created(p) | Undo::CreatedDir(p) => {
                        format!("{} (remove: {e})", p.display())
                    }
                    Undo::Replaced { path, backup } | Undo::Deleted { path, backup } => {
                        format!("{} (its previous contents are in {}: {e})", path.display(), backup.display())
                    }
                    Undo::Moved { from, to } => {
                        format!("{} (it is now at {}: {e})", from.display(), to.display())
                    }
                };
                failures.push(what);
            }
        }
        failures
    }

    /// Removes backups and syncs the touched folders.
    pub(super) fn finalise(self, plan: &[Step]) -> ApplyReport {
        let mut report = ApplyReport::default();
        let mut dirs: HashSet<PathBuf> = HashSet::new();
        for u in &self.undo {
            match u {
                Undo::Replaced { path, backup } | Undo::Deleted { path, backup } => {
                    if let Err(e) = fs::remove_file(backup) {
                        report.warnings.push(format!("could not remove backup {}: {e}", backup.display()));
                    }
                    if let Some(d) = path.parent() {
                        dirs.insert(d.to_path_buf());
                    }
                }
                Undo::Created(p) | Undo::Moved { to: p, .. } => {
                    if let Some(d) = p.parent() {
                        dirs.insert(d.to_path_buf());
                    }
                }
                Undo::Staged(_) | Undo::CreatedDir(_) => {}
            }
        }
        for d in dirs {
            if let Ok(f) = fs::File::open(&d) {
                let _ = f.sync_all();
            }
        }
        for step in plan {
            match step {
                Step::Replace { meta: Some(_), .. } => report.edited += 1,
                Step::Replace { meta: None, .. } => report.created += 1,
                Step::Delete { .. } => report.deleted += 1,
                Step::Move { from, to } if from != to => report.renamed += 1,
                Step::Move { .. } => {}
            }
        }
        report
    }
}
