//! Banners from the backend to the window (`Notice`): a decision journal that cannot be
//! opened or written (kept while it is broken), an interrupted apply that was recovered.
//! The UI reads `list_notices` once and then follows `notices-changed` (the whole list).

use std::path::Path;
use std::sync::Mutex;

use resolve_desk_core::{FolderTools, TrustState};
use resolve_protocol::ipc::events::NOTICES_CHANGED;
use resolve_protocol::{IpcError, IpcErrorCode, Notice, NoticeAction, NoticeLevel};

use crate::events::Emitter;

/// The id of the journal's banner (one at a time: opening or writing).
pub const JOURNAL: &str = "journal";
/// The id of the banner about an interrupted apply that was recovered.
pub const RECOVERY: &str = "recovery";
/// The id of the banner listing the external tools that could not be loaded.
pub const TOOLS: &str = "tools";
/// The id of the banner asking whether to trust the folder's own tools.
pub const TRUST: &str = "trust";
/// The prefix of the "Trust this folder's tools" button's id; the fingerprint of the tools
/// shown follows it, so a click trusts exactly what was shown.
pub const TRUST_ACTION: &str = "trust:";
/// The id of the "Not now" button (hides the banner; the tools stay untrusted).
pub const NOT_NOW: &str = "not-now";
/// The id of the banner saying the trusted folders could not be read.
pub const TRUST_FILE: &str = "trust-file";

/// Shows the external tools that could not be loaded (each with its file and what is wrong:
/// a bad manifest, a name taken — SPEC §6's message), or removes the banner when there are none.
pub fn show_tool_problems(notices: &Notices, problems: &[resolve_external::LoadProblem]) {
    if problems.is_empty() {
        notices.remove(TOOLS);
        return;
    }
    let n = problems.len();
    let list: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    notices.show(Notice {
        id: TOOLS.into(),
        level: NoticeLevel::Warning,
        title: if n == 1 { "A tool could not be loaded".into() } else { format!("{n} tools could not be loaded") },
        message: format!("{}. Fix the file and save it: the tool list updates by itself.", list.join("; ")),
        dismissible: true,
        details: Vec::new(),
        actions: Vec::new(),
    });
}

/// The banner asking the person whether to trust the folder's own tools (listed with the
/// commands they would run), or none when they may run (or there are none). A banner the
/// person put away with "Not now" stays away until the tools change.
pub fn show_trust(notices: &Notices, state: &TrustState) {
    let TrustState::Untrusted(folder) = state else {
        notices.remove(TRUST);
        notices.forget_put_away(TRUST);
        return;
    };
    let notice = untrusted_tools(folder);
    if notices.was_put_away(TRUST, &notice) {
        return;
    }
    notices.show(notice);
}

/// The folder's own tools, untrusted: what they would run, and the two choices.
pub fn untrusted_tools(folder: &FolderTools) -> Notice {
    let n = folder.tools.len();
    let which = if n == 1 { "1 tool".to_string() } else { format!("{n} tools") };
    let (title, why) = if folder.changed_since_trusted {
        (format!("This folder's tools changed since you trusted them ({which})"), "They changed since you trusted them")
    } else {
        (format!("This folder has tools of its own ({which})"), "They come with the folder")
    };
    let mut message = format!(
        "{why}: each runs the command shown, with your rights, when an agent or you call it. Until you trust them they          are not started, and a call says so. Trust them only if you trust whoever wrote {}.",
        folder.folder.display()
    );
    let mut actions = Vec::new();
    match &folder.fingerprint {
        Ok(fp) => actions.push(NoticeAction {
            id: format!("{TRUST_ACTION}{fp}"),
            label: "Trust this folder's tools".into(),
            primary: true,
        }),
        Err(e) => message.push_str(&format!(" They cannot be trusted as they are: {e}.")),
    }
    actions.push(NoticeAction { id: NOT_NOW.into(), label: "Not now".into(), primary: false });
    Notice {
        id: TRUST.into(),
        level: NoticeLevel::Warning,
        title,
        message,
        dismissible: false,
        details: folder.tools.iter().map(|t| format!("{}: {}", t.name, t.command_line())).collect(),
        actions,
    }
}

/// The trusted folders could not be read (`error` names the file and why).
pub fn trust_file_unreadable(error: &str) -> Notice {
    Notice {
        id: TRUST_FILE.into(),
        level: NoticeLevel::Warning,
        title: "Trusted folders could not be read".into(),
        message: format!("{}; this folder's own tools stay untrusted.", sentence(error)),
        dismissible: true,
        details: Vec::new(),
        actions: Vec::new(),
    }
}

/// The banners shown now, in the order they appeared.
#[derive(Default)]
pub struct Notices {
    list: Mutex<Vec<Notice>>,
    emitter: Mutex<Option<Emitter>>,
    /// Banners the person put away with "Not now", as they were: the same banner is not shown
    /// again; a changed one is.
    put_away: Mutex<Vec<Notice>>,
}

