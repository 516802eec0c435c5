//! Where external tools come from and how they stay in step with their folders: discovery,
//! loading into a session (name conflicts refused with SPEC §6's message, kept as load
//! problems), reload, and a `notify` watcher that reloads when a tool folder changes.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use notify::{Event, EventKind, RecursiveMode, Watcher as _};
use resolve_engine::{CustomToolApi, RegistryError, Session, Tool};

use crate::environment::DEFAULT_NEVER_PASS;
use crate::limits::ToolLimits;
use crate::manifest::{LoadProblem, Manifest, ToolSource};
use crate::process::Launch;
use crate::tool::{ExternalTool, Runner};

/// The tools folder inside a workspace.
pub const WORKSPACE_TOOLS_DIR: &str = ".resolve/tools";

/// Where tools are searched and where their stderr logs go, what their processes never get,
/// their bounds, and who may start them. The user's folders (`dirs`) are searched first, then
/// the workspace's (`workspace`): on a name clash the first one wins, so a folder's own tool
/// never shadows a tool of the user's (it is a load problem with SPEC §6's message instead).
#[derive(Debug, Clone)]
pub struct Config {
    /// The user's own tool folders ([`ToolSource::User`]).
    pub dirs: Vec<PathBuf>,
    /// The workspace's tool folder ([`ToolSource::Workspace`]: written by whoever wrote the
    /// repository), searched after the user's.
    pub workspace: Option<PathBuf>,
    pub log_dir: PathBuf,
    /// Asked before every start of a tool's process; a refusal fails the call and nothing runs.
    pub gate: Option<Gate>,
    /// Environment variables never passed to a tool, even when its manifest names them in
    /// `env` (default [`DEFAULT_NEVER_PASS`]; a front end adds its LLM key variable).
    pub never_pass: Vec<String>,
    /// A tool's stdout line and stderr log bounds (default [`ToolLimits::from_env_or_default`]).
    pub limits: ToolLimits,
}

impl Default for Config {
    /// No folders, logs in [`default_log_dir`], no gate, [`DEFAULT_NEVER_PASS`], the limits the
    /// environment sets.
    fn default() -> Config {
        Config {
            dirs: Vec::new(),
            workspace: None,
            log_dir: default_log_dir(),
            gate: None,
            never_pass: DEFAULT_NEVER_PASS.iter().map(|n| n.to_string()).collect(),
            limits: ToolLimits::from_env_or_default(),
        }
    }
}

impl Config {
    /// `<config>/resolve-desk/tools` (the user's) then `<workspace>/.resolve/tools`; logs in
    /// [`default_log_dir`]; no gate.
    pub fn for_workspace(root: &Path) -> Config {
        Config {
            dirs: user_tools_dir().into_iter().collect(),
            workspace: Some(root.join(WORKSPACE_TOOLS_DIR)),
            ..Config::default()
        }
    }

    /// Every folder searched, with where it comes from, in search order.
    pub fn sources(&self) -> Vec<(PathBuf, ToolSource)> {
        let user = self.dirs.iter().map(|d| (d.clone(), ToolSource::User));
        user.chain(self.workspace.iter().map(|d| (d.clone(), ToolSource::Workspace))).collect()
    }

    fn watched_dirs(&self) -> Vec<PathBuf> {
        self.sources().into_iter().map(|(d, _)| d).collect()
    }
}

/// A check made before a tool's process starts (every start, so a tool changed since it was
/// allowed is asked about again): `Err(message)` refuses, the call fails with
/// [`ToolError::Untrusted`](resolve_engine::ToolError::Untrusted) carrying the message, and
/// nothing runs.
#[derive(Clone)]
pub struct Gate(Arc<GateCheck>);

/// What a [`Gate`] asks: `Err(message)` refuses the start.
type GateCheck = dyn Fn(&Manifest) -> Result<(), String> + Send + Sync;

impl Gate {
    pub fn new(check: impl Fn(&Manifest) -> Result<(), String> + Send + Sync + 'static) -> Gate {
        Gate(Arc::new(check))
    }

    pub fn check(&self, manifest: &Manifest) -> Result<(), String> {
        (self.0)(manifest)
    }
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gate(..)")
    }
}

