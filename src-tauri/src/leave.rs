//! Leaving a workspace while actions are pending: the person is asked first.
//!
//! Opening another workspace and closing the window never decide anything by themselves.
//! The UI asks (keep them for next time — the default —, discard them all with a reason,
//! or cancel); a discard is the desk's (`Desk::discard_all`: the `resolve` door as the
//! person, top first, so each one is journalled with the reason). Closing the window while actions are pending is held
//! back ([`crate::wiring::on_close_requested`]) and becomes a `close-requested` event; the UI answers with
//! `confirm_close`. A second close request while the question is open closes the window
//! (keeping the actions, the default), so a window whose page stopped answering can still
//! be closed.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the window may close, and whether the person is being asked.
#[derive(Default)]
pub struct CloseGuard {
    /// The person answered "close" (or nothing was pending): the next close goes through.
    confirmed: AtomicBool,
    /// A `close-requested` is waiting for the person's answer.
    asking: AtomicBool,
}

/// What to do with a close request.
#[derive(Debug, PartialEq, Eq)]
pub enum CloseVerdict {
    /// Let the window close.
    Close,
    /// Hold it and ask the person (`close-requested` with this many pending actions).
    Ask(u32),
}

impl CloseGuard {
    /// Decides about a close request while `pending` actions wait.
    pub fn on_request(&self, pending: usize) -> CloseVerdict {
        if pending == 0 || self.confirmed.load(Ordering::SeqCst) {
            return CloseVerdict::Close;
        }
        // Asked already and closed again: close, keeping the actions (the default answer).
        if self.asking.swap(true, Ordering::SeqCst) {
            return CloseVerdict::Close;
        }
        CloseVerdict::Ask(pending.min(u32::MAX as usize) as u32)
    }

    /// The person's answer: `proceed` lets the next close through; otherwise the window stays.
    pub fn answer(&self, proceed: bool) {
        self.confirmed.store(proceed, Ordering::SeqCst);
        self.asking.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_pending_closes_at_once() {
        let g = CloseGuard::default();
        assert_eq!(g.on_request(0), CloseVerdict::Close);
    }

    #[test]
    fn pending_actions_ask_once_then_a_second_close_closes() {
        let g = CloseGuard::default();
        assert_eq!(g.on_request(3), CloseVerdict::Ask(3));
        assert_eq!(g.on_request(3), CloseVerdict::Close);
    }

    #[test]
    fn cancel_asks_again_next_time_and_proceed_lets_the_close_through() {
        let g = CloseGuard::default();
        assert_eq!(g.on_request(1), CloseVerdict::Ask(1));
        g.answer(false);
        assert_eq!(g.on_request(1), CloseVerdict::Ask(1));
        g.answer(true);
        assert_eq!(g.on_request(1), CloseVerdict::Close);
    }
}
