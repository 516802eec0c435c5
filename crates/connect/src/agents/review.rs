//! What every agent's hook shares once it knows what the agent's tool would write: which folder
//! the desk reviews, whether a file is inside it, holding the edit in the desk, and — for agents
//! that cannot be told to write another version — writing the person's version itself.
//!
//! An agent module turns its hook's input into [`Target`]s (the exact bytes its tool would
//! write), calls [`review`], and words the [`Reviewed`] in the agent's own answer format.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{HookOptions, Outside};
use crate::gate::{self, Gate, GateFile, Policy, Reach, Verdict};

/// One file an agent's tool call would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Absolute, as the agent names it.
    pub path: PathBuf,
    /// Its bytes now (`None`: it does not exist).
    pub before: Option<Vec<u8>>,
    /// What it would hold (`None`: the tool deletes it).
    pub after: Option<String>,
}

impl Target {
    /// `path` with its bytes read now.
    pub fn read(path: PathBuf, after: Option<String>) -> Result<Target, String> {
        let before = read_now(&path)?;
        Ok(Target { path, before, after })
    }
}

/// The file's bytes now (`None`: it does not exist).
pub fn read_now(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// The file's text (`""` when it does not exist; `Err` for bytes that are not UTF-8).
pub fn text_of(path: &Path, bytes: &Option<Vec<u8>>) -> Result<String, String> {
    match bytes {
        None => Ok(String::new()),
        Some(b) => String::from_utf8(b.clone())
            .map_err(|_| format!("{} is not UTF-8 text; Resolve Desk reviews text files only", path.display())),
    }
}

/// A file of an approved edit, as the person chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub path: PathBuf,
    /// What it may hold afterwards (`None`: deleted).
    pub after: Option<String>,
    /// The person changed it (took part of it, or edited it) before applying.
    pub changed: bool,
}

/// How the desk answered one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reviewed {
    /// Applied. `text` is the decision as the desk words it; `files` what each file may hold.
    Applied { text: String, files: Vec<Chosen> },
    /// Not let through; the text says why and what to do (every failure ends here).
    Denied(String),
    /// Outside the folder with `--outside allow`: the agent's own rules decide.
    Pass,
}

impl Reviewed {
    /// Whether the person changed any file of an applied edit.
    pub fn changed(&self) -> bool {
        matches!(self, Reviewed::Applied { files, .. } if files.iter().any(|f| f.changed))
    }
}

/// The folder the desk reviews: `--workspace`, else the first of `fallbacks` given, made real.
pub fn root_of(opts: &HookOptions, fallbacks: &[Option<PathBuf>]) -> Result<PathBuf, String> {
    let Some(root) = opts.workspace.clone().or_else(|| fallbacks.iter().flatten().next().cloned()) else {
        return Err("Resolve Desk's hook could not tell the project folder; the edit was not made.".into());
    };
    std::fs::canonicalize(&root).map_err(|e| {
        format!("Resolve Desk cannot open the project folder {}: {e}; the edit was not made.", root.display())
    })
}

/// `p` made absolute against `cwd`.
pub fn absolute(p: &str, cwd: &Path) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// `path` relative to `root` when it is inside (its folder resolved through links), else `None`.
pub fn inside(root: &Path, path: &Path) -> Option<String> {
    let mut existing = path.to_path_buf();
    let mut tail = Vec::new();
    while !existing.exists() {
        tail.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?.to_path_buf();
    }
    let real = if path.exists() {
        // The link itself is judged by the tool (a link that leaves the folder is refused there).
        let parent = std::fs::canonicalize(path.parent()?).ok()?;
        parent.join(path.file_name()?)
    } else {
        let mut p = std::fs::canonicalize(&existing).ok()?;
        for t in tail.iter().rev() {
            p.push(t);
        }
        p
    };
    let rel = real.strip_prefix(root).ok()?;
    if rel.as_os_str().is_empty() {
        return None;
    }
    Some(rel.to_string_lossy().into_owned())
}

/// Why an edit of `path`, outside `root`, was not made.
pub fn outside(agent_id: &str, root: &Path, path: &Path) -> String {
    format!(
        "{} is outside {}, the folder Resolve Desk reviews, so the edit was not made. Edit files inside the \
         project; to let edits outside it through unreviewed, run `rdesk setup {agent_id} --outside allow`.",
        path.display(),
        root.display()
    )
}

/// Who is asking: `id` as on the command line (`codex`), `name` as the desk shows it.
#[derive(Debug, Clone, Copy)]
pub struct Asker<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub tool: &'a str,
}