fn env_dir(key: &str) -> Option<PathBuf> {
    std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// `<config>/resolve-desk/tools`: `$XDG_CONFIG_HOME` (or `~/.config`) on Linux,
/// `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
pub fn user_tools_dir() -> Option<PathBuf> {
    let config = if cfg!(windows) {
        env_dir("APPDATA")
    } else if cfg!(target_os = "macos") && env_dir("XDG_CONFIG_HOME").is_none() {
        env_dir("HOME").map(|h| h.join("Library/Application Support"))
    } else {
        env_dir("XDG_CONFIG_HOME").or_else(|| env_dir("HOME").map(|h| h.join(".config")))
    }?;
    Some(config.join("resolve-desk").join("tools"))
}

/// Tool logs: `$XDG_STATE_HOME/resolve-desk/tool-logs` (or `~/.local/state/…`; the temp
/// folder when there is no home). One file per tool: `<name>.log`.
pub fn default_log_dir() -> PathBuf {
    let state = env_dir("XDG_STATE_HOME").or_else(|| env_dir("HOME").map(|h| h.join(".local/state")));
    state.unwrap_or_else(std::env::temp_dir).join("resolve-desk").join("tool-logs")
}

/// The last `max` bytes of a file (lossy UTF-8); empty when it does not exist.
pub fn read_tail(path: &Path, max: u64) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(max)))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovery {
    pub manifests: Vec<Manifest>,
    pub problems: Vec<LoadProblem>,
}

/// Every tool folder (`<dir>/<tool>/tool.json`) of `dirs`, in order, each manifest marked with
/// its folder's source; a folder without a valid manifest and a second tool of the same name
/// are problems.
pub fn discover(dirs: &[(PathBuf, ToolSource)]) -> Discovery {
    let mut found = Discovery::default();
    for (dir, source) in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir() && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .collect();
        folders.sort();
        for folder in folders {
            match Manifest::load(&folder) {
                Ok(mut m) => {
                    m.source = *source;
                    if found.manifests.iter().any(|o| o.name == m.name) {
                        found.problems.push(LoadProblem {
                            file: m.file.clone(),
                            message: RegistryError::Conflict(m.name.clone()).to_string(),
                        });
                    } else {
                        found.manifests.push(m);
                    }
                }
                Err(p) => found.problems.push(p),
            }
        }
    }
    found
}

/// A change of any file of a tool folder replaces the tool (its code may have changed).
fn fingerprint(dir: &Path) -> u64 {
    fn walk(dir: &Path, depth: usize, h: &mut DefaultHasher, budget: &mut usize) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            let name = e.file_name();
            let name_s = name.to_string_lossy();
            if matches!(name_s.as_ref(), "node_modules" | ".git" | "__pycache__" | "target") {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            name.hash(h);
            meta.len().hash(h);
            meta.modified().ok().hash(h);
            if meta.is_dir() && depth < 4 {
                walk(&e.path(), depth + 1, h, budget);
            }
        }
    }
    let mut h = DefaultHasher::new();
    walk(dir, 0, &mut h, &mut 2000);
    h.finish()
}

/// The external tools of `config` made with `api`, for a runtime that is not a session
/// (e.g. one without a pending-action store: a push there answers SPEC §6's message), and
/// the load problems (name clashes among these tools only).
pub fn make_tools(api: &CustomToolApi, config: &Config) -> (Vec<Arc<dyn Tool>>, Vec<LoadProblem>) {
    let found = discover(&config.sources());
    let tools = found
        .manifests
        .into_iter()
        .map(|m| {
            let log = config.log_dir.join(format!("{}.log", m.name));
            Arc::new(ExternalTool { runner: Runner::new(m, &log, api.clone(), Launch::of(config)) }) as Arc<dyn Tool>
        })
        .collect();
    (tools, found.problems)
}

struct Loaded {
    manifest: Manifest,
    fingerprint: u64,
    runner: Arc<Runner>,
}

#[derive(Default)]
struct State {
    loaded: Vec<Loaded>,
    problems: Vec<LoadProblem>,
    /// Runners of replaced or removed tools kept while an action they pushed waits (its
    /// apply runs in their process); dropped (process stopped) at a later reload once none
    /// does.
    retired: Vec<Arc<Runner>>,
}

