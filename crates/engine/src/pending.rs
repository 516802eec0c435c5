//! Pending actions and the LIFO stack that holds them.
//!
//! Invariants:
//! - ids are unique within a store and never reused;
//! - `list()` is top first; only the top can be resolved (the `resolve` tool enforces it);
//! - every change bumps `revision` by one and is broadcast as a [`StoreEvent`];
//! - an action leaves the stack only by `pop`, `clear`, or a successful resolve: a failed
//!   apply keeps it, with its status set to `stale` or `failed`;
//! - a push past the store's [`PendingLimits`] (count, or bytes its change sets hold) is
//!   refused and changes nothing; a restore is never refused by them.

use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::changeset::{ActionCounts, ChangeSet};
use crate::limits::PendingLimits;
use crate::review::{Comment, CommentError};
pub use crate::rounds::{EarlierComment, ReviewState, Round};
use crate::tool::{ToolError, ToolResult};
use crate::vocab::ToolCall;
pub use crate::vocab::{ActionId, ActionKind, ActionStatus, Proposal, RenameRow, RenameStatus};

/// Runs when the action is applied; gets the reason verbatim.
pub type ApplyFn = Box<dyn Fn(String) -> BoxFuture<'static, Result<ToolResult, ToolError>> + Send + Sync>;
/// Runs when the action is discarded; `Ok(None)` keeps the default discard message.
pub type RejectFn = Box<dyn Fn(String) -> BoxFuture<'static, Result<Option<ToolResult>, ToolError>> + Send + Sync>;

/// A previewed change waiting for a decision. Built by the custom tool API
/// ([`crate::CustomToolApi::push_pending_action`]); held by the store behind an `Arc`.
pub struct PendingAction {
    pub id: ActionId,
    pub label: String,
    pub source_tool_name: String,
    pub details: Option<Value>,
    pub created_at: DateTime<Utc>,
    /// The tool call that produced it, so "run the preview again" can repeat it.
    pub origin: Option<ToolCall>,
    /// The agent or client whose call pushed it (`ToolContext::client`), if one was named.
    pub pushed_by: Option<String>,
    /// The change set behind it, when it has one (files and diffs are read from it lazily).
    pub change_set: Option<Arc<ChangeSet>>,
    /// The old → new table of a rename preview (every selected entry, renamed or not).
    pub renames: Option<Arc<[RenameRow]>>,
    pub(crate) apply: ApplyFn,
    pub(crate) reject: Option<RejectFn>,
    /// What rebuilds `apply`/`reject` after a restart (a change set's action); `None` for a
    /// closure, which comes back orphaned (see [`crate::stored`]).
    pub(crate) recipe: Option<crate::stored::Recipe>,
}

impl std::fmt::Debug for PendingAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingAction")
            .field("id", &self.id)
            .field("label", &self.label)
            .field("source_tool_name", &self.source_tool_name)
            .finish_non_exhaustive()
    }
}

impl PendingAction {
    /// The agent that writes this change itself once approved (an outside agent's gated
    /// edit), if it is one; see [`crate::CustomToolPendingAction::written_by_agent`].
    pub fn written_by(&self) -> Option<&str> {
        self.recipe.as_ref()?.written_by.as_deref()
    }

    /// See [`ActionKind`]: a rename table wins over the change set that carries it out.
    pub fn kind(&self) -> ActionKind {
        if self.renames.is_some() {
            ActionKind::Rename
        } else if self.change_set.is_some() {
            ActionKind::ChangeSet
        } else {
            ActionKind::Custom
        }
    }

    /// The totals a queue card shows: a rename preview counts the entries it renames (as
    /// files and as renames); a change set its files, lines and renames; a custom action
    /// nothing.
    pub fn counts(&self) -> ActionCounts {
        match (&self.renames, &self.change_set) {
            (Some(rows), _) => {
                let n = rows.iter().filter(|r| r.status == RenameStatus::Rename).count().min(u32::MAX as usize) as u32;
                ActionCounts { files: n, added: 0, removed: 0, renames: n }
            }
            (None, Some(cs)) => cs.counts(),
            (None, None) => ActionCounts::default(),
        }
    }
}

