//! Opening a workspace: the one composition every front end uses (the window, `rdesk run`,
//! `rdesk mcp`, `rdesk agent`, `rdesk serve-socket`).
//!
//! In order: the session (which finishes or refuses an interrupted apply's record first), the
//! built-in tools, the external tools — the user's own, then the folder's own behind the trust
//! [`gate`](crate::trust::gate) — the pending actions the journal kept (re-checked, never
//! applied), the journal's mirror of pushes and decisions, and the watches (files for live
//! staleness, tool folders for live reload). What the person should hear about comes back as
//! typed [`Note`]s and [`Desk::trust_state`] / [`Desk::tool_problems`]; each front end says it
//! its own way (a banner, a line on stderr).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use resolve_engine::{
    PendingActionStore, Recovery, RegistryError, ResolvePolicy, RestoreReport, Session, WorkspaceError,
};
use resolve_external::{Config, ExternalTools, LoadProblem, ToolWatcher};
use resolve_journal::Writer;

use crate::trust::{self, TrustError, TrustState, TrustStore};

/// Why a workspace could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot open workspace {path}: {source}")]
    Workspace { path: PathBuf, source: WorkspaceError },
    #[error("cannot load the built-in tools: {0}")]
    Tools(#[from] RegistryError),
}

/// How to open a workspace.
#[derive(Clone)]
pub struct DeskOptions {
    pub policy: ResolvePolicy,
    /// Action ids `<prefix><n>` (deterministic ids for scripts: `pa-`); default: a per-session tag.
    pub id_prefix: Option<String>,
    /// The user's config folder (e.g. `~/.config`): their own tools
    /// (`resolve-desk/tools`), the trusted folders, the agent settings. `None`: no user tools,
    /// and a folder's own tools are never trusted.
    pub config_dir: Option<PathBuf>,
    /// Where tool logs go.
    pub log_dir: PathBuf,
    /// The decision journal: pending actions restored and mirrored, decisions and undo data
    /// recorded. `None`: this session's memory only (the demo, one-shot commands).
    pub journal: Option<Arc<Writer>>,
    /// Watch the workspace so pending actions turn stale as files change.
    pub watch_files: bool,
    /// Watch the tool folders so tools reload as they change.
    pub watch_tools: bool,
    /// Environment variables no tool process ever gets, besides the defaults
    /// (`OPENAI_API_KEY`) and the API key variable the agent settings in `config_dir` name
    /// (e.g. `rdesk agent --api-key-env NAME`).
    pub never_pass_env: Vec<String>,
}

impl DeskOptions {
    /// The user's usual places (`$XDG_CONFIG_HOME` or `~/.config`, the tool log folder), no
    /// journal, no watches.
    pub fn new(policy: ResolvePolicy) -> DeskOptions {
        DeskOptions {
            policy,
            id_prefix: None,
            config_dir: resolve_agent::ProviderConfig::user_config_dir(),
            log_dir: resolve_external::default_log_dir(),
            journal: None,
            watch_files: false,
            watch_tools: false,
            never_pass_env: Vec::new(),
        }
    }
}

/// Something opening the workspace found that the person should hear about once.
#[derive(Debug, Clone)]
pub enum Note {
    /// An interrupted apply's record was found at the root: finished (rolled back or cleaned
    /// up), or refused (not acted on). `Recovery::message` says which.
    Recovery(Recovery),
    /// Pending actions kept from an earlier session were put back (never applied).
    Restored(RestoreReport),
    /// The pending actions kept for this workspace could not be read (they stay kept).
    RestoreFailed(String),
    /// The trusted folders could not be read: the folder's own tools stay untrusted.
    TrustUnreadable(String),
    /// The workspace cannot be watched: staleness is found at Apply instead.
    WatchFailed(String),
}

impl Note {
    /// One line for a terminal or a log.
    pub fn message(&self) -> String {
        match self {
            Note::Recovery(r) => r.message(),
            Note::Restored(r) => r.summary(),
            Note::RestoreFailed(e) => {
                format!("could not read the pending actions kept for this workspace ({e}); they stay kept")
            }
            Note::TrustUnreadable(e) => format!("{e}; this folder's own tools stay untrusted"),
            Note::WatchFailed(e) => format!("{e}; a file changed behind the desk's back is found stale at Apply"),
        }
    }
}

/// The variables no tool gets: the defaults, the agent settings' API key variable, and the
/// caller's.
fn never_pass(options: &DeskOptions) -> Vec<String> {
    let mut names: Vec<String> = resolve_external::DEFAULT_NEVER_PASS.iter().map(|n| n.to_string()).collect();
    if let Some(config) = options.config_dir.as_deref() {
        if let Ok(settings) = resolve_agent::ProviderConfig::load(config) {
            names.push(settings.api_key_env);
        }
    }
    names.extend(options.never_pass_env.iter().cloned());
    names.sort();
    names.dedup();
    names
}

