//! Undoing a commit, or finishing its clean-up, from what is on disk.
//!
//! Nothing here trusts memory: the intent record lists every name an apply uses, and the
//! phase it reached says how to read the disk. Names are unique to the apply, so "the
//! backup exists" means "the file was moved aside", "the temporary is gone" means "the new
//! file was moved in", and so on. The same functions undo a failed commit in the running
//! process and finish an apply a killed process left behind (`super::recovery`).
//!
//! Rolling back never replaces a file that someone else changed meanwhile: where putting a
//! file back would overwrite content that is neither the previewed nor the new one, the old
//! content is left at its backup name and the problem reported.

use std::io;

use super::fsops::Tree;
use super::intent::{Intent, Op, Phase};
use super::EntryKind;

/// Undoes everything an apply that reached `phase` may have done. Returns what could not be
/// put back, and where it is (empty when every file is as it was).
pub(super) fn roll_back(tree: &mut Tree, intent: &Intent, phase: Phase) -> Vec<String> {
    let mut problems = Vec::new();
    let mut note = |what: String| problems.push(what);
    let root = tree.root_path().to_path_buf();
    let shown = |rel: &str| root.join(rel).display().to_string();

    // The commit phase, newest first (it may have started once everything was parked).
    if phase >= Phase::Parked {
        for (i, op) in intent.ops.iter().rev().enumerate() {
            // A test may stop here too: a rollback cut short is finished by the next one.
            let _ = super::commit::point(tree, "rollback", i);
            match op {
                Op::Edit { path, tmp, backup, after, .. } => {
                    if !exists(tree, backup) {
                        continue; // never moved aside
                    }
                    let moved_in = !exists(tree, tmp);
                    let result = if moved_in && holds(tree, path, EntryKind::File, after) {
                        tree.rename_replace(backup, path)
                    } else {
                        tree.rename_noreplace(backup, path)
                    };
                    if let Err(e) = result {
                        note(format!("{} (its previous contents are in {}: {e})", shown(path), shown(backup)));
                    }
                }
                Op::Create { path, tmp, after } => {
                    if !exists(tree, tmp) && holds(tree, path, EntryKind::File, after) {
                        if let Err(e) = tree.unlink(path) {
                            note(format!("{} (remove the new file: {e})", shown(path)));
                        }
                    }
                }
                Op::Delete { path, backup, .. } => {
                    if exists(tree, backup) {
                        if let Err(e) = tree.rename_noreplace(backup, path) {
                            note(format!("{} (its contents are in {}: {e})", shown(path), shown(backup)));
                        }
                    }
                }
                Op::Move { to, parked, kind, before, .. } => {
                    if !exists(tree, parked) && holds(tree, to, *kind, before) {
                        if let Err(e) = tree.rename_noreplace(to, parked) {
                            note(format!("{} (it is now at {}: {e})", shown(parked), shown(to)));
                        }
                    }
                }
            }
        }
    }
    // Parking, newest first.
    if phase >= Phase::Staged {
        for op in intent.ops.iter().rev() {
            if let Op::Move { from, parked, .. } = op {
                if exists(tree, parked) {
                    if let Err(e) = tree.rename_noreplace(parked, from) {
                        note(format!("{} (it is now at {}: {e})", shown(from), shown(parked)));
                    }
                }
            }
        }
    }
    // Staging: every temporary file, then the folders made for new files (when empty).
    for op in &intent.ops {
        if let Op::Edit { tmp, .. } | Op::Create { tmp, .. } = op {
            if let Err(e) = tree.unlink(tmp) {
                note(format!("{} (remove this temporary file: {e})", shown(tmp)));
            }
        }
    }
    for dir in intent.dirs.iter().rev() {
        if let Err(e) = tree.rmdir_if_empty(dir) {
            note(format!("{} (remove this empty folder: {e})", shown(dir)));
        }
    }
    if let Err((dir, e)) = tree.sync_changed() {
        note(format!("{} (sync after the rollback: {e})", shown(&dir)));
    }
    problems
}

/// Finishes a committed apply: removes the backups (and any temporary file left), syncs the
/// folders. Returns warnings (what could not be removed); the files are in place either way.
pub(super) fn clean_up(tree: &mut Tree, intent: &Intent, hook: &dyn Fn(&Tree, usize) -> io::Result<()>) -> Vec<String> {
    let mut warnings = Vec::new();
    let root = tree.root_path().to_path_buf();
    for (i, op) in intent.ops.iter().enumerate() {
        let leftover = match op {
            Op::Edit { backup, .. } | Op::Delete { backup, .. } => backup,
            Op::Create { tmp, .. } => tmp,
            Op::Move { parked, .. } => parked,
        };
        if let Err(e) = hook(tree, i).and_then(|()| tree.unlink(leftover).map(|_| ())) {
            warnings.push(format!("could not remove {}: {e}", root.join(leftover).display()));
        }
    }
    if let Err((dir, e)) = tree.sync_changed() {
        warnings.push(format!("could not sync {}: {e}", root.join(dir).display()));
    }
    warnings
}

fn exists(tree: &mut Tree, rel: &str) -> bool {
    // An error (a folder that cannot be opened) counts as present: nothing is replaced on a guess.
    tree.exists(rel).unwrap_or(true)
}

fn holds(tree: &mut Tree, rel: &str, kind: EntryKind, hash: &str) -> bool {
    tree.hash(rel, kind).is_ok_and(|h| h.to_string() == hash)
}