impl PendingAction {
    /// What the card warns about: the hidden and look-alike characters the action writes (a
    /// change set's added lines and new names; a rename table's new names), in how many files.
    pub fn hidden(&self) -> crate::hidden::ActionFindings {
        match (&self.renames, &self.change_set) {
            (Some(rows), _) => {
                let mut out = crate::hidden::ActionFindings::default();
                for r in rows.iter().filter(|r| r.status == RenameStatus::Rename) {
                    let found = crate::hidden::scan_line(&r.to, crate::hidden::Place::Elsewhere);
                    if !found.is_empty() {
                        out.tally.add_findings(&found);
                        out.files = out.files.saturating_add(1);
                    }
                }
                out
            }
            (None, Some(cs)) => cs.hidden(),
            (None, None) => crate::hidden::ActionFindings::default(),
        }
    }
}

/// A snapshot of one action, safe to hand out and serialise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionInfo {
    pub id: ActionId,
    pub label: String,
    pub source_tool_name: String,
    pub details: Option<Value>,
    pub created_at: DateTime<Utc>,
    pub status: ActionStatus,
    pub origin: Option<ToolCall>,
    pub pushed_by: Option<String>,
    /// What an agent proposed for it while waiting for the person (`human` policy).
    pub proposal: Option<Proposal>,
    pub has_change_set: bool,
    pub kind: ActionKind,
    pub counts: ActionCounts,
    /// The hidden and look-alike characters it writes ([`PendingAction::hidden`]).
    pub hidden: crate::hidden::ActionFindings,
    /// The person's comments so far (drafts until the decision), in file order.
    pub comments: Vec<Comment>,
    /// The next round of a review: set when the agent that pushed it had its previous preview
    /// discarded with "Request changes" ([`Round`]).
    pub round: Option<Round>,
    /// The files the person marked viewed (at the proposal they viewed), in path order.
    pub viewed: Vec<String>,
}

/// What changed in the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoreChange {
    Pushed {
        id: ActionId,
    },
    /// Removed by `pop`.
    Removed {
        id: ActionId,
    },
    /// Removed by a resolve's decision (a successful apply, or a discard); the decision is
    /// published to waiting agents right after this event.
    Decided {
        id: ActionId,
    },
    StatusChanged {
        id: ActionId,
    },
    /// An agent proposed a decision for it, or withdrew its proposal.
    ProposalChanged {
        id: ActionId,
    },
    /// A comment on it was added, edited or deleted, or a file's viewed mark changed.
    CommentsChanged {
        id: ActionId,
    },
    Cleared {
        count: usize,
    },
    /// Actions stored by an earlier session of the workspace were put back (bottom first,
    /// below anything pushed since); see [`crate::Session::restore`]. Nothing was applied.
    Restored {
        ids: Vec<ActionId>,
    },
}

/// Broadcast after every change; `revision` increases by one each time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoreEvent {
    pub revision: u64,
    pub change: StoreChange,
}

struct Entry {
    action: Arc<PendingAction>,
    status: ActionStatus,
    proposal: Option<Proposal>,
    /// What its change set holds ([`ChangeSet::held_bytes`]; 0 without one).
    bytes: u64,
    /// The person's comments (drafts until the decision), in file order.
    comments: Vec<Comment>,
    /// The number of the next comment id (`c<n>`); ids are never reused.
    next_comment: u64,
    /// Its round and viewed marks ([`ReviewState`]).
    review: ReviewState,
}

impl Entry {
    fn new(action: Arc<PendingAction>, status: ActionStatus) -> Entry {
        let bytes = action.change_set.as_ref().map_or(0, |cs| cs.held_bytes());
        Entry {
            action,
            status,
            proposal: None,
            bytes,
            comments: Vec::new(),
            next_comment: 1,
            review: ReviewState::default(),
        }
    }