/// Holds the tool call's `targets` in the desk under `root` and waits for the decision.
pub async fn review(who: Asker<'_>, root: &Path, targets: &[Target], opts: &HookOptions) -> Reviewed {
    let mut rels = Vec::new();
    for t in targets {
        match inside(root, &t.path) {
            Some(rel) => rels.push(rel),
            None if opts.outside == Outside::Allow && targets.iter().all(|t| inside(root, &t.path).is_none()) => {
                return Reviewed::Pass
            }
            None => return Reviewed::Denied(outside(who.id, root, &t.path)),
        }
    }
    let files = targets
        .iter()
        .zip(&rels)
        .map(|(t, rel)| GateFile {
            path: rel.clone(),
            before: t.before.as_ref().map(|b| blake3::hash(b).to_hex().to_string()),
            after: t.after.clone(),
        })
        .collect();
    let gate = Gate { agent: who.name.into(), tool: who.tool.into(), files };
    let reach = Reach { root: root.to_path_buf(), policy: opts.policy, wait: opts.wait, client: who.name.into() };
    let verdict = match gate::open_link(&reach).await {
        Ok((mut link, journal)) => {
            let v = gate::hold(&mut link, &gate).await;
            drop(link);
            if let Some(j) = journal {
                j.flush();
            }
            v
        }
        Err(e) => Err(e),
    };
    match verdict {
        Err(e) => Reviewed::Denied(format!(
            "Resolve Desk could not review this edit, so it was not made: {e}. {}",
            match opts.policy {
                Policy::Human =>
                    "Open the project in Resolve Desk (`resolve-desk DIR`) and try the edit again.".to_string(),
                Policy::Agent => format!(
                    "Try the edit again; if it keeps failing, run `rdesk setup {} --remove` to unwire the desk.",
                    who.id
                ),
            }
        )),
        Ok(Verdict::Refused { text }) => Reviewed::Denied(text),
        Ok(Verdict::Undecided { action_id, .. }) => Reviewed::Denied(format!(
            "The person has not decided yet on {action_id} ({} {}) in Resolve Desk; nothing was written. It stays \
             pending there. Make the same edit again to wait for the decision (it joins the pending action instead \
             of queuing a second one).",
            who.tool,
            rels.join(", ")
        )),
        Ok(Verdict::Approved { text, files }) => {
            let chosen = targets
                .iter()
                .zip(&rels)
                .map(|(t, rel)| {
                    let mine = files.iter().find(|f| f.path == *rel);
                    match mine.and_then(|f| f.after.clone()) {
                        Some(after) => Chosen { path: t.path.clone(), after: Some(after), changed: true },
                        None => Chosen { path: t.path.clone(), after: t.after.clone(), changed: false },
                    }
                })
                .collect();
            Reviewed::Applied { text, files: chosen }
        }
    }
}

/// Writes the person's version of an approved edit, for agents whose hook cannot hand their
/// tool other arguments: each file must still hold what the hook read; each is written
/// atomically (temporary file beside it, fsync, rename), keeping its permissions.
pub fn write_chosen(targets: &[Target], files: &[Chosen]) -> Result<Vec<PathBuf>, String> {
    for t in targets {
        if read_now(&t.path)? != t.before {
            return Err(format!(
                "{} changed while the person reviewed the edit; nothing was written. Read it again.",
                t.path.display()
            ));
        }
    }
    let mut written = Vec::new();
    for f in files {
        match &f.after {
            None => match std::fs::remove_file(&f.path) {
                Ok(()) => written.push(f.path.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot delete {}: {e}", f.path.display())),
            },
            Some(text) => {
                write_file(&f.path, text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", f.path.display()))?;
                written.push(f.path.clone());
            }
        }
    }
    Ok(written)
}

/// For an agent whose call cannot be made to write the person's version: the desk writes it
/// ([`write_chosen`]) and the call is refused with this reason, which says what was written (or
/// why nothing was).
pub fn desk_wrote_it(targets: &[Target], files: &[Chosen]) -> String {
    match write_chosen(targets, files) {
        Ok(written) => format!(
            "The person changed your edit in Resolve Desk and applied their version: Resolve Desk wrote {} (your \
             call was not run, so nothing else was written). Read the file before you edit it again.",
            written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
        Err(e) => format!("The person applied this edit in Resolve Desk, but {e}"),
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mode = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    if let Some(p) = mode {
        tmp.as_file().set_permissions(p)?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