/// What a reload changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReloadReport {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Unloaded and loaded again (manifest or code changed).
    pub replaced: Vec<String>,
    pub problems: Vec<LoadProblem>,
}

impl ReloadReport {
    pub fn changed(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.replaced.is_empty())
    }
}

/// The external tools of one session.
#[derive(Clone)]
pub struct ExternalTools {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    state: Mutex<State>,
    reloads: tokio::sync::watch::Sender<u64>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ExternalTools {
    /// Finds the tools of `config` and registers them in `session` (beside what it already
    /// has; a clash is a load problem, never an error). Nothing is started yet.
    pub fn load(session: &Session, config: Config) -> ExternalTools {
        let tools = ExternalTools {
            inner: Arc::new(Inner {
                config,
                state: Mutex::new(State::default()),
                reloads: tokio::sync::watch::Sender::new(0),
            }),
        };
        tools.reload(session);
        tools
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Looks at the folders again: removed tools are unloaded, changed ones replaced, new
    /// ones loaded. An action pushed by a replaced tool keeps the process that made it until
    /// it is decided.
    pub fn reload(&self, session: &Session) -> ReloadReport {
        let found = discover(&self.inner.config.sources());
        let mut state = lock(&self.inner.state);
        let mut report = ReloadReport::default();
        let mut kept = Vec::new();
        for old in std::mem::take(&mut state.loaded) {
            match found.manifests.iter().find(|m| m.name == old.manifest.name) {
                Some(m) if *m == old.manifest && fingerprint(&m.dir) == old.fingerprint => kept.push(old),
                Some(_) => {
                    session.unload(&old.manifest.name);
                    report.replaced.push(old.manifest.name.clone());
                    state.retired.push(old.runner);
                }
                None => {
                    session.unload(&old.manifest.name);
                    report.removed.push(old.manifest.name.clone());
                    state.retired.push(old.runner);
                }
            }
        }
        state.retired.retain(|r| r.has_live_actions());
        state.loaded = kept;
        let mut problems = found.problems;
        for manifest in found.manifests {
            if state.loaded.iter().any(|l| l.manifest.name == manifest.name) {
                continue;
            }
            let log = self.log_path(&manifest.name);
            let fp = fingerprint(&manifest.dir);
            let mut made = None;
            let loaded = session.load(|api| {
                let runner = Runner::new(manifest.clone(), &log, api.clone(), Launch::of(&self.inner.config));
                made = Some(runner.clone());
                vec![Arc::new(ExternalTool { runner }) as Arc<dyn Tool>]
            });
            match (loaded, made) {
                (Ok(_), Some(runner)) => {
                    if !report.replaced.contains(&manifest.name) {
                        report.added.push(manifest.name.clone());
                    }
                    state.loaded.push(Loaded { manifest, fingerprint: fp, runner });
                }
                (Err(e), _) => problems.push(LoadProblem { file: manifest.file.clone(), message: e.to_string() }),
                (Ok(_), None) => {}
            }
        }
        // A replaced tool that did not come back is removed.
        let back: Vec<String> = state.loaded.iter().map(|l| l.manifest.name.clone()).collect();
        let (replaced, gone): (Vec<String>, Vec<String>) = report.replaced.drain(..).partition(|n| back.contains(n));
        report.replaced = replaced;
        report.removed.extend(gone);
        state.problems = problems.clone();
        report.problems = problems;
        drop(state);
        self.inner.reloads.send_modify(|n| *n += 1);
        report
    }

    /// Names of the external tools loaded now.
    pub fn names(&self) -> Vec<String> {
        lock(&self.inner.state).loaded.iter().map(|l| l.manifest.name.clone()).collect()
    }

    /// Manifests of the external tools loaded now.
    pub fn manifests(&self) -> Vec<Manifest> {
        lock(&self.inner.state).loaded.iter().map(|l| l.manifest.clone()).collect()
    }

    /// Tools that could not be loaded, each with the file at fault.
    pub fn problems(&self) -> Vec<LoadProblem> {
        lock(&self.inner.state).problems.clone()
    }

    /// Told after every reload (the app refreshes its problems list).
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.reloads.subscribe()
    }

    /// Where the stderr of tool `name` goes.
    pub fn log_path(&self, name: &str) -> PathBuf {
        self.inner.config.log_dir.join(format!("{name}.log"))
    }

    /// The end of tool `name`'s stderr log (at most 64 KiB, reaching into the rotated
    /// `<name>.log.1`; empty before it first ran).
    pub fn read_log(&self, name: &str) -> std::io::Result<String> {
        crate::log::read_log_tail(&self.log_path(name), 64 * 1024)
    }

    /// Whether tool `name`'s process runs now.
    pub async fn is_running(&self, name: &str) -> bool {
        let runner = lock(&self.inner.state).loaded.iter().find(|l| l.manifest.name == name).map(|l| l.runner.clone());
        match runner {
            Some(r) => r.is_running().await,
            None => false,
        }
    }

    /// Stops tool `name`'s process now if no action it pushed waits for a decision (as the
    /// idle timer does); true when no process runs afterwards.
    pub async fn stop_if_idle(&self, name: &str) -> bool {
        let runner = lock(&self.inner.state).loaded.iter().find(|l| l.manifest.name == name).map(|l| l.runner.clone());
        match runner {
            Some(r) => r.stop_if_idle().await,
            None => true,
        }
    }

    /// Watches the tool folders and reloads `session` when one changes (debounced). A folder
    /// that does not exist yet is not created: its nearest existing parent is watched (not
    /// recursively) until it appears. Stops when the returned watcher is dropped or the
    /// session is gone.
    pub fn watch(&self, session: Weak<Session>) -> Result<ToolWatcher, String> {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            if let Ok(e) = &event {
                if matches!(e.kind, EventKind::Access(_)) {
                    return;
                }
            }
            let _ = tx.send(());
        })
        .map_err(|e| format!("cannot watch the tool folders: {e}"))?;
        let armed = Arc::new(Mutex::new(Armed { watcher, watched: Vec::new() }));
        lock(&armed).arm(&self.inner.config.watched_dirs())?;
        let tools = self.clone();
        let weak_armed = Arc::downgrade(&armed);
        std::thread::Builder::new()
            .name("external-tools-watch".into())
            .spawn(move || {
                while rx.recv().is_ok() {
                    // Let a burst of events (an editor's save, a copy) settle.
                    while rx.recv_timeout(Duration::from_millis(150)).is_ok() {}
                    let Some(armed) = weak_armed.upgrade() else { break };
                    // A folder that appeared (or went) moves the watch.
                    let _ = lock(&armed).arm(&tools.inner.config.watched_dirs());
                    drop(armed);
                    let Some(session) = session.upgrade() else { break };
                    tools.reload(&session);
                }
            })
            .map_err(|e| format!("cannot start the tool watcher: {e}"))?;
        Ok(ToolWatcher { _armed: armed })
    }
}