    /// Puts back comments kept from an earlier session; new ids continue after theirs.
    fn with_comments(mut self, comments: Vec<Comment>) -> Entry {
        let highest = comments.iter().filter_map(|c| c.id.strip_prefix('c')?.parse::<u64>().ok()).max();
        self.next_comment = highest.map_or(1, |n| n.saturating_add(1));
        self.comments = comments;
        self
    }
}

struct Inner {
    /// Bottom first; the top is the last element.
    stack: Vec<Entry>,
    revision: u64,
    next_id: u64,
    /// Told about every push and every removal, in order (see [`crate::stored::Persist`]).
    persist: Option<crate::stored::PersistFn>,
    limits: PendingLimits,
    /// Per agent (its client name; `""` for none): its last preview discarded with "Request
    /// changes", until it pushes the next round. Kept for this session only.
    rounds: std::collections::HashMap<String, crate::rounds::PriorRound>,
}

impl Inner {
    /// The bytes the change sets on the stack hold together.
    fn held_bytes(&self) -> u64 {
        self.stack.iter().map(|e| e.bytes).sum()
    }
}

/// The session's LIFO stack of pending actions.
pub struct PendingActionStore {
    inner: Mutex<Inner>,
    id_prefix: String,
    events: broadcast::Sender<StoreEvent>,
}

impl Default for PendingActionStore {
    fn default() -> Self {
        Self::new()
    }
}

impl PendingActionStore {
    /// A store whose ids look like `pa-<tag>-<n>`, the tag making them unlikely to collide
    /// with another session's (a stale window cannot resolve another session's action).
    pub fn new() -> Self {
        let tag =
            blake3::hash(format!("{:?}{:?}", std::time::SystemTime::now(), std::thread::current().id()).as_bytes())
                .to_hex()[..6]
                .to_string();
        Self::with_id_prefix(format!("pa-{tag}-"))
    }

