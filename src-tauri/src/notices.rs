//! Banners from the backend to the window (`Notice`): a decision journal that cannot be
//! opened or written (kept while it is broken), an interrupted apply that was recovered.
//! The UI reads `list_notices` once and then follows `notices-changed` (the whole list).

use std::path::Path;
use std::sync::Mutex;

use resolve_protocol::ipc::events::NOTICES_CHANGED;
use resolve_protocol::{IpcError, IpcErrorCode, Notice, NoticeLevel};

use crate::events::Emitter;

/// The id of the journal's banner (one at a time: opening or writing).
pub const JOURNAL: &str = "journal";
/// The id of the banner about an interrupted apply that was recovered.
pub const RECOVERY: &str = "recovery";
/// The id of the banner listing the external tools that could not be loaded.
pub const TOOLS: &str = "tools";

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
    });
}

/// The banners shown now, in the order they appeared.
#[derive(Default)]
pub struct Notices {
    list: Mutex<Vec<Notice>>,
    emitter: Mutex<Option<Emitter>>,
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
    }
}
