//! Leaving a workspace while actions are pending: nothing is decided by leaving. When the
//! person chooses to discard them all, each goes through the `resolve` door as the person,
//! top first, with their reason, so each is journalled like any discard.

use resolve_engine::{Actor, Resolve, ResolveAction, ResolveOutcome};

use crate::error::{DeskError, DeskErrorCode};
use crate::Desk;

impl Desk {
    /// Discards every pending action as the person, top first, with `reason` (passed on byte
    /// for byte, SPEC §4; only a blank one is refused, before anything is discarded; `purpose`
    /// completes the refusal: "before leaving this workspace"). Returns each discard's text.
    /// Stops at the first refusal, which is returned; the actions not yet discarded stay.
    pub async fn discard_all(&self, reason: &str, purpose: &str) -> Result<Vec<String>, DeskError> {
        let session = self.session();
        let pending = session.store().len();
        if pending > 0 && reason.trim().is_empty() {
            return Err(DeskError::new(
                DeskErrorCode::ReasonRequired,
                format!(
                    "{pending} action{} pending: give a reason to discard {} {purpose}.",
                    if pending == 1 { " is" } else { "s are" },
                    if pending == 1 { "it" } else { "them" }
                ),
            ));
        }
        let mut discarded = Vec::new();
        while let Some(top) = session.store().peek().map(|a| a.id) {
            let resolve = Resolve {
                choice: ResolveAction::Discard,
                reason: reason.to_string(),
                expected_id: Some(top),
                leave_out: None,
                review: None,
                edits: Vec::new(),
            };
            match session.resolve(Actor::Person, resolve).await {
                ResolveOutcome::Decided { text, .. } => discarded.push(text),
                ResolveOutcome::ApplyFailed { text, .. } => {
                    return Err(DeskError::new(DeskErrorCode::Engine(resolve_engine::ErrorCode::ApplyFailed), text))
                }
                ResolveOutcome::Refused { code, message } => {
                    let code = code.map(DeskErrorCode::Engine).unwrap_or(DeskErrorCode::Internal);
                    return Err(DeskError::new(code, message));
                }
            }
        }
        Ok(discarded)
    }
}
