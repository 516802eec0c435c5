//! Checking an intent record read from disk before recovery acts on any of it.
//!
//! The record (`.rdesk-apply.log`) is input someone else may have written: a file committed
//! to a cloned repository, or one edited since the desk wrote it. Recovery renames, replaces
//! and removes the files it names, so a record is acted on only when it is, byte for byte,
//! one the desk could have written here:
//! - the file: a regular file (not a link), owned by this effective user, mode exactly 0600
//!   (`intent::Record::create` sets it with `fchmod`; git checks files out 0644 or 0755),
//!   at most [`MAX_RECORD_BYTES`];
//! - its content: a known `version`, then only phase and rollback marks;
//! - every name in it: workspace-relative with `/`, no `..`, `.`, empty or NUL component,
//!   not absolute ([`check_rel`]); every temporary, backup and parking name exactly the one
//!   `commit::beside` makes (beside its target, `.rdesk-<token>-<i>.<tmp|bak|mv>`, one token
//!   for the whole record, `i` the op's index); the folders (`dirs`) only ancestors of the
//!   record's own new files; no target named twice; hashes 64 hex digits.
//!
//! Anything else is a [`Refusal`]: nothing is touched, the folder still opens, and the
//! person is told which record, why, and what to do.

use std::collections::HashSet;
use std::path::PathBuf;

use serde::Serialize;

use super::fsops::split;
use super::intent::{Intent, Op, RECORD_NAME, VERSION};

/// The largest record recovery reads (and an apply writes): 64 MiB, room for about 100,000
/// files with long paths. A larger apply is refused before anything is written.
pub const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// The longest workspace-relative name a record may hold (Linux's `PATH_MAX`).
const MAX_NAME_BYTES: usize = 4096;

/// An intent record that recovery would not act on, and why. Nothing was touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The record's absolute path.
    pub record: PathBuf,
    pub reason: RefusalReason,
}

/// Why a record was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RefusalReason {
    #[error("it is a symbolic link, not the file Resolve Desk writes")]
    Symlink,
    #[error("it is not a regular file")]
    NotAFile,
    #[error("it belongs to another user (uid {owner}; this program runs as uid {euid})")]
    Owner { owner: u32, euid: u32 },
    #[error(
        "its mode is {mode:04o}, not 0600 (Resolve Desk writes its record readable by its owner only; a file checked out by git is 0644)"
    )]
    Mode { mode: u32 },
    #[error("it is {size} bytes, more than the {limit} bytes a record may have")]
    TooLarge { size: u64, limit: u64 },
    #[error("it could not be read: {error}")]
    Unreadable { error: String },
    #[error("it is not an apply record ({what})")]
    NotARecord { what: String },
    #[error("it is in record format {found}; this Resolve Desk reads format {known} only")]
    UnknownVersion { found: u32, known: u32 },
    #[error("the folder {folder:?} it names cannot be used: {why}")]
    Folder { folder: String, why: String },
    #[error("{field} {name:?} {why}")]
    BadName {
        /// Which name: `ops[3].backup`, `dirs[0]`.
        field: String,
        name: String,
        why: String,
    },
}

impl Refusal {
    /// What the person should do about it.
    pub fn what_to_do(&self) -> String {
        format!(
            "Resolve Desk did not write this record, or it was changed since: nothing was done. If no apply of yours was interrupted here, delete {}; otherwise check the files it names by hand, then delete it.",
            self.record.display()
        )
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} was refused: {}", self.record.display(), self.reason)
    }
}

/// Why `name` is not a workspace-relative path recovery may touch, if it is not.
pub(super) fn check_rel(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("is empty");
    }
    if name.len() > MAX_NAME_BYTES {
        return Err("is longer than 4096 bytes");
    }
    if name.starts_with('/') {
        return Err("is absolute: every name in a record is relative to the workspace");
    }
    if name.contains('\0') {
        return Err("contains a NUL byte");
    }
    for part in name.split('/') {
        match part {
            "" => return Err("has an empty component (`//` or a trailing `/`)"),
            "." => return Err("has a `.` component"),
            ".." => return Err("has a `..` component: it would leave its folder"),
            _ => {}
        }
    }
    Ok(())
}