    /// A store with a fixed id prefix (deterministic ids for tests and scripts). Bounded by
    /// [`PendingLimits::from_env_or_default`] (see [`set_limits`](Self::set_limits)).
    pub fn with_id_prefix(prefix: impl Into<String>) -> Self {
        let (events, _) = broadcast::channel(1024);
        Self {
            inner: Mutex::new(Inner {
                stack: Vec::new(),
                revision: 0,
                next_id: 1,
                persist: None,
                limits: PendingLimits::from_env_or_default(),
                rounds: std::collections::HashMap::new(),
            }),
            id_prefix: prefix.into(),
            events,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding this lock cannot leave the Vec half-modified (every mutation
        // is a single push/remove), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn publish(&self, inner: &mut Inner, change: StoreChange) {
        inner.revision += 1;
        // No receiver is fine: nobody is watching.
        let _ = self.events.send(StoreEvent { revision: inner.revision, change });
    }

    /// The bounds a push must stay within.
    pub fn limits(&self) -> PendingLimits {
        self.lock().limits
    }

    /// Sets the bounds later pushes must stay within (actions already on the stack stay,
    /// even past them).
    pub fn set_limits(&self, limits: PendingLimits) {
        self.lock().limits = limits;
    }

    /// The bytes the change sets of the actions on the stack hold together (what
    /// [`PendingLimits::max_bytes`] bounds).
    pub fn held_bytes(&self) -> u64 {
        self.lock().held_bytes()
    }

    /// Builds an action from its parts and puts it on top. Returns its id; a push past the
    /// store's [`PendingLimits`] is refused (`ToolError::Failed` naming the bound, its setting
    /// and what to do) and changes nothing.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push_parts(
        &self,
        label: String,
        source_tool_name: String,
        details: Option<Value>,
        apply: ApplyFn,
        reject: Option<RejectFn>,
        change_set: Option<Arc<ChangeSet>>,
        renames: Option<Arc<[RenameRow]>>,
        origin: Option<ToolCall>,
        pushed_by: Option<String>,
        recipe: Option<crate::stored::Recipe>,
    ) -> Result<ActionId, ToolError> {
        if label.trim().is_empty() {
            return Err(ToolError::InvalidParams(
                "A pending action needs a non-empty `label` (a short summary shown in the queue).".into(),
            ));
        }
        let bytes = change_set.as_ref().map_or(0, |cs| cs.held_bytes());
        // The same agent answering a "Request changes": the next round of that review. Its
        // earlier comments are placed (files diffed) outside the store's lock.
        let agent = pushed_by.clone().unwrap_or_default();
        let prior = self.lock().rounds.remove(&agent);
        let review = match &prior {
            Some(prior) => crate::rounds::next_round(prior.clone(), change_set.as_deref()),
            None => ReviewState::default(),
        };
        let mut inner = self.lock();
        if let Some(refusal) = inner.limits.refusal(inner.stack.len(), inner.held_bytes(), bytes) {
            // Refused: the review waits for the agent's next preview still.
            if let Some(prior) = prior {
                inner.rounds.entry(agent).or_insert(prior);
            }
            return Err(ToolError::Failed(refusal));
        }
        let id = format!("{}{}", self.id_prefix, inner.next_id);
        inner.next_id += 1;
        let action = PendingAction {
            id: id.clone(),
            label,
            source_tool_name,
            details,
            created_at: Utc::now(),
            origin,
            pushed_by,
            change_set,
            renames,
            apply,
            reject,
            recipe,
        };
        let action = Arc::new(action);
        if let Some(persist) = &inner.persist {
            let mut stored = action.to_stored();
            stored.review = review.clone();
            persist(crate::stored::Persist::Save(stored));
            if let Some(prior) = &prior {
                // This push is the next round: the previous proposal is no longer kept for it.
                persist(crate::stored::Persist::RoundTaken { id: prior.id.clone() });
            }
        }
        let mut entry = Entry::new(action, ActionStatus::Pending);
        entry.review = review;
        inner.stack.push(entry);
        self.publish(&mut inner, StoreChange::Pushed { id: id.clone() });
        Ok(id)
    }

    /// The top action, without removing it.
    pub fn peek(&self) -> Option<ActionInfo> {
        let inner = self.lock();
        inner.stack.last().map(info)
    }

    /// The top action itself (for resolving it).
    pub fn top(&self) -> Option<Arc<PendingAction>> {
        self.lock().stack.last().map(|e| e.action.clone())
    }

    /// Removes and returns the top action.
    pub fn pop(&self) -> Option<Arc<PendingAction>> {
        let mut inner = self.lock();
        let entry = inner.stack.pop()?;
        if let Some(persist) = &inner.persist {
            persist(crate::stored::Persist::Remove { id: entry.action.id.clone() });
        }
        self.publish(&mut inner, StoreChange::Removed { id: entry.action.id.clone() });
        Some(entry.action)
    }

    /// Removes a decided action wherever it is (after a successful resolve, in case something
    /// was pushed while its apply ran).
    pub(crate) fn remove_decided(&self, id: &str) -> Option<Arc<PendingAction>> {
        let mut inner = self.lock();
        let pos = inner.stack.iter().position(|e| e.action.id == id)?;
        let entry = inner.stack.remove(pos);
        if let Some(persist) = &inner.persist {
            persist(crate::stored::Persist::Remove { id: id.to_string() });
        }
        self.publish(&mut inner, StoreChange::Decided { id: id.to_string() });
        Some(entry.action)
    }

    /// Sets the status of an action; false when it is no longer on the stack.
    pub fn set_status(&self, id: &str, status: ActionStatus) -> bool {
        let mut inner = self.lock();
        let Some(entry) = inner.stack.iter_mut().find(|e| e.action.id == id) else {
            return false;
        };
        entry.status = status;
        self.publish(&mut inner, StoreChange::StatusChanged { id: id.to_string() });
        true
    }

    /// Sets (or, with `None`, withdraws) an agent's proposal for an action; false when the
    /// action is no longer on the stack.
    pub fn set_proposal(&self, id: &str, proposal: Option<Proposal>) -> bool {
        let mut inner = self.lock();
        let Some(entry) = inner.stack.iter_mut().find(|e| e.action.id == id) else {
            return false;
        };
        if entry.proposal == proposal {
            return true;
        }
        entry.proposal = proposal;
        self.publish(&mut inner, StoreChange::ProposalChanged { id: id.to_string() });
        true
    }

    /// Mirrors every later push ([`Persist::Save`](crate::stored::Persist::Save)) and every
    /// removal by a decision or `pop` ([`Persist::Remove`](crate::stored::Persist::Remove))
    /// to `persist`, called in store order while the store is locked (so it must only queue,
    /// never wait). `clear` and dropping the store are not removals: stored actions stay
    /// stored. Restored actions are not saved again.
    /// The comments kept with action `id`, in file order (empty when it has none or is gone).
    pub fn comments(&self, id: &str) -> Vec<Comment> {
        self.lock().stack.iter().find(|e| e.action.id == id).map(|e| e.comments.clone()).unwrap_or_default()
    }

    /// Changes the comments of action `id` with `change` (given the list and the next free id,
    /// it edits the list in place and returns what to answer). On success the list is put in
    /// file order, kept (persistence hook) and announced (`CommentsChanged`); on error nothing
    /// changes.
    pub(crate) fn change_comments<T>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Vec<Comment>, &mut u64) -> Result<T, CommentError>,
    ) -> Result<T, CommentError> {
        let mut inner = self.lock();
        let Some(entry) = inner.stack.iter_mut().find(|e| e.action.id == id) else {
            return Err(CommentError::NoAction { id: id.to_string() });
        };
        let mut comments = entry.comments.clone();
        let mut next = entry.next_comment;
        let out = change(&mut comments, &mut next)?;
        crate::review::sort_in_file_order(&mut comments, entry.action.change_set.as_deref());
        entry.comments = comments.clone();
        entry.next_comment = next;
        if let Some(persist) = &inner.persist {
            persist(crate::stored::Persist::Comments { id: id.to_string(), comments });
        }
        self.publish(&mut inner, StoreChange::CommentsChanged { id: id.to_string() });
        Ok(out)
    }

    pub fn set_persistence(&self, persist: crate::stored::PersistFn) {
        self.lock().persist = Some(persist);
    }

    /// Puts back actions of an earlier session, bottom first, below anything on the stack
    /// (they are older). An id already on the stack is refused (`Err` with the id), never
    /// replaced; later pushes never reuse a restored id. Publishes one `Restored` event.
    pub(crate) fn restore_entries(
        &self,
        actions: Vec<(PendingAction, ActionStatus, Vec<Comment>, ReviewState)>,
    ) -> Vec<Result<ActionId, ActionId>> {
        let mut inner = self.lock();
        let mut out = Vec::with_capacity(actions.len());
        let mut entries = Vec::new();
        for (action, status, comments, review) in actions {
            let id = action.id.clone();
            let taken = inner.stack.iter().chain(entries.iter()).any(|e: &Entry| e.action.id == id);
            if taken {
                out.push(Err(id));
                continue;
            }
            if let Some(n) = id.strip_prefix(self.id_prefix.as_str()).and_then(|n| n.parse::<u64>().ok()) {
                inner.next_id = inner.next_id.max(n.saturating_add(1));
            }
            // Never refused by the limits: these were pending already.
            let mut entry = Entry::new(Arc::new(action), status).with_comments(comments);
            entry.review = review;
            entries.push(entry);
            out.push(Ok(id));
        }
        let ids: Vec<ActionId> = entries.iter().map(|e| e.action.id.clone()).collect();
        if !ids.is_empty() {
            inner.stack.splice(0..0, entries);
            self.publish(&mut inner, StoreChange::Restored { ids });
        }
        out
    }

    /// Removes every action without running any `apply` or `reject`. Returns how many.
    pub fn clear(&self) -> usize {
        let mut inner = self.lock();
        let count = inner.stack.len();
        inner.stack.clear();
        self.publish(&mut inner, StoreChange::Cleared { count });
        count
    }

    pub fn has_pending(&self) -> bool {
        !self.lock().stack.is_empty()
    }

    pub fn len(&self) -> usize {
        self.lock().stack.len()
    }

    pub fn is_empty(&self) -> bool {
        !self.has_pending()
    }

    /// All actions, top first.
    pub fn list(&self) -> Vec<ActionInfo> {
        self.lock().stack.iter().rev().map(info).collect()
    }

    /// One action by id, wherever it is in the stack.
    pub fn get(&self, id: &str) -> Option<Arc<PendingAction>> {
        self.lock().stack.iter().find(|e| e.action.id == id).map(|e| e.action.clone())
    }

    /// The snapshot of one action by id.
    pub fn info(&self, id: &str) -> Option<ActionInfo> {
        self.lock().stack.iter().find(|e| e.action.id == id).map(info)
    }

    /// The revision: 0 for a new store, +1 per change.
    pub fn revision(&self) -> u64 {
        self.lock().revision
    }

    /// Follows every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<StoreEvent> {
        self.events.subscribe()
    }

    /// Sets the status of an action only if it is still `from` (a re-check never overwrites
    /// a status a resolve set meanwhile); false when it was not, or the action is gone.
    pub fn replace_status(&self, id: &str, from: &ActionStatus, to: ActionStatus) -> bool {
        let mut inner = self.lock();
        let Some(entry) = inner.stack.iter_mut().find(|e| e.action.id == id) else {
            return false;
        };
        if entry.status != *from {
            return false;
        }
        entry.status = to;
        self.publish(&mut inner, StoreChange::StatusChanged { id: id.to_string() });
        true
    }
}

