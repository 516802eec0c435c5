//! Workspace trust: a folder's own tools (`.resolve/tools`) are code whoever wrote the
//! repository chose. They are listed (name, command, arguments) but never started until the
//! person trusts that folder; a tool changed since then asks again.
//!
//! Trust is kept in the user's config folder (`<config>/resolve-desk/trusted-folders.json`,
//! 0600), one entry per folder: its canonical path and the [`Fingerprint`] of its tools — a
//! hash of every file under `.resolve/tools` (and of the files a tool's command names
//! elsewhere in the folder). The check runs before every start of a tool's process
//! ([`gate`]), so a tool edited after it was trusted is refused even before the reload that
//! notices the edit.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use resolve_external::{Gate, Manifest, ToolSource, WORKSPACE_TOOLS_DIR};
use serde::{Deserialize, Serialize};

/// The trust file's name in `<config>/resolve-desk/`.
pub const TRUST_FILE: &str = "trusted-folders.json";

/// At most this many entries (files, folders, links) are read to fingerprint a tools folder.
pub const MAX_ENTRIES: usize = 20_000;
/// At most this many bytes are hashed to fingerprint a tools folder.
pub const MAX_BYTES: u64 = 512 * 1024 * 1024;

/// Why trust could not be read, written or given.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("cannot read the trust file {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("the trust file {path} is not valid ({message}); fix it or delete it (every folder is then untrusted)")]
    Parse { path: PathBuf, message: String },
    #[error("the trust file {path} is not safe: {problem}; it is ignored until you fix it (a file owned by you that others cannot write)")]
    Unsafe { path: PathBuf, problem: String },
    #[error(transparent)]
    File(#[from] resolve_userfile::UserFileError),
    #[error("{0} is not a folder; pass an existing folder")]
    NotAFolder(PathBuf),
    #[error("{0}")]
    Fingerprint(String),
    #[error(
        "the tools of {folder} changed since they were shown to you, so they were not trusted; look at them again and trust what you see"
    )]
    ChangedSinceShown { folder: PathBuf },
    #[error(
        "{0} has no tools of its own (no {WORKSPACE_TOOLS_DIR} folder with a tool.json), so there is nothing to trust"
    )]
    NoTools(PathBuf),
}

/// A hash of a folder's tools: every file under `.resolve/tools` (path, kind, executable bit,
/// contents; a link's target and what it points to) and every file a tool's command or
/// arguments name elsewhere in the folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fingerprint(pub String);

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// How one of a folder's tools would be started (shown to the person before they trust it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolLaunch {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// The tool's manifest file.
    pub manifest: PathBuf,
}

impl ToolLaunch {
    pub fn of(m: &Manifest) -> ToolLaunch {
        ToolLaunch { name: m.name.clone(), command: m.command.clone(), args: m.args.clone(), manifest: m.file.clone() }
    }

    /// `command arg…`, each word quoted when it needs to be.
    pub fn command_line(&self) -> String {
        std::iter::once(&self.command).chain(&self.args).map(|w| shell_word(w)).collect::<Vec<_>>().join(" ")
    }
}

fn shell_word(w: &str) -> String {
    let plain = !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Whether a folder's own tools may run now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// The folder has no tools of its own.
    NoTools,
    /// The person trusted these tools as they are now.
    Trusted { fingerprint: Fingerprint },
    /// Not trusted (never, or the tools changed since): listed, never started.
    Untrusted(FolderTools),
}

/// A folder's own tools as they are now, for the person to look at before trusting them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderTools {
    /// The folder (canonical).
    pub folder: PathBuf,
    pub tools: Vec<ToolLaunch>,
    /// What trusting now would record; `Err` when the folder's tools cannot be fingerprinted
    /// (too large, unreadable), so they cannot be trusted.
    pub fingerprint: Result<Fingerprint, String>,
    /// True when the folder was trusted before with other tools (they changed since).
    pub changed_since_trusted: bool,
}

/// One trusted folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustEntry {
    pub folder: PathBuf,
    pub tools: Fingerprint,
    pub trusted_at: DateTime<Utc>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    folders: Vec<TrustEntry>,
}