/// One open workspace, composed: session, tools, trust, journal mirror, watches.
pub struct Desk {
    session: Arc<Session>,
    root: PathBuf,
    external: ExternalTools,
    trust: Option<TrustStore>,
    journal: Option<Arc<Writer>>,
    notes: Vec<Note>,
    watcher: Mutex<Option<resolve_watch::Watcher>>,
    _tool_watch: Option<ToolWatcher>,
}

impl Desk {
    /// Opens `path` (see the module docs). Nothing is applied by opening.
    pub async fn open(path: &Path, options: DeskOptions) -> Result<Desk, OpenError> {
        let store = match &options.id_prefix {
            Some(prefix) => PendingActionStore::with_id_prefix(prefix.clone()),
            None => PendingActionStore::new(),
        };
        let session = Session::with_store(path, options.policy, store)
            .map_err(|source| OpenError::Workspace { path: path.to_path_buf(), source })?;
        let root = session.workspace().root().to_path_buf();
        let shown_root = root.display().to_string();
        let mut notes = Vec::new();
        if let Some(recovery) = session.recovery() {
            if let Some(journal) = &options.journal {
                crate::journal::record_recovery(journal, &shown_root, recovery);
            }
            notes.push(Note::Recovery(recovery.clone()));
        }
        crate::tools::load_builtin(&session)?;
        let trust = options.config_dir.as_deref().map(TrustStore::in_config_dir);
        if let Some(store) = &trust {
            if let Err(e) = store.list() {
                notes.push(Note::TrustUnreadable(e.to_string()));
            }
        }
        let config = Config {
            dirs: options.config_dir.iter().map(|c| c.join("resolve-desk").join("tools")).collect(),
            workspace: Some(root.join(resolve_external::WORKSPACE_TOOLS_DIR)),
            log_dir: options.log_dir.clone(),
            gate: Some(trust::gate(trust.clone(), root.clone())),
            never_pass: never_pass(&options),
            ..Config::default()
        };
        let external = ExternalTools::load(&session, config);
        let session = Arc::new(session);
        if let Some(journal) = &options.journal {
            match crate::journal::restore(&session, journal).await {
                Ok(report) if report.restored.is_empty() && report.refused.is_empty() => {}
                Ok(report) => notes.push(Note::Restored(report)),
                Err(e) => notes.push(Note::RestoreFailed(e)),
            }
            if let Err(e) = crate::journal::restore_mailbox(&session, journal).await {
                notes.push(Note::RestoreFailed(format!("decisions kept for agents: {e}")));
            }
            crate::journal::mirror(&session, journal);
        }
        let watcher = if options.watch_files {
            match resolve_watch::Watcher::start(session.clone()) {
                Ok(w) => Some(w),
                Err(e) => {
                    notes.push(Note::WatchFailed(e.to_string()));
                    None
                }
            }
        } else {
            None
        };
        let tool_watch = if options.watch_tools {
            match external.watch(Arc::downgrade(&session)) {
                Ok(w) => Some(w),
                Err(e) => {
                    notes.push(Note::WatchFailed(e));
                    None
                }
            }
        } else {
            None
        };
        Ok(Desk {
            session,
            root,
            external,
            trust,
            journal: options.journal,
            notes,
            watcher: Mutex::new(watcher),
            _tool_watch: tool_watch,
        })
    }

    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// The workspace root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The external tools (names, manifests, logs, problems).
    pub fn external(&self) -> &ExternalTools {
        &self.external
    }

    /// The journal this desk records to, if any.
    pub fn journal(&self) -> Option<&Arc<Writer>> {
        self.journal.as_ref()
    }

    /// What opening found (recovery, restored actions, a watch that could not start), once.
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// External tools that could not be loaded now (a bad manifest; a name taken — a folder's
    /// tool never shadows the user's or a built-in one).
    pub fn tool_problems(&self) -> Vec<LoadProblem> {
        self.external.problems()
    }

    /// Whether the folder's own tools may run now, and what they would run.
    pub fn trust_state(&self) -> TrustState {
        trust::state_of(self.trust.as_ref(), &self.root)
    }

    /// The person trusts the folder's own tools as they were shown (`shown`: the fingerprint
    /// they saw; refused when the tools changed since).
    pub fn trust_tools(&self, shown: Option<&trust::Fingerprint>) -> Result<trust::TrustEntry, TrustError> {
        let store = self.trust.as_ref().ok_or_else(|| {
            TrustError::Fingerprint(
                "there is no user config folder to keep trust in (set HOME or XDG_CONFIG_HOME)".into(),
            )
        })?;
        store.trust_now(&self.root, shown)
    }

    /// Told after every reload of the external tools (their problems and trust may change).
    pub fn subscribe_tools(&self) -> tokio::sync::watch::Receiver<u64> {
        self.external.subscribe()
    }

    /// Stops watching the workspace's files (the app's exit).
    pub fn stop_watching(&self) {
        if let Some(w) = self.watcher.lock().unwrap_or_else(|p| p.into_inner()).take() {
            w.stop();
        }
    }

    /// Closes the session: a waiting agent learns nothing was applied; later calls are refused.
    /// Pending actions stay (in the journal, when there is one).
    pub fn close(&self) {
        self.session.close();
    }
}