impl PendingActionStore {
    /// Keeps pending action `id`, which is being discarded with "Request changes" with
    /// `comments`, so that the next preview its agent pushes is the next round of the review
    /// ([`ActionInfo::round`]); that round shows these comments, and the earlier rounds'
    /// comments still on this round's lines, beside their lines.
    pub fn remember_round(&self, id: &str, comments: Vec<Comment>) {
        let mut inner = self.lock();
        let Some(entry) = inner.stack.iter().find(|e| e.action.id == id) else { return };
        let round = entry.review.round.as_ref();
        let number = round.map_or(1, |r| r.number);
        // The comments still on this round's lines from earlier rounds go on, then this one's.
        let mut carried: Vec<(u32, Comment)> = round
            .map(|r| {
                r.earlier
                    .iter()
                    .filter_map(|e| {
                        let (start_line, end_line) = e.now_lines?;
                        Some((e.round, Comment { start_line, end_line, ..e.comment.clone() }))
                    })
                    .collect()
            })
            .unwrap_or_default();
        carried.extend(comments.into_iter().map(|c| (number, c)));
        let prior = crate::rounds::PriorRound {
            number,
            first_label: round.map_or_else(|| entry.action.label.clone(), |r| r.first_label.clone()),
            id: id.to_string(),
            change_set: entry.action.change_set.clone(),
            comments: carried,
            viewed: entry.review.viewed.clone(),
        };
        let agent = entry.action.pushed_by.clone().unwrap_or_default();
        if let Some(persist) = &inner.persist {
            persist(crate::stored::Persist::Round { id: id.to_string(), round: prior.stored(&agent) });
        }
        if let Some(replaced) = inner.rounds.insert(agent, prior) {
            if let Some(persist) = &inner.persist {
                persist(crate::stored::Persist::RoundTaken { id: replaced.id });
            }
        }
    }