/// Every folder the record's names are in (and every folder it made), each once.
pub(super) fn folders(intent: &Intent) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for op in &intent.ops {
        match op {
            Op::Edit { path, tmp, backup, .. } => names.extend([path.as_str(), tmp, backup]),
            Op::Create { path, tmp, .. } => names.extend([path.as_str(), tmp]),
            Op::Delete { path, backup, .. } => names.extend([path.as_str(), backup]),
            Op::Move { from, to, parked, .. } => names.extend([from.as_str(), to, parked]),
        }
    }
    let mut out: Vec<&str> = Vec::new();
    let made = intent.dirs.iter().map(String::as_str);
    for dir in names.into_iter().map(|n| split(n).0).chain(made) {
        if !dir.is_empty() && !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// The metadata rules: regular file, this user's, 0600, bounded.
pub(super) fn check_file(st: &rustix::fs::Stat) -> Result<(), RefusalReason> {
    use rustix::fs::FileType;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Symlink => return Err(RefusalReason::Symlink),
        _ => return Err(RefusalReason::NotAFile),
    }
    let euid = rustix::process::geteuid().as_raw();
    if st.st_uid != euid {
        return Err(RefusalReason::Owner { owner: st.st_uid, euid });
    }
    let mode = st.st_mode & 0o7777;
    if mode != 0o600 {
        return Err(RefusalReason::Mode { mode });
    }
    let size = st.st_size.max(0) as u64;
    if size > MAX_RECORD_BYTES {
        return Err(RefusalReason::TooLarge { size, limit: MAX_RECORD_BYTES });
    }
    Ok(())
}

fn bad(field: String, name: &str, why: impl Into<String>) -> RefusalReason {
    let mut shown = name.to_string();
    if shown.len() > 200 {
        let mut cut = 200;
        while !shown.is_char_boundary(cut) {
            cut -= 1;
        }
        shown.truncate(cut);
        shown.push('…');
    }
    RefusalReason::BadName { field, name: shown, why: why.into() }
}

/// The token of a generated name (`[dir/].rdesk-<token>-<i>.<suffix>`), if it has that shape.
fn token_of(name: &str) -> Option<&str> {
    let (_, file) = split(name);
    let rest = file.strip_prefix(".rdesk-")?;
    let (token, _) = rest.split_once('-')?;
    let hex = !token.is_empty() && token.len() <= 32 && token.bytes().all(|b| b.is_ascii_hexdigit());
    hex.then_some(token)
}

fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Every name and hash of `intent` (see the module docs).
pub(super) fn check_intent(intent: &Intent) -> Result<(), RefusalReason> {
    if intent.version != VERSION {
        return Err(RefusalReason::UnknownVersion { found: intent.version, known: VERSION });
    }
    // Every name first, so a `..` is reported as such rather than as a wrong token.
    let mut names: Vec<(String, &str)> = Vec::new();
    for (i, op) in intent.ops.iter().enumerate() {
        let fields: Vec<(&str, &str)> = match op {
            Op::Edit { path, tmp, backup, .. } => vec![("path", path), ("tmp", tmp), ("backup", backup)],
            Op::Create { path, tmp, .. } => vec![("path", path), ("tmp", tmp)],
            Op::Delete { path, backup, .. } => vec![("path", path), ("backup", backup)],
            Op::Move { from, to, parked, .. } => vec![("from", from), ("to", to), ("parked", parked)],
        };
        names.extend(fields.into_iter().map(|(f, n)| (format!("ops[{i}].{f}"), n)));
    }
    names.extend(intent.dirs.iter().enumerate().map(|(i, d)| (format!("dirs[{i}]"), d.as_str())));
    for (field, name) in &names {
        check_rel(name).map_err(|why| bad(field.clone(), name, why))?;
    }

    // The generated names: one token, each exactly what `commit::beside` makes.
    let first = intent.ops.first().map(|op| match op {
        Op::Edit { tmp, .. } | Op::Create { tmp, .. } => tmp,
        Op::Delete { backup, .. } => backup,
        Op::Move { parked, .. } => parked,
    });
    let token = match first {
        None => "",
        Some(name) => token_of(name).ok_or_else(|| {
            bad("ops[0]".into(), name, "is not a name Resolve Desk makes (`.rdesk-<token>-<index>.<tmp|bak|mv>`)")
        })?,
    };
    let expect = |field: String, name: &str, target: &str, i: usize, suffix: &str| {
        let want = super::commit::beside(target, token, i, suffix);
        if name == want {
            Ok(())
        } else {
            Err(bad(field, name, format!("is not the name Resolve Desk makes for it (that is {want:?})")))
        }
    };
    let hash = |field: String, value: &str| {
        if is_hash(value) {
            Ok(())
        } else {
            Err(bad(field, value, "is not a content hash (64 hex digits)"))
        }
    };
    let mut targets: HashSet<&str> = HashSet::new();
    let mut sources: HashSet<&str> = HashSet::new();
    let mut new_files: Vec<&str> = Vec::new();
    let own = |field: String, path: &str| {
        let (_, file) = split(path);
        if path == RECORD_NAME || (!token.is_empty() && file.starts_with(&format!(".rdesk-{token}-"))) {
            Err(bad(field, path, "names the record or one of its own temporary files"))
        } else {
            Ok(())
        }
    };
    for (i, op) in intent.ops.iter().enumerate() {
        let f = |name: &str| format!("ops[{i}].{name}");
        let target = match op {
            Op::Edit { path, tmp, backup, before, after } => {
                expect(f("tmp"), tmp, path, i, "tmp")?;
                expect(f("backup"), backup, path, i, "bak")?;
                hash(f("before"), before)?;
                hash(f("after"), after)?;
                own(f("path"), path)?;
                path
            }
            Op::Create { path, tmp, after } => {
                expect(f("tmp"), tmp, path, i, "tmp")?;
                hash(f("after"), after)?;
                own(f("path"), path)?;
                new_files.push(path);
                path
            }
            Op::Delete { path, backup, before } => {
                expect(f("backup"), backup, path, i, "bak")?;
                hash(f("before"), before)?;
                own(f("path"), path)?;
                path
            }
            Op::Move { from, to, parked, before, .. } => {
                expect(f("parked"), parked, from, i, "mv")?;
                hash(f("before"), before)?;
                own(f("from"), from)?;
                own(f("to"), to)?;
                if !sources.insert(from) {
                    return Err(bad(f("from"), from, "is moved twice in one record"));
                }
                to
            }
        };
        if !targets.insert(target) {
            return Err(bad(f("path"), target, "is changed twice in one record"));
        }
    }
    for (i, dir) in intent.dirs.iter().enumerate() {
        let ancestor = new_files
            .iter()
            .any(|p| p.len() > dir.len() && p.starts_with(dir.as_str()) && p.as_bytes()[dir.len()] == b'/');
        if !ancestor {
            return Err(bad(format!("dirs[{i}]"), dir, "is not a folder of a file this record creates"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_the_workspace_are_refused_with_the_reason() {
        for (name, why) in [
            ("", "is empty"),
            ("/etc/passwd", "is absolute"),
            ("../other/secret.txt", "`..`"),
            ("a/../../b", "`..`"),
            ("a/./b", "`.`"),
            ("a//b", "empty component"),
            ("a/", "empty component"),
            ("a\0b", "NUL"),
        ] {
            let err = check_rel(name).expect_err(name);
            assert!(err.contains(why), "{name:?}: {err}");
        }
        for ok in ["a", "a/b.txt", ".rdesk-1-0.tmp", "dir/..hidden", "x/.../y"] {
            assert_eq!(check_rel(ok), Ok(()), "{ok:?} is a plain relative name");
        }
    }

    #[test]
    fn a_token_is_read_only_from_a_generated_name() {
        assert_eq!(token_of("src/.rdesk-1a2b3-0.tmp"), Some("1a2b3"));
        assert_eq!(token_of(".rdesk-ff-12.bak"), Some("ff"));
        assert_eq!(token_of("src/secret.txt"), None);
        assert_eq!(token_of(".rdesk-zz-0.tmp"), None, "not hex");
        assert_eq!(token_of(".rdesk--0.tmp"), None, "empty");
    }
}
