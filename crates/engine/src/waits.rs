//! Agents waiting for the person, and decisions kept for agents that were not waiting.
//!
//! Under the `human` policy an agent's `resolve` proposes and waits. Real clients give up on a
//! request after about a minute, and a review can take ten, so:
//! - a wait is **bounded** ([`DEFAULT_RESOLVE_WAIT`], or the caller's
//!   [`ToolContext::wait`](crate::ToolContext)): when it ends without a decision, the agent gets
//!   a normal result saying so and calls `resolve` again; its proposal stays on the card;
//! - a decision made while none of an interested agent's calls waits (the agent pushed the
//!   action or proposed on it; after a bounded wait ended, a time-out, a cancel, a reconnect) is
//!   kept in a **mailbox** for that agent (by client name) and delivered **exactly once**: its
//!   next `resolve` returns it, its next call of another tool carries it first. The mailbox is
//!   mirrored by a persistence hook (the journal), so it survives a restart.
//!
//! A live wait registers a slot before it waits; a decision fills the slots of every live wait
//! on its action and mails the interested clients that have none, all under one lock, so a
//! decision that lands as a bounded wait ends is neither lost nor delivered twice.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::tool::ToolResult;

/// What a live wait receives when its action is decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Relayed {
    /// The person's result plus `Decided by …: applied|discarded. Reason: …`.
    pub result: ToolResult,
    /// The decision, typed (`None` for a "Not now").
    pub details: Option<crate::resolve::ResolveDetails>,
    /// The call that decided.
    pub call_id: String,
    pub actor: Option<crate::vocab::Actor>,
}

impl Relayed {
    /// The wait ended without a decision ("not decided yet"): `result` says so.
    pub(crate) fn undecided(result: ToolResult) -> Relayed {
        Relayed { result, details: None, call_id: String::new(), actor: None }
    }

    /// "Not now": the wait ends with `result` and no decision (no deciding call).
    fn snoozed(result: &ToolResult) -> Relayed {
        Relayed { result: result.clone(), details: None, call_id: String::new(), actor: None }
    }

    /// Whether a call decided (not a "Not now").
    pub(crate) fn is_decision(&self) -> bool {
        !self.call_id.is_empty()
    }
}

/// How long an agent's `resolve` waits for the person before it returns "not decided yet"
/// (below the 60 s request time-out common to MCP clients).
pub const DEFAULT_RESOLVE_WAIT: Duration = Duration::from_secs(45);

pub use crate::tool::WaitBound;

/// A decision kept for an agent that was not waiting when it was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// Unique in the workspace (`dl-<session tag>-<n>`).
    pub id: String,
    /// The agent or MCP client it is for (by name).
    pub client: String,
    pub action_id: String,
    pub label: String,
    /// What a live wait would have returned: the person's result plus
    /// `Decided by the person: applied|discarded. Reason: …`, with the same details.
    pub result: ToolResult,
    /// The call that decided (the transcript's relay points at it).
    pub call_id: String,
    pub decided_at: DateTime<Utc>,
}

impl Delivery {
    /// The decision it carries, read from its kept form (a delivery outlives the process in
    /// the journal, as the result an agent will see).
    pub fn decision(&self) -> Option<crate::resolve::ResolveDetails> {
        crate::resolve::ResolveDetails::of_result(&self.result)
    }
}

/// A change of the mailbox, for its mirror (the journal).
#[derive(Debug, Clone)]
pub enum MailboxChange {
    /// Kept for its client.
    Kept(Box<Delivery>),
    /// Delivered (or dropped): forget it.
    Delivered(String),
}

/// The mailbox's persistence hook; called under the mailbox's lock, so it must only queue.
pub type MailboxPersistFn = Box<dyn Fn(MailboxChange) + Send + Sync>;

struct LiveWait {
    id: u64,
    action_id: String,
    client: Option<String>,
    slot: Option<oneshot::Sender<Relayed>>,
}

#[derive(Default)]
struct Inner {
    live: Vec<LiveWait>,
    mailbox: Vec<Delivery>,
    next_wait: u64,
    next_delivery: u64,
}

/// The session's waits and mailbox.
pub struct Waits {
    inner: Mutex<Inner>,
    persist: Mutex<Option<MailboxPersistFn>>,
    tag: String,
    bound: Mutex<Duration>,
}

/// A live wait's registration: dropping it deregisters.
pub(crate) struct Registration {
    waits: Arc<Waits>,
    id: u64,
    pub receiver: oneshot::Receiver<Relayed>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.waits.lock().live.retain(|w| w.id != self.id);
    }
}