    /// Puts back a prior round an earlier session kept (`Session::restore_rounds`), unless
    /// its agent has a newer one already. Not saved again (it is stored).
    pub(crate) fn restore_round(&self, prior: crate::rounds::PriorRound, agent: String) -> bool {
        let mut inner = self.lock();
        // Its id stays taken (its rows are kept under it) even when it is not put back.
        if let Some(n) = prior.id.strip_prefix(self.id_prefix.as_str()).and_then(|n| n.parse::<u64>().ok()) {
            inner.next_id = inner.next_id.max(n.saturating_add(1));
        }
        if inner.rounds.contains_key(&agent) {
            return false;
        }
        inner.rounds.insert(agent, prior);
        true
    }

    /// What changed in `path` since the previous round of the review: the diff from the text
    /// the previous round proposed for it (empty when it did not touch it) to the text this
    /// action proposes (empty for a deletion); no change for a file proposed as before. `None`
    /// when `id` is no round, or not pending, or `path` is not one of its files.
    pub fn round_diff(&self, id: &str, path: &str, context: usize) -> Option<crate::diff::FileDiff> {
        let (before, cs) = {
            let inner = self.lock();
            let entry = inner.stack.iter().find(|e| e.action.id == id)?;
            let round = entry.review.round.as_ref()?;
            let cs = entry.action.change_set.clone()?;
            let before = match entry.review.round_base.get(path) {
                Some(text) => Some(text.clone()),
                // Proposed exactly as before: nothing changed since.
                None if round.unchanged.iter().any(|u| u == path) => None,
                None => Some(String::new()),
            };
            (before, cs)
        };
        let (_, now) = cs.file_texts(path)?;
        let now = now.unwrap_or_default();
        let before = before.unwrap_or_else(|| now.clone());
        Some(crate::diff::FileDiff::compute(path, None, before.as_bytes(), now.as_bytes(), context))
    }

