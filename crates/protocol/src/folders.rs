//! One desk, many folders: the folders the window has open (each with its own session, stack,
//! policy, journal history and lock) and the inbox over all of them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One open folder, as the folder tabs show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FolderInfo {
    /// Absolute path of the workspace root (the folder's key in every folder command).
    pub root: String,
    /// The root's last component (`shop`), or the whole root when it has none.
    pub name: String,
    /// The built-in demo's temporary folder.
    pub is_demo: bool,
    /// How many actions are pending on its stack.
    pub pending: u32,
    /// Whether an agent waits for the person's decision on its top action now.
    pub waiting: bool,
    /// The folder the window shows (every other command acts on it).
    pub active: bool,
}

/// Returned by `list_folders`, `select_folder` and `close_folder`: every open folder, in the
/// order they were opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FolderList {
    pub folders: Vec<FolderInfo>,
    /// The root of the folder the window shows.
    pub active: String,
}

/// Payload of the `folders-changed` event: a folder was opened, closed or shown, or the stack
/// of one changed (its pending count or agent-waiting mark may differ); the UI reads
/// `list_folders` again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FoldersChanged {
    /// The root of the folder that changed (its stack), or of the one shown now (a folder
    /// opened, closed or shown).
    pub root: String,
}

/// One pending action in the inbox: every open folder's pending actions in one list, newest
/// push first. Only each folder's top action can be resolved (LIFO); `position` says where it
/// waits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InboxItem {
    /// The folder's root (select it with `select_folder` to decide the action there).
    pub root: String,
    /// The folder's name (`shop`).
    pub folder: String,
    /// 1 for the top of the folder's stack (the only one that can be resolved now), 2 for the
    /// one below it, …
    pub position: u32,
    /// How many actions are pending in that folder.
    pub of: u32,
    /// The action, as its queue card shows it (who pushed it, an agent waiting on it, its size
    /// in files and lines, when it was pushed).
    pub action: crate::ActionSummary,
}

/// What the desk does to reach the person: desktop notifications when an agent pushes or
/// waits while the window is not focused, and a tray icon with the pending count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeskSettings {
    /// Desktop notifications (who, which folder, what; never file contents).
    pub notifications: bool,
    /// The tray (status) icon with the pending count, where the desktop has one.
    pub tray: bool,
}

/// Payload of the `reveal-action` event: the person clicked a notification; the window shows
/// this folder (already selected in the backend) with this action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RevealAction {
    pub root: String,
    pub action_id: String,
}
