//! What a stored preview needs from a change set: a check against the disk that writes
//! nothing (a restored action is re-checked before it is shown), and a content hash as raw
//! bytes (a rename's hash cannot be recomputed from stored bytes, so it is stored as is).

use super::{ApplyError, ChangeSet, ContentHash};
use crate::workspace::Workspace;

impl ChangeSet {
    /// Verifies every entry against the disk exactly as an apply would (hashes, targets still
    /// free, writability), without taking the workspace lock and without writing anything.
    /// `Err(ApplyError::Stale { .. })` names the files that changed since the preview.
    pub fn verify_on_disk(&self, ws: &Workspace) -> Result<(), ApplyError> {
        self.plan(ws).map(|_| ())
    }
}

impl ContentHash {
    /// The 32 bytes of the hash (to store it).
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0
    }

    /// A hash read back from storage ([`to_bytes`](Self::to_bytes)).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }
}