    /// Marks file `path` of pending action `id` viewed (pinned to the bytes it proposes), or
    /// clears the mark. Kept with the action (persistence hook) and announced
    /// (`CommentsChanged`). Refused when the action is gone or has no such file.
    pub fn set_viewed(&self, id: &str, path: &str, viewed: bool) -> Result<(), CommentError> {
        let mut inner = self.lock();
        let Some(entry) = inner.stack.iter_mut().find(|e| e.action.id == id) else {
            return Err(CommentError::NoAction { id: id.to_string() });
        };
        let cs = entry.action.change_set.as_deref();
        let Some(change) = cs.and_then(|cs| cs.changes().iter().find(|c| c.path() == path)) else {
            return Err(CommentError::Refused(format!(
                "Cannot mark {path:?} viewed: it is not one of the files of \"{}\".",
                entry.action.label
            )));
        };
        // A deletion or rename proposes no bytes: its mark is pinned to its path.
        let proposed = crate::rounds::proposed_hash(change).unwrap_or_default();
        let changed = if viewed {
            entry.review.viewed.insert(path.to_string(), proposed.clone()) != Some(proposed)
        } else {
            entry.review.viewed.remove(path).is_some()
        };
        if !changed {
            return Ok(());
        }
        let state = entry.review.clone();
        if let Some(persist) = &inner.persist {
            persist(crate::stored::Persist::Review { id: id.to_string(), state });
        }
        self.publish(&mut inner, StoreChange::CommentsChanged { id: id.to_string() });
        Ok(())
    }
}

fn info(entry: &Entry) -> ActionInfo {
    let a = &entry.action;
    ActionInfo {
        id: a.id.clone(),
        label: a.label.clone(),
        source_tool_name: a.source_tool_name.clone(),
        details: a.details.clone(),
        created_at: a.created_at,
        status: entry.status.clone(),
        origin: a.origin.clone(),
        pushed_by: a.pushed_by.clone(),
        proposal: entry.proposal.clone(),
        has_change_set: a.change_set.is_some(),
        kind: a.kind(),
        counts: a.counts(),
        hidden: a.hidden(),
        comments: entry.comments.clone(),
        round: entry.review.round.clone(),
        viewed: entry.review.viewed_paths(),
    }
}

