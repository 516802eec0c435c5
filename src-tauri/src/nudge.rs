//! A nudge when someone is waiting: when an agent pushes a preview or starts waiting on
//! `resolve` while the window is not focused, a desktop notification (Tauri's notification
//! plugin: the session bus's `org.freedesktop.Notifications` on Linux) says who, which folder and
//! what — never file contents —, and the window asks for attention (urgency hint). Clicking the
//! notification shows that folder with that action. The window's title carries the pending count
//! over every folder, and so does the tray icon where the desktop has one. Notifications and the
//! tray icon can be turned off (`DeskSettings`, `<config>/resolve-desk/desk.json`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use resolve_engine::{Session, StoreChange};
use resolve_protocol::DeskSettings;

/// What happened in a folder that the person may want to hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    pub root: String,
    pub folder: String,
    pub action_id: String,
    pub label: String,
    /// The agent (an MCP client's name, or the model).
    pub client: String,
    pub kind: ArrivalKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrivalKind {
    /// An agent pushed a preview.
    Pushed,
    /// An agent waits on `resolve` for the person's decision.
    Waiting,
}

/// What a folder's store change means for the nudge.
pub enum Signal {
    /// The pending count may have changed (title, tray).
    Changed,
    /// An agent's preview or wait arrived.
    Arrived(Arrival),
}

/// Reacts to folder changes; set once the app exists (see `AppState::set_nudger`).
pub type Nudger = Arc<dyn Fn(Signal) + Send + Sync>;

/// The signals a store change of the folder at `root` gives: always `Changed`, and an
/// `Arrived` for an agent's push or an agent starting to wait.
pub fn signals(change: &StoreChange, session: &Session, root: &str, folder: &str) -> Vec<Signal> {
    let mut out = vec![Signal::Changed];
    let arrived = |id: &str, kind: ArrivalKind| {
        let info = session.store().info(id)?;
        let client = match kind {
            ArrivalKind::Pushed => info.pushed_by.clone()?,
            ArrivalKind::Waiting => {
                let proposal = info.proposal.as_ref().filter(|p| p.waiting)?;
                proposal.client.clone().or_else(|| info.pushed_by.clone()).unwrap_or_else(|| "An agent".into())
            }
        };
        Some(Arrival {
            root: root.to_string(),
            folder: folder.to_string(),
            action_id: id.to_string(),
            label: info.label.clone(),
            client,
            kind,
        })
    };
    let arrival = match change {
        StoreChange::Pushed { id } => arrived(id, ArrivalKind::Pushed),
        StoreChange::ProposalChanged { id } => arrived(id, ArrivalKind::Waiting),
        StoreChange::Removed { .. }
        | StoreChange::Decided { .. }
        | StoreChange::StatusChanged { .. }
        | StoreChange::Cleared { .. }
        | StoreChange::Restored { .. }
        | StoreChange::CommentsChanged { .. } => None,
    };
    out.extend(arrival.map(Signal::Arrived));
    out
}

/// The notification's title and body: who, which folder, what (the action's label; never file
/// contents).
pub fn message(a: &Arrival) -> (String, String) {
    let body = match a.kind {
        ArrivalKind::Waiting => format!("{} is waiting for your review in {}: {}", a.client, a.folder, a.label),
        ArrivalKind::Pushed => format!("{} sent a preview for your review in {}: {}", a.client, a.folder, a.label),
    };
    ("Resolve Desk".to_string(), body)
}

/// The window's title: `Resolve Desk`, or `Resolve Desk (3 pending)`.
pub fn title(pending: usize) -> String {
    if pending == 0 {
        "Resolve Desk".to_string()
    } else {
        format!("Resolve Desk ({pending} pending)")
    }
}

/// An agent that pushes and then waits on the same action within this time is told about once.
pub const ONE_NUDGE: Duration = Duration::from_secs(10);

/// Which arrivals deserve a notification: one per action for a push and the wait right after it.
#[derive(Default)]
pub struct Deduper {
    last: Mutex<Vec<(String, Instant)>>,
}

impl Deduper {
    /// Whether `a` gets a notification now (and remembers it).
    pub fn admit(&self, a: &Arrival, now: Instant) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        last.retain(|(_, at)| now.duration_since(*at) < ONE_NUDGE);
        let key = format!("{}\u{0}{}", a.root, a.action_id);
        if last.iter().any(|(k, _)| *k == key) {
            return false;
        }
        last.push((key, now));
        true
    }
}

/// Where the desk settings are kept.
pub fn settings_file(config_dir: &Path) -> PathBuf {
    config_dir.join("resolve-desk").join("desk.json")
}

