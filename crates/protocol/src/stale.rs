//! Live staleness: what changed at one file of a stale action since its preview.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::diff::FileDiff;

/// Returned by `get_since_preview`: the previewed content of `path` → the disk now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SincePreview {
    /// The path as the action names it (a rename's source or target).
    pub path: String,
    /// Why it is stale, in the words of the stale message (`content changed`, `deleted`,
    /// `now exists`, …); `null` when the file is as previewed again.
    pub why: Option<String>,
    /// Previewed → now (a create's or rename target's previewed side is empty).
    pub diff: FileDiff,
}