impl Registration {
    /// Ends the wait without a decision: deregisters, and returns the decision if one filled
    /// the slot at the same moment (it is then this wait's to deliver).
    pub(crate) fn end(mut self) -> Option<Relayed> {
        self.waits.lock().live.retain(|w| w.id != self.id);
        self.receiver.try_recv().ok()
    }
}

impl Waits {
    pub(crate) fn new(tag: String) -> Arc<Waits> {
        Arc::new(Waits {
            inner: Mutex::new(Inner::default()),
            persist: Mutex::new(None),
            tag,
            bound: Mutex::new(DEFAULT_RESOLVE_WAIT),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session's bound on a wait (see [`WaitBound::SessionDefault`]).
    pub fn bound(&self) -> Duration {
        *self.bound.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_bound(&self, bound: Duration) {
        *self.bound.lock().unwrap_or_else(|p| p.into_inner()) = bound;
    }

    /// How long a call with `bound` waits (`None`: until decided).
    pub(crate) fn effective(&self, bound: WaitBound) -> Option<Duration> {
        match bound {
            WaitBound::SessionDefault => Some(self.bound()),
            WaitBound::Unbounded => None,
            WaitBound::For(d) => Some(d),
        }
    }

    /// Registers a live wait of `client` on `action_id` (before proposing, so no decision
    /// slips in between).
    pub(crate) fn register(self: &Arc<Self>, action_id: &str, client: Option<String>) -> Registration {
        let (tx, rx) = oneshot::channel();
        let mut inner = self.lock();
        inner.next_wait += 1;
        let id = inner.next_wait;
        inner.live.push(LiveWait { id, action_id: action_id.to_string(), client, slot: Some(tx) });
        Registration { waits: self.clone(), id, receiver: rx }
    }

    /// Whether a call of `client` waits on `action_id` now.
    pub fn is_waiting(&self, action_id: &str) -> bool {
        self.lock().live.iter().any(|w| w.action_id == action_id)
    }

    /// A decision on `action_id`: every live wait on it gets `relayed`; each client in
    /// `interested` without a live wait on it gets it in its mailbox. Returns the deliveries
    /// kept.
    pub(crate) fn decided(
        &self,
        action_id: &str,
        label: &str,
        relayed: &Relayed,
        interested: &[String],
    ) -> Vec<Delivery> {
        let mut inner = self.lock();
        let mut served: Vec<Option<String>> = Vec::new();
        for w in inner.live.iter_mut().filter(|w| w.action_id == action_id) {
            if let Some(slot) = w.slot.take() {
                if slot.send(relayed.clone()).is_ok() {
                    served.push(w.client.clone());
                }
            }
        }
        let mut kept = Vec::new();
        for client in interested {
            if served.iter().any(|s| s.as_deref() == Some(client.as_str()))
                || kept.iter().any(|d: &Delivery| &d.client == client)
            {
                continue;
            }
            inner.next_delivery += 1;
            let delivery = Delivery {
                id: format!("dl-{}-{}", self.tag, inner.next_delivery),
                client: client.clone(),
                action_id: action_id.to_string(),
                label: label.to_string(),
                result: relayed.result.clone(),
                call_id: relayed.call_id.clone(),
                decided_at: Utc::now(),
            };
            inner.mailbox.push(delivery.clone());
            self.persist(MailboxChange::Kept(Box::new(delivery.clone())));
            kept.push(delivery);
        }
        kept
    }

    /// "Not now": every call waiting on `action_id` returns `result` (the person will review
    /// it later; nothing was applied) without a decision; the action stays pending, and a
    /// later decision is kept for the agents as any other. Returns how many calls were waiting.
    pub(crate) fn snooze(&self, action_id: &str, result: &ToolResult) -> usize {
        let mut inner = self.lock();
        let mut n = 0;
        for w in inner.live.iter_mut().filter(|w| w.action_id == action_id) {
            if let Some(slot) = w.slot.take() {
                if slot.send(Relayed::snoozed(result)).is_ok() {
                    n += 1;
                }
            }
        }
        n
    }

    /// Takes every decision kept for `client`, oldest first (delivered: forgotten).
    pub fn take(&self, client: &str) -> Vec<Delivery> {
        let mut inner = self.lock();
        let (mine, rest): (Vec<Delivery>, Vec<Delivery>) =
            std::mem::take(&mut inner.mailbox).into_iter().partition(|d| d.client == client);
        inner.mailbox = rest;
        for d in &mine {
            self.persist(MailboxChange::Delivered(d.id.clone()));
        }
        mine
    }

    /// Takes the decisions kept for `client` on `action_id` (delivered: forgotten); the
    /// client's others stay kept.
    pub fn take_action(&self, client: &str, action_id: &str) -> Vec<Delivery> {
        let mut inner = self.lock();
        let (mine, rest): (Vec<Delivery>, Vec<Delivery>) = std::mem::take(&mut inner.mailbox)
            .into_iter()
            .partition(|d| d.client == client && d.action_id == action_id);
        inner.mailbox = rest;
        for d in &mine {
            self.persist(MailboxChange::Delivered(d.id.clone()));
        }
        mine
    }

    /// Decisions kept and not yet delivered (every client), oldest first.
    pub fn mailbox(&self) -> Vec<Delivery> {
        self.lock().mailbox.clone()
    }

    /// Puts back deliveries kept by an earlier session (their ids kept).
    pub fn restore(&self, deliveries: Vec<Delivery>) {
        let mut inner = self.lock();
        for d in deliveries {
            if !inner.mailbox.iter().any(|m| m.id == d.id) {
                inner.mailbox.push(d);
            }
        }
        inner.mailbox.sort_by_key(|d| d.decided_at);
    }

    /// Mirrors every later change of the mailbox (the journal).
    pub fn set_persistence(&self, persist: MailboxPersistFn) {
        *self.persist.lock().unwrap_or_else(|p| p.into_inner()) = Some(persist);
    }

    fn persist(&self, change: MailboxChange) {
        if let Some(p) = self.persist.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            p(change);
        }
    }
}

/// The text that opens a delivered decision in another tool's result.
pub fn delivery_preface(deliveries: &[Delivery]) -> String {
    let mut text = String::from("Decisions made on your earlier previews while you were not waiting:");
    for d in deliveries {
        text.push_str(&format!(
            "\n- {} (\"{}\"): {}",
            d.action_id,
            d.label,
            d.result.text_content().replace('\n', " ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relayed(text: &str) -> Relayed {
        Relayed {
            result: ToolResult::text(text),
            details: None,
            call_id: "call-9".into(),
            actor: Some(crate::vocab::Actor::Person),
        }
    }

    #[test]
    fn a_decision_goes_to_the_live_wait_and_to_the_mailbox_of_interested_clients_without_one() {
        let waits = Waits::new("t".into());
        let mut live = waits.register("pa-1", Some("claude".into()));
        let relayed = relayed("Applied. Decided by the person: applied. Reason: ok");
        let kept = waits.decided("pa-1", "AST Edit", &relayed, &["claude".into(), "codex".into()]);
        assert_eq!(kept.len(), 1, "claude was waiting, codex was not");
        assert_eq!(kept[0].client, "codex");
        assert_eq!(live.receiver.try_recv().unwrap(), relayed);
        assert!(waits.take("claude").is_empty());
        assert_eq!(waits.take("codex").len(), 1);
        assert!(waits.take("codex").is_empty(), "delivered exactly once");
    }

    #[test]
    fn a_decision_that_lands_as_a_wait_ends_is_the_waits_to_deliver_never_lost() {
        let waits = Waits::new("t".into());
        let reg = waits.register("pa-1", Some("claude".into()));
        let relayed = relayed("decided");
        let kept = waits.decided("pa-1", "x", &relayed, &["claude".into()]);
        assert!(kept.is_empty(), "the live wait had it");
        assert_eq!(reg.end(), Some(relayed), "the ending wait returns it");
        assert!(waits.take("claude").is_empty());
    }

    #[test]
    fn a_wait_that_ended_first_leaves_the_decision_in_the_mailbox() {
        let waits = Waits::new("t".into());
        let reg = waits.register("pa-1", Some("claude".into()));
        assert_eq!(reg.end(), None);
        assert!(!waits.is_waiting("pa-1"));
        let kept = waits.decided("pa-1", "x", &relayed("decided"), &["claude".into()]);
        assert_eq!(kept.len(), 1);
        let changes = Arc::new(Mutex::new(Vec::new()));
        let c = changes.clone();
        waits.set_persistence(Box::new(move |ch| c.lock().unwrap().push(format!("{ch:?}"))));
        assert_eq!(waits.take("claude").len(), 1);
        assert!(changes.lock().unwrap()[0].starts_with("Delivered"), "the mirror forgets it");
    }
}