struct Armed {
    watcher: notify::RecommendedWatcher,
    watched: Vec<(PathBuf, bool)>,
}

impl Armed {
    /// Watches each tools folder recursively, or its nearest existing parent until it exists.
    fn arm(&mut self, dirs: &[PathBuf]) -> Result<(), String> {
        // A watched folder that was removed lost its watch.
        let gone: Vec<(PathBuf, bool)> = self.watched.iter().filter(|(p, _)| !p.is_dir()).cloned().collect();
        for g in gone {
            let _ = self.watcher.unwatch(&g.0);
            self.watched.retain(|w| *w != g);
        }
        for dir in dirs {
            let target = if dir.is_dir() {
                (dir.clone(), true)
            } else {
                match dir.ancestors().skip(1).find(|a| a.is_dir()) {
                    Some(a) => (a.to_path_buf(), false),
                    None => continue,
                }
            };
            if self.watched.iter().any(|w| w.0 == target.0 && (w.1 || !target.1)) {
                continue;
            }
            let mode = if target.1 { RecursiveMode::Recursive } else { RecursiveMode::NonRecursive };
            self.watcher
                .watch(&target.0, mode)
                .map_err(|e| format!("cannot watch the tool folder {}: {e}", target.0.display()))?;
            self.watched.push(target);
        }
        Ok(())
    }
}

/// Keeps the tool folders watched while it lives.
pub struct ToolWatcher {
    _armed: Arc<Mutex<Armed>>,
}
