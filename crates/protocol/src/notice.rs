//! Notices: banners the backend puts at the top of the window (a decision journal that
//! cannot be written, an interrupted apply that was recovered). They stay until the person
//! dismisses them, or, when not `dismissible`, until the backend removes them (the
//! condition is over).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How the banner looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

/// One banner. Returned by `list_notices` and `dismiss_notice`, and sent whole (the list) in
/// `notices-changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Notice {
    /// Stable while the condition lasts (`journal`, `recovery`); a new notice with the same
    /// id replaces the old one.
    pub id: String,
    pub level: NoticeLevel,
    /// A short heading ("Decisions are not being saved").
    pub title: String,
    /// For people: what happened, the file or folder it concerns, and what to do.
    pub message: String,
    /// False while the condition lasts (e.g. the journal is still broken): no close button.
    pub dismissible: bool,
    /// Lines to show as a list under the message, verbatim (e.g. each tool and the command it
    /// would run).
    #[serde(default)]
    pub details: Vec<String>,
    /// Buttons, in order; a click sends `notice_action { noticeId, actionId }`.
    #[serde(default)]
    pub actions: Vec<NoticeAction>,
}

/// A button of a banner. Its `id` is opaque to the UI: the backend puts in it what the person
/// saw (e.g. the fingerprint of the tools they are asked to trust), so a click acts on exactly
/// that.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NoticeAction {
    pub id: String,
    pub label: String,
    /// The suggested button (drawn as the main one).
    pub primary: bool,
}