impl PendingAction {
    /// This action as data. A change set's action keeps everything its apply needs; any
    /// other is stored as label, source and details only ([`crate::stored::StoredBody::Orphaned`]).
    pub fn to_stored(&self) -> crate::stored::StoredAction {
        let body = match (&self.change_set, &self.recipe) {
            (Some(cs), Some(recipe)) => crate::stored::StoredBody::ChangeSet {
                changes: cs.changes().to_vec(),
                renames: self.renames.as_ref().map(|r| r.to_vec()),
                applied_text: recipe.applied_text.clone(),
                discard_text: recipe.discard_text.clone(),
                written_by: recipe.written_by.clone(),
                replacements: cs
                    .changes()
                    .iter()
                    .filter_map(|c| cs.replacements(c.path()).map(|r| (c.path().to_string(), (**r).clone())))
                    .collect(),
            },
            _ => crate::stored::StoredBody::Orphaned,
        };
        crate::stored::StoredAction {
            id: self.id.clone(),
            label: self.label.clone(),
            source_tool_name: self.source_tool_name.clone(),
            details: self.details.clone(),
            created_at: self.created_at,
            origin: self.origin.clone(),
            pushed_by: self.pushed_by.clone(),
            body,
            comments: Vec::new(),
            review: crate::rounds::ReviewState::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    fn push(store: &PendingActionStore, label: &str) -> ActionId {
        store
            .push_parts(
                label.into(),
                "custom_tool".into(),
                None,
                Box::new(|_| async { Ok(ToolResult::empty()) }.boxed()),
                None,
                None,
                None,
                None,
                None,
                None,
            )
            .unwrap()
    }

    #[test]
    fn push_peek_pop_and_list_are_lifo() {
        let store = PendingActionStore::with_id_prefix("a");
        assert!(!store.has_pending());
        assert!(store.peek().is_none());
        let first = push(&store, "first");
        let second = push(&store, "second");
        assert_eq!(store.len(), 2);
        assert_eq!(store.peek().unwrap().id, second, "peek shows the most recent push");
        let labels: Vec<_> = store.list().into_iter().map(|a| a.label).collect();
        assert_eq!(labels, vec!["second", "first"], "list is top first");
        assert_eq!(store.pop().unwrap().id, second);
        assert_eq!(store.pop().unwrap().id, first);
        assert!(store.pop().is_none());
        assert!(!store.has_pending());
    }

    #[test]
    fn revision_bumps_once_per_change_and_events_follow() {
        let store = PendingActionStore::with_id_prefix("a");
        let mut rx = store.subscribe();
        assert_eq!(store.revision(), 0);
        let id = push(&store, "x");
        assert_eq!(store.revision(), 1);
        assert!(store.set_status(&id, ActionStatus::Failed { error: "boom".into() }));
        assert_eq!(store.revision(), 2);
        assert_eq!(store.clear(), 1);
        assert_eq!(store.revision(), 3);
        let events: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert_eq!(
            events,
            vec![
                StoreEvent { revision: 1, change: StoreChange::Pushed { id: id.clone() } },
                StoreEvent { revision: 2, change: StoreChange::StatusChanged { id } },
                StoreEvent { revision: 3, change: StoreChange::Cleared { count: 1 } },
            ]
        );
    }

    #[test]
    fn ids_are_unique_and_never_reused() {
        let store = PendingActionStore::with_id_prefix("a");
        let a = push(&store, "x");
        store.pop();
        let b = push(&store, "y");
        assert_ne!(a, b, "an id must never be reused, or a stale expected_id could match");
    }

    #[test]
    fn empty_label_is_refused() {
        let store = PendingActionStore::new();
        let err = store
            .push_parts(
                " ".into(),
                "t".into(),
                None,
                Box::new(|_| async { Ok(ToolResult::empty()) }.boxed()),
                None,
                None,
                None,
                None,
                None,
                None,
            )
            .unwrap_err();
        assert!(err.to_string().contains("label"), "{err}");
        assert_eq!(store.len(), 0);
        assert_eq!(store.revision(), 0, "a refused push changes nothing");
    }

    #[test]
    fn status_is_kept_in_snapshots() {
        let store = PendingActionStore::with_id_prefix("a");
        let id = push(&store, "x");
        store.set_status(&id, ActionStatus::Stale { files: vec!["a.ts".into()], message: "m".into() });
        assert_eq!(store.peek().unwrap().status.as_str(), "stale");
        assert!(!store.set_status("missing", ActionStatus::Pending));
    }
}