/// The user's trusted folders (`<config>/resolve-desk/trusted-folders.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store in `config_dir` (the user's config folder, e.g. `~/.config`).
    pub fn in_config_dir(config_dir: &Path) -> TrustStore {
        TrustStore { path: config_dir.join("resolve-desk").join(TRUST_FILE) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every trusted folder, oldest first, as the file on disk holds them (read without the
    /// lock: writers replace it whole, so this is one writer's list or the next one's). A
    /// missing file is an empty list; a file another user could have written is an error
    /// (and trusts nothing), and so is one that is not valid JSON (with its line).
    pub fn list(&self) -> Result<Vec<TrustEntry>, TrustError> {
        if !self.check_safe()? {
            return Ok(Vec::new());
        }
        let bytes = resolve_userfile::read_bytes(&self.path)?;
        self.parse(bytes.as_deref())
    }

    /// Whether the trust file exists; an error when it is not one only this user can write.
    fn check_safe(&self) -> Result<bool, TrustError> {
        let meta = match fs::symlink_metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(source) => return Err(TrustError::Read { path: self.path.clone(), source }),
        };
        let unsafe_file = |problem: String| TrustError::Unsafe { path: self.path.clone(), problem };
        if !meta.file_type().is_file() {
            return Err(unsafe_file("it is not a regular file".into()));
        }
        if meta.uid() != euid() {
            return Err(unsafe_file(format!("it belongs to user id {}, not to you ({})", meta.uid(), euid())));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(unsafe_file(format!("its mode {:o} lets others write it", meta.mode() & 0o777)));
        }
        Ok(true)
    }

    /// The entries in the trust file's `bytes` (`None` or blank: none).
    fn parse(&self, bytes: Option<&[u8]>) -> Result<Vec<TrustEntry>, TrustError> {
        let Some(value) = bytes.map(|b| resolve_userfile::parse(&self.path, b)).transpose()?.flatten() else {
            return Ok(Vec::new());
        };
        let file: TrustFile = serde_json::from_value(value)
            .map_err(|e| TrustError::Parse { path: self.path.clone(), message: e.to_string() })?;
        if file.version != 1 {
            return Err(TrustError::Parse {
                path: self.path.clone(),
                message: format!("version {} is not one this Resolve Desk knows (1)", file.version),
            });
        }
        Ok(file.folders)
    }

    /// The entry of `folder` (canonical), if it is trusted.
    pub fn entry(&self, folder: &Path) -> Result<Option<TrustEntry>, TrustError> {
        Ok(self.list()?.into_iter().find(|e| e.folder == folder))
    }

    /// Changes the list under the trust file's lock (re-read under it, written atomically,
    /// 0600): `change` returns what to keep and whether anything changed. A bad file (unsafe,
    /// not valid JSON) is an error and stays as it is.
    fn change<T>(&self, change: impl FnOnce(&mut Vec<TrustEntry>) -> (bool, T)) -> Result<T, TrustError> {
        resolve_userfile::update(&self.path, 0o600, |bytes| {
            if bytes.is_some() {
                self.check_safe()?;
            }
            let mut list = self.parse(bytes)?;
            let (changed, t) = change(&mut list);
            if !changed {
                return Ok(resolve_userfile::Change::Keep(t));
            }
            let text = resolve_userfile::to_bytes(&TrustFile { version: 1, folders: list })?;
            Ok(resolve_userfile::Change::Write(text, t))
        })
    }

    /// Records that the person trusts `folder`'s tools as `fingerprint` says (replacing an
    /// earlier entry of the folder).
    pub fn trust(&self, folder: &Path, fingerprint: Fingerprint) -> Result<TrustEntry, TrustError> {
        self.change(|list| {
            list.retain(|e| e.folder != folder);
            let entry = TrustEntry { folder: folder.to_path_buf(), tools: fingerprint, trusted_at: Utc::now() };
            list.push(entry.clone());
            (true, entry)
        })
    }

    /// Forgets `folder`; false when it was not trusted (decided under the lock, so it says
    /// what the file held when this revoke took its turn).
    pub fn revoke(&self, folder: &Path) -> Result<bool, TrustError> {
        self.change(|list| {
            let before = list.len();
            list.retain(|e| e.folder != folder);
            let removed = list.len() != before;
            (removed, removed)
        })
    }

    /// Moves a trust file that cannot be read (not valid JSON, unknown version) aside to
    /// `trusted-folders.json.bad-<time>`, so every folder is untrusted; the person asks for
    /// this (`rdesk trust --reset`). Returns where it went, `None` when there was no file.
    pub fn reset(&self) -> Result<Option<PathBuf>, TrustError> {
        if !self.path.exists() {
            return Ok(None);
        }
        Ok(Some(resolve_userfile::set_aside(&self.path)?))
    }

    /// Whether `folder`'s tools may run now, and what they are.
    pub fn state(&self, folder: &Path) -> TrustState {
        state_of(Some(self), folder)
    }

    /// Trusts `folder`'s tools as they are now. With `shown`, only if they are still what
    /// the person was shown (a change in between refuses, naming the folder).
    pub fn trust_now(&self, folder: &Path, shown: Option<&Fingerprint>) -> Result<TrustEntry, TrustError> {
        if !folder.is_dir() {
            return Err(TrustError::NotAFolder(folder.to_path_buf()));
        }
        let tools = folder_tools(folder);
        if tools.is_empty() {
            return Err(TrustError::NoTools(folder.to_path_buf()));
        }
        let now = fingerprint(folder, &tools).map_err(TrustError::Fingerprint)?;
        if shown.is_some_and(|s| *s != now) {
            return Err(TrustError::ChangedSinceShown { folder: folder.to_path_buf() });
        }
        self.trust(folder, now)
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether `folder`'s tools may run now under `store` (`None`: no place to keep trust, so
/// never), and what they are.
pub fn state_of(store: Option<&TrustStore>, folder: &Path) -> TrustState {
    let tools = folder_tools(folder);
    if tools.is_empty() {
        return TrustState::NoTools;
    }
    let fingerprint = fingerprint(folder, &tools);
    let entry = store.and_then(|s| s.entry(folder).ok().flatten());
    match (&fingerprint, &entry) {
        (Ok(fp), Some(e)) if e.tools == *fp => TrustState::Trusted { fingerprint: fp.clone() },
        _ => TrustState::Untrusted(FolderTools {
            folder: folder.to_path_buf(),
            tools: tools.iter().map(ToolLaunch::of).collect(),
            fingerprint,
            changed_since_trusted: entry.is_some(),
        }),
    }
}

/// The folder's own tools, as discovery finds them (valid manifests only).
pub fn folder_tools(folder: &Path) -> Vec<Manifest> {
    let dir = folder.join(WORKSPACE_TOOLS_DIR);
    resolve_external::discover(&[(dir, ToolSource::Workspace)]).manifests
}

/// The [`Fingerprint`] of `folder`'s tools (`manifests`: what [`folder_tools`] found), or why
/// it cannot be computed (over [`MAX_ENTRIES`] entries or [`MAX_BYTES`] bytes, unreadable).
pub fn fingerprint(folder: &Path, manifests: &[Manifest]) -> Result<Fingerprint, String> {
    let tools_dir = folder.join(WORKSPACE_TOOLS_DIR);
    let mut walk = Walk { hasher: blake3::Hasher::new(), entries: 0, bytes: 0, root: tools_dir.clone() };
    walk.dir(&tools_dir, 0)?;
    // Files a tool's command line names outside the tools folder (a script elsewhere in the
    // repository) are part of what runs, so part of what is trusted.
    for m in manifests {
        for word in std::iter::once(&m.command).chain(&m.args) {
            let candidate = m.dir.join(word);
            let Ok(real) = candidate.canonicalize() else { continue };
            if real.starts_with(folder) && !real.starts_with(&tools_dir) && real.is_file() {
                walk.hasher.update(b"\0named\0");
                walk.hasher.update(real.as_os_str().as_encoded_bytes());
                walk.file(&real)?;
            }
        }
    }
    Ok(Fingerprint(walk.hasher.finalize().to_hex().to_string()))
}

struct Walk {
    hasher: blake3::Hasher,
    entries: usize,
    bytes: u64,
    root: PathBuf,
}

impl Walk {
    fn count(&mut self) -> Result<(), String> {
        self.entries += 1;
        if self.entries > MAX_ENTRIES {
            return Err(format!(
                "{} holds more than {MAX_ENTRIES} files and folders, too many to check before trusting; remove what the tools do not need",
                self.root.display()
            ));
        }
        Ok(())
    }

    fn dir(&mut self, dir: &Path, depth: usize) -> Result<(), String> {
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound && depth == 0 => return Ok(()),
            Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
        };
        let mut entries: Vec<fs::DirEntry> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            self.count()?;
            let path = e.path();
            let rel = path.strip_prefix(&self.root).unwrap_or(&path);
            let meta = fs::symlink_metadata(&path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
            self.hasher.update(b"\0entry\0");
            self.hasher.update(rel.as_os_str().as_encoded_bytes());
            let ft = meta.file_type();
            if ft.is_symlink() {
                let target = fs::read_link(&path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
                self.hasher.update(b"\0link\0");
                self.hasher.update(target.as_os_str().as_encoded_bytes());
                // What a link to a file points to runs too.
                if fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                    self.file(&path)?;
                }
            } else if ft.is_dir() {
                self.hasher.update(b"\0dir\0");
                if depth < 32 {
                    self.dir(&path, depth + 1)?;
                }
            } else if ft.is_file() {
                self.hasher.update(if meta.mode() & 0o111 != 0 { b"\0exec\0" } else { b"\0file\0" });
                self.file(&path)?;
            } else {
                self.hasher.update(b"\0other\0");
            }
        }
        Ok(())
    }

    fn file(&mut self, path: &Path) -> Result<(), String> {
        // Non-blocking: a FIFO swapped in must not hang the check.
        let mut f = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = f.read(&mut buf).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            if n == 0 {
                break;
            }
            self.bytes += n as u64;
            if self.bytes > MAX_BYTES {
                return Err(format!(
                    "{} holds more than {} MiB, too much to check before trusting; remove what the tools do not need",
                    self.root.display(),
                    MAX_BYTES / (1024 * 1024)
                ));
            }
            self.hasher.update(&buf[..n]);
        }
        self.hasher.update(b"\0end\0");
        Ok(())
    }
}

/// The message of a call refused because `folder` is not trusted.
pub fn untrusted_message(tool: &ToolLaunch, folder: &Path, state: &TrustState) -> String {
    let shown = folder.display();
    let why = match state {
        TrustState::Untrusted(FolderTools { changed_since_trusted: true, .. }) => {
            "its tools changed since you trusted them"
        }
        TrustState::Untrusted(FolderTools { fingerprint: Err(_), .. }) => "its tools cannot be checked",
        _ => "you have not trusted its tools",
    };
    let mut text = format!(
        "`{}` is a tool of the folder {shown} ({WORKSPACE_TOOLS_DIR}), and {why}: nothing was run. It would run `{}`. \
         If you trust this folder's tools, trust them in the Resolve Desk window (\"Trust this folder's tools\") or with \
         `rdesk trust {}`, then call it again.",
        tool.name,
        tool.command_line(),
        shell_word(&shown.to_string())
    );
    if let TrustState::Untrusted(FolderTools { fingerprint: Err(e), .. }) = state {
        text.push_str(&format!(" ({e})"));
    }
    text
}

/// The gate every tool process start of `folder` passes: the user's own tools always; the
/// folder's own only while `store` trusts them exactly as they are now (never without a store).
pub fn gate(store: Option<TrustStore>, folder: PathBuf) -> Gate {
    Gate::new(move |m: &Manifest| {
        if m.source == ToolSource::User {
            return Ok(());
        }
        match state_of(store.as_ref(), &folder) {
            TrustState::Trusted { .. } => Ok(()),
            state => Err(untrusted_message(&ToolLaunch::of(m), &folder, &state)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tool(root: &Path, name: &str, script: &str) {
        let dir = root.join(WORKSPACE_TOOLS_DIR).join(name);
        fs::create_dir_all(&dir).unwrap();
        let manifest = serde_json::json!({
            "name": name, "label": name, "description": "d", "parameters": {"type": "object"},
            "command": "python3", "args": ["tool.py"],
        });
        fs::write(dir.join("tool.json"), manifest.to_string()).unwrap();
        fs::write(dir.join("tool.py"), script).unwrap();
    }

    fn store() -> (tempfile::TempDir, TrustStore) {
        let config = tempfile::tempdir().unwrap();
        let store = TrustStore::in_config_dir(config.path());
        (config, store)
    }

    #[test]
    fn a_folder_is_untrusted_until_trusted_and_again_once_a_tool_file_changes() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let (_c, store) = store();
        assert_eq!(store.state(&root), TrustState::NoTools, "no tools folder: nothing to trust");
        tool(&root, "x", "print(1)");
        let TrustState::Untrusted(shown) = store.state(&root) else { panic!("a new folder's tools are untrusted") };
        assert_eq!(shown.tools[0].command_line(), "python3 tool.py");
        assert!(!shown.changed_since_trusted);
        store.trust_now(&root, shown.fingerprint.as_ref().ok()).unwrap();
        assert!(matches!(store.state(&root), TrustState::Trusted { .. }), "trusted as shown");
        fs::write(root.join(WORKSPACE_TOOLS_DIR).join("x/tool.py"), "print(2)").unwrap();
        let TrustState::Untrusted(again) = store.state(&root) else { panic!("a changed tool file asks again") };
        assert!(again.changed_since_trusted, "the person is told the tools changed");
    }

    #[test]
    fn trusting_what_was_shown_is_refused_when_the_tools_changed_in_between() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let (_c, store) = store();
        tool(&root, "x", "print(1)");
        let TrustState::Untrusted(shown) = store.state(&root) else { panic!() };
        tool(&root, "y", "print(2)");
        let err = store.trust_now(&root, shown.fingerprint.as_ref().ok()).unwrap_err();
        assert!(matches!(err, TrustError::ChangedSinceShown { .. }), "{err}");
        assert!(matches!(store.state(&root), TrustState::Untrusted(_)), "nothing was trusted");
    }

    #[test]
    fn a_script_the_command_names_elsewhere_in_the_folder_is_part_of_what_is_trusted() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let (_c, store) = store();
        let dir = root.join(WORKSPACE_TOOLS_DIR).join("x");
        fs::create_dir_all(&dir).unwrap();
        fs::create_dir_all(root.join("scripts")).unwrap();
        fs::write(root.join("scripts/run.py"), "print(1)").unwrap();
        let manifest = serde_json::json!({
            "name": "x", "label": "x", "description": "d", "parameters": {"type": "object"},
            "command": "python3", "args": ["../../../scripts/run.py"],
        });
        fs::write(dir.join("tool.json"), manifest.to_string()).unwrap();
        store.trust_now(&root, None).unwrap();
        assert!(matches!(store.state(&root), TrustState::Trusted { .. }));
        fs::write(root.join("scripts/run.py"), "import os; os.system('evil')").unwrap();
        assert!(matches!(store.state(&root), TrustState::Untrusted(_)), "the script the tool runs changed");
    }

    #[test]
    fn revoke_forgets_a_folder_and_a_trust_file_others_can_write_trusts_nothing() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let (_c, store) = store();
        tool(&root, "x", "print(1)");
        store.trust_now(&root, None).unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
        assert_eq!(fs::metadata(store.path()).unwrap().mode() & 0o777, 0o600, "the trust file is private");
        fs::set_permissions(store.path(), fs::Permissions::from_mode(0o666)).unwrap();
        let err = store.list().unwrap_err();
        assert!(err.to_string().contains("lets others write it"), "{err}");
        assert!(matches!(store.state(&root), TrustState::Untrusted(_)), "an unsafe file trusts nothing");
        fs::set_permissions(store.path(), fs::Permissions::from_mode(0o600)).unwrap();
        assert!(store.revoke(&root).unwrap());
        assert!(!store.revoke(&root).unwrap(), "already forgotten");
        assert!(matches!(store.state(&root), TrustState::Untrusted(_)));
    }

    #[test]
    fn a_trust_file_that_is_not_json_is_named_with_its_line_and_never_overwritten() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let (_c, store) = store();
        tool(&root, "x", "print(1)");
        fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        let bad = "{\n  \"version\": 1,\n  \"folders\": [oops]\n}\n";
        fs::write(store.path(), bad).unwrap();
        fs::set_permissions(store.path(), fs::Permissions::from_mode(0o600)).unwrap();
        for err in [store.list().unwrap_err(), store.trust_now(&root, None).unwrap_err()] {
            let text = err.to_string();
            assert!(text.contains("trusted-folders.json") && text.contains("line 3"), "{text}");
        }
        assert!(store.revoke(&root).is_err(), "a revoke of a bad file fails too");
        assert_eq!(fs::read_to_string(store.path()).unwrap(), bad, "left as it was");
        assert!(matches!(store.state(&root), TrustState::Untrusted(_)), "a bad file trusts nothing");
        let aside = store.reset().unwrap().expect("set aside");
        assert_eq!(fs::read_to_string(&aside).unwrap(), bad);
        store.trust_now(&root, None).unwrap();
        assert!(matches!(store.state(&root), TrustState::Trusted { .. }));
    }

    #[test]
    fn the_gate_lets_the_users_own_tools_run_and_names_the_folder_and_how_to_trust_it() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let (_c, store) = store();
        tool(&root, "x", "print(1)");
        let mut m = folder_tools(&root).remove(0);
        let gate = gate(Some(store.clone()), root.clone());
        let err = gate.check(&m).unwrap_err();
        assert!(err.contains(&root.display().to_string()) && err.contains("rdesk trust"), "{err}");
        assert!(err.contains("nothing was run") && err.contains("python3 tool.py"), "{err}");
        m.source = ToolSource::User;
        assert!(gate.check(&m).is_ok(), "the user's own tools need no trust");
        m.source = ToolSource::Workspace;
        store.trust_now(&root, None).unwrap();
        assert!(gate.check(&m).is_ok());
    }
}