/// The desk settings; a missing file is the defaults (both on), and so is one that is not
/// valid JSON (said on stderr with its path and line; it is left for the person to fix).
pub fn load_settings(config_dir: &Path) -> DeskSettings {
    let file = settings_file(config_dir);
    let defaults = DeskSettings { notifications: true, tray: true };
    match resolve_userfile::read(&file) {
        Ok(None) => defaults,
        Ok(Some(v)) => serde_json::from_value(v).unwrap_or_else(|e| {
            eprintln!("resolve-desk: {} does not hold desk settings ({e}); using the defaults", file.display());
            defaults
        }),
        Err(e) => {
            eprintln!("resolve-desk: {e}; using the defaults");
            defaults
        }
    }
}

/// Saves the desk settings under the file's lock (re-read under it: keys this version does
/// not know are kept; written atomically). A file that is not valid JSON is an error and
/// stays as it is.
pub fn save_settings(config_dir: &Path, settings: &DeskSettings) -> Result<(), resolve_userfile::UserFileError> {
    let file = settings_file(config_dir);
    let ours = serde_json::to_value(settings).map_err(|e| resolve_userfile::UserFileError::Refused(e.to_string()))?;
    resolve_userfile::update_json(&file, 0o600, |now| {
        let mut object = match now {
            Some(serde_json::Value::Object(o)) => o,
            None => serde_json::Map::new(),
            Some(_) => {
                return Err(resolve_userfile::UserFileError::Refused(format!(
                    "{} does not hold a JSON object; fix it by hand or move it away — nothing was written to it",
                    file.display()
                )))
            }
        };
        if let serde_json::Value::Object(ours) = ours {
            object.extend(ours);
        }
        Ok((Some(serde_json::Value::Object(object)), ()))
    })
}

/// The name a folder tab shows: the root's last component.
pub fn folder_name(root: &Path) -> String {
    root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| root.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(kind: ArrivalKind) -> Arrival {
        Arrival {
            root: "/w/shop".into(),
            folder: "shop".into(),
            action_id: "pa-1".into(),
            label: "AST Edit: 3 replacements in 1 file".into(),
            client: "claude-code".into(),
            kind,
        }
    }

    #[test]
    fn the_message_says_who_which_folder_and_what() {
        let (title, body) = message(&arrival(ArrivalKind::Waiting));
        assert_eq!(title, "Resolve Desk");
        assert_eq!(body, "claude-code is waiting for your review in shop: AST Edit: 3 replacements in 1 file");
        assert_eq!(
            message(&arrival(ArrivalKind::Pushed)).1,
            "claude-code sent a preview for your review in shop: AST Edit: 3 replacements in 1 file"
        );
    }

    #[test]
    fn a_push_and_the_wait_right_after_it_nudge_once() {
        let d = Deduper::default();
        let t0 = Instant::now();
        assert!(d.admit(&arrival(ArrivalKind::Pushed), t0));
        assert!(!d.admit(&arrival(ArrivalKind::Waiting), t0 + Duration::from_secs(2)), "the same action, just after");
        assert!(d.admit(&arrival(ArrivalKind::Waiting), t0 + ONE_NUDGE + Duration::from_secs(1)), "much later: again");
        let other = Arrival { action_id: "pa-2".into(), ..arrival(ArrivalKind::Pushed) };
        assert!(d.admit(&other, t0 + Duration::from_secs(3)), "another action");
    }

    #[test]
    fn the_title_counts_what_is_pending() {
        assert_eq!(title(0), "Resolve Desk");
        assert_eq!(title(3), "Resolve Desk (3 pending)");
    }

    #[test]
    fn settings_default_to_on_and_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_settings(dir.path()), DeskSettings { notifications: true, tray: true });
        save_settings(dir.path(), &DeskSettings { notifications: false, tray: true }).unwrap();
        assert_eq!(load_settings(dir.path()), DeskSettings { notifications: false, tray: true });
        std::fs::write(settings_file(dir.path()), "{\"tray\": fals").unwrap();
        assert_eq!(load_settings(dir.path()), DeskSettings { notifications: true, tray: true }, "bad: defaults");
        let err = save_settings(dir.path(), &DeskSettings { notifications: true, tray: false }).unwrap_err();
        assert!(err.to_string().contains("desk.json") && err.to_string().contains("line 1"), "{err}");
        assert_eq!(std::fs::read_to_string(settings_file(dir.path())).unwrap(), "{\"tray\": fals", "not replaced");
    }
}
