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
//!
//! A rollback that could not put everything back keeps every temporary file (they are the
//! evidence of what was moved in: "the temporary is gone" must keep meaning "it was moved
//! in") and its caller marks the record `rollback: incomplete`. Any later rollback of that
//! record is [`Care::Cautious`]: the person may have written any of its files since, so it
//! only moves the desk's own files (at its generated names) back with no-replace renames,
//! and never replaces, removes or moves away a file at a name the person sees; what it
//! cannot tell is its own is left as it is and reported.

use std::io;

use super::fsops::Tree;
use super::intent::{Intent, Op, Phase};
use super::EntryKind;

/// How much a rollback may trust the disk to be as the apply left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Care {
    /// The apply's own process, or the first recovery of a killed one: names unique to the
    /// apply say exactly what it did.
    Normal,
    /// A record marked `rollback: incomplete`: the files it names may have been written by
    /// the person since (see the module docs).
    Cautious,
}

/// What a rollback could not do.
#[derive(Debug, Default)]
pub(super) struct Undone {
    /// What could not be put back, and where it is. When not empty, every temporary file
    /// is kept and the record must stay (marked incomplete).
    pub failed: Vec<String>,
    /// Files left as they are because a cautious rollback cannot tell they are its own.
    pub left: Vec<String>,
}

/// Undoes everything an apply that reached `phase` may have done (see the module docs).
pub(super) fn roll_back(tree: &mut Tree, intent: &Intent, phase: Phase, care: Care) -> Undone {
    let mut undone = Undone::default();
    let root = tree.root_path().to_path_buf();
    let shown = |rel: &str| root.join(rel).display().to_string();
    let cautious = care == Care::Cautious;

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
                    let result = if !cautious && moved_in && holds(tree, path, EntryKind::File, after) {
                        tree.rename_replace(backup, path)
                    } else {
                        tree.rename_noreplace(backup, path)
                    };
                    if let Err(e) = result {
                        undone.failed.push(format!(
                            "{} (its previous contents are in {}: {e})",
                            shown(path),
                            shown(backup)
                        ));
                    }
                }
                Op::Create { path, tmp, after } => {
                    if exists(tree, tmp) || !holds(tree, path, EntryKind::File, after) {
                        continue; // never moved in, or not the new file
                    }
                    if cautious {
                        undone
                            .left
                            .push(format!("{} (left as it is: it may be yours; delete it if it is not)", shown(path)));
                    } else if let Err(e) = tree.unlink(path) {
                        undone.failed.push(format!("{} (remove the new file: {e})", shown(path)));
                    }
                }
                Op::Delete { path, backup, .. } => {
                    if exists(tree, backup) {
                        if let Err(e) = tree.rename_noreplace(backup, path) {
                            undone.failed.push(format!("{} (its contents are in {}: {e})", shown(path), shown(backup)));
                        }
                    }
                }
                Op::Move { from, to, parked, kind, before } => {
                    if exists(tree, parked) || !holds(tree, to, *kind, before) {
                        continue;
                    }
                    if cautious {
                        undone.left.push(format!(
                            "{} (left as it is: it may be yours; it was to be renamed back to {})",
                            shown(to),
                            shown(from)
                        ));
                    } else if let Err(e) = tree.rename_noreplace(to, parked) {
                        undone.failed.push(format!("{} (it is now at {}: {e})", shown(parked), shown(to)));
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
                        undone.failed.push(format!("{} (it is now at {}: {e})", shown(from), shown(parked)));
                    }
                }
            }
        }
    }
    // Staging: every temporary file, then the folders made for new files (when empty) —
    // unless something could not be put back: then the temporaries are the evidence.
    if undone.failed.is_empty() {
        for op in &intent.ops {
            if let Op::Edit { tmp, .. } | Op::Create { tmp, .. } = op {
                if let Err(e) = tree.unlink(tmp) {
                    undone.failed.push(format!("{} (remove this temporary file: {e})", shown(tmp)));
                }
            }
        }
        for dir in intent.dirs.iter().rev() {
            if let Err(e) = tree.rmdir_if_empty(dir) {
                undone.left.push(format!("{} (remove this empty folder: {e})", shown(dir)));
            }
        }
    }
    if let Err((dir, e)) = tree.sync_changed() {
        undone.failed.push(format!("{} (sync after the rollback: {e})", shown(&dir)));
    }
    undone
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