impl Notices {
    pub fn list(&self) -> Vec<Notice> {
        self.list.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// From now on, every change is sent as `notices-changed`.
    pub fn set_emitter(&self, emitter: Emitter) {
        *self.emitter.lock().unwrap_or_else(|p| p.into_inner()) = Some(emitter);
        self.changed();
    }

    /// Shows `notice`, in place of one with the same id.
    pub fn show(&self, notice: Notice) {
        {
            let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
            match list.iter_mut().find(|n| n.id == notice.id) {
                Some(n) if *n == notice => return,
                Some(n) => *n = notice,
                None => list.push(notice),
            }
        }
        self.changed();
    }

    /// Removes the banner `id` (its condition is over); nothing when it is not shown.
    pub fn remove(&self, id: &str) {
        let removed = {
            let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
            let before = list.len();
            list.retain(|n| n.id != id);
            list.len() != before
        };
        if removed {
            self.changed();
        }
    }

    /// The person put banner `id` away ("Not now"): it goes, and the same banner is not shown
    /// again (a changed one is).
    pub fn put_away(&self, id: &str) {
        let shown = self.list().into_iter().find(|n| n.id == id);
        if let Some(n) = shown {
            let mut away = self.put_away.lock().unwrap_or_else(|p| p.into_inner());
            away.retain(|a| a.id != id);
            away.push(n);
        }
        self.remove(id);
    }

    fn was_put_away(&self, id: &str, notice: &Notice) -> bool {
        self.put_away.lock().unwrap_or_else(|p| p.into_inner()).iter().any(|a| a.id == id && a == notice)
    }

    fn forget_put_away(&self, id: &str) {
        self.put_away.lock().unwrap_or_else(|p| p.into_inner()).retain(|a| a.id != id);
    }

    /// The person closed banner `id`; refused for one that stays while its condition lasts.
    pub fn dismiss(&self, id: &str) -> Result<Vec<Notice>, IpcError> {
        let dismissible = self.list().iter().find(|n| n.id == id).map(|n| n.dismissible);
        match dismissible {
            Some(true) => self.remove(id),
            Some(false) => {
                return Err(IpcError::new(
                    IpcErrorCode::InvalidParams,
                    format!("The notice `{id}` stays while its problem lasts; fix the problem it describes."),
                ))
            }
            // Already gone (dismissed twice, or its condition ended): nothing to do.
            None => {}
        }
        Ok(self.list())
    }

    fn changed(&self) {
        let emitter = self.emitter.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(emit) = emitter {
            emit(NOTICES_CHANGED, serde_json::to_value(self.list()).unwrap_or_default());
        }
    }
}

const NOT_SAVED: &str = "Decisions are not being saved";

/// The journal at `path` could not be opened (`error` names it and why).
pub fn journal_unopenable(path: &Path, error: &resolve_journal::JournalError) -> Notice {
    let todo = match error {
        // The error already says what to do.
        resolve_journal::JournalError::TooNew { .. } => String::new(),
        _ => format!(
            " Check that {} is a folder you can write to and that the disk is not full, then restart Resolve Desk.",
            path.parent().unwrap_or(path).display()
        ),
    };
    Notice {
        id: JOURNAL.into(),
        level: NoticeLevel::Error,
        title: NOT_SAVED.into(),
        message: format!(
            "{}. Decisions made now are in this session's history only and are lost when Resolve Desk closes.{todo}",
            sentence(&error.to_string())
        ),
        dismissible: false,
        details: Vec::new(),
        actions: Vec::new(),
    }
}

/// `text` with its first letter upper-case (library errors start lower-case).
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A decision could not be written to the journal at `path`.
pub fn journal_write_failed(path: &Path, error: &resolve_journal::JournalError) -> Notice {
    Notice {
        id: JOURNAL.into(),
        level: NoticeLevel::Error,
        title: NOT_SAVED.into(),
        message: format!(
            "Could not write a decision to the decision journal {}: {error}. This session's history still shows it, but it \
             is lost when Resolve Desk closes. Check that the disk is not full and that the file can be written; this \
             banner goes away when a decision is saved again.",
            path.display()
        ),
        dismissible: false,
        details: Vec::new(),
        actions: Vec::new(),
    }
}

/// The pending actions kept for the workspace could not be read (they stay kept).
pub fn restore_failed(error: &str) -> Notice {
    Notice {
        id: JOURNAL.into(),
        level: NoticeLevel::Error,
        title: "Pending actions kept for this folder could not be read".into(),
        message: format!(
            "{}. They stay kept in the decision journal; the queue starts empty. Check that the journal file can be read, \
             then open the folder again.",
            sentence(error)
        ),
        dismissible: true,
        details: Vec::new(),
        actions: Vec::new(),
    }
}

/// An apply interrupted in the workspace (a killed process) was finished when it was opened.
pub fn recovered(recovery: &resolve_engine::Recovery) -> Notice {
    Notice {
        id: RECOVERY.into(),
        level: NoticeLevel::Warning,
        title: if recovery.refused() {
            "An apply record was refused".into()
        } else {
            "An interrupted apply was recovered".into()
        },
        message: recovery.message(),
        dismissible: true,
        details: Vec::new(),
        actions: Vec::new(),
    }
}
