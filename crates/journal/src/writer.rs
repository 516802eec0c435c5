//! [`Writer`]: the journal's own thread, fed through a byte-bounded queue.

use std::path::Path;
use std::sync::mpsc;

use std::sync::Mutex;

use crate::{queue, Decision, Journal, JournalError, JournalLimits, Push};

/// What a [`Writer`] reports after each write: `Ok` or the error, with the journal's path.
pub type WriteReport = Box<dyn Fn(&Path, Result<(), &JournalError>) + Send + 'static>;

/// A write of another kind than a decision, run on the writer thread (e.g. undo data).
pub type JournalJob = Box<dyn FnOnce(&Journal) -> Result<(), JournalError> + Send + 'static>;

// One job at a time through the queue: boxing the decision would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Job {
    Record(Decision),
    Flush(mpsc::Sender<()>),
    /// An action pushed in a workspace: kept as pending, and its push recorded.
    Pushed(String, Box<resolve_engine::StoredAction>),
    /// An action decided or popped in a workspace: no longer pending.
    Unpending(String, String),
    /// The comments of a pending action changed (workspace, action id, the whole list).
    Comments(String, String, Vec<resolve_engine::Comment>),
    /// A pending action's review state changed (workspace, action id, the whole state).
    Review(String, String, Box<resolve_engine::ReviewState>),
    /// A preview discarded with Request changes is kept as its review's prior round.
    Round(String, String, Box<resolve_engine::StoredRound>),
    /// A prior round its agent answered (or a newer one replaced): forgotten.
    RoundTaken(String, String),
    Run(JournalJob),
}

/// What every queued job counts besides its own bytes (the job, its strings' headers).
const JOB_OVERHEAD: u64 = 256;

/// The weight [`Writer::run`] gives a job whose size it cannot see.
pub const RUN_JOB_WEIGHT: u64 = 4096;

/// An estimate of the bytes a JSON value holds.
fn json_weight(v: &serde_json::Value) -> u64 {
    use serde_json::Value;
    16 + match v {
        Value::String(s) => s.len() as u64,
        Value::Array(items) => items.iter().map(json_weight).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() as u64 + json_weight(v)).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

impl Job {
    /// The bytes this job keeps alive while it waits (an estimate; what the queue bounds).
    fn weight(&self) -> u64 {
        let text = |parts: &[&str]| parts.iter().map(|p| p.len() as u64).sum::<u64>();
        JOB_OVERHEAD
            + match self {
                Job::Flush(_) => return 0,
                Job::Record(d) => {
                    text(&[&d.workspace, &d.action_id, &d.label, &d.source_tool_name, &d.reason, &d.text])
                        + d.partial.as_ref().map_or(0, |p| {
                            p.left_out_files.iter().map(|f| f.len() as u64 + 16).sum::<u64>()
                                + 64 * p.left_out_replacements.len() as u64
                        })
                        + d.review.as_ref().map_or(0, |r| {
                            r.comments.iter().map(|c| (c.path.len() + c.quote.len() + c.text.len()) as u64 + 64).sum()
                        })
                }
                Job::Pushed(workspace, a) => {
                    let changes = match &a.body {
                        resolve_engine::StoredBody::ChangeSet { changes, renames, .. } => {
                            changes.iter().map(|c| c.held_bytes() + c.path().len() as u64 + 64).sum::<u64>()
                                + renames.as_ref().map_or(0, |r| {
                                    r.iter().map(|r| (r.from.len() + r.to.len()) as u64 + 16).sum::<u64>()
                                })
                        }
                        resolve_engine::StoredBody::Orphaned => 0,
                    };
                    text(&[workspace, &a.id, &a.label, &a.source_tool_name])
                        + a.details.as_ref().map_or(0, json_weight)
                        + a.origin.as_ref().map_or(0, |o| json_weight(&o.params))
                        + changes
                }
                Job::Unpending(workspace, id) => text(&[workspace, id]),
                Job::Comments(workspace, id, comments) => {
                    text(&[workspace, id])
                        + comments
                            .iter()
                            .map(|c| (c.path.len() + c.quote.len() + c.text.len()) as u64 + 64)
                            .sum::<u64>()
                }
                Job::Review(workspace, id, state) => {
                    text(&[workspace, id])
                        + state.viewed.iter().map(|(p, h)| (p.len() + h.len()) as u64 + 16).sum::<u64>()
                        + state.round_base.iter().map(|(p, t)| (p.len() + t.len()) as u64 + 16).sum::<u64>()
                }
                Job::Round(workspace, id, round) => {
                    text(&[workspace, id, &round.agent, &round.first_label])
                        + round
                            .comments
                            .iter()
                            .map(|(_, c)| (c.path.len() + c.quote.len() + c.text.len()) as u64 + 64)
                            .sum::<u64>()
                        + round.viewed.iter().map(|(p, h)| (p.len() + h.len()) as u64 + 16).sum::<u64>()
                }
                Job::RoundTaken(workspace, id) => text(&[workspace, id]),
                Job::Run(_) => RUN_JOB_WEIGHT,
            }
    }
}

/// Writes decisions to a [`Journal`] on a thread of its own, in the order they were sent, so
/// callers (a session observer running on an async worker) never wait on SQLite. Every
/// write's result goes to the report callback (the app turns failures into a banner).
/// Dropping the writer writes what is queued, then ends the thread.
///
/// The queue is bounded by the bytes its jobs hold ([`JournalLimits::queue_bytes`]): a caller
/// whose job does not fit waits until the writer has made room (back-pressure), so a slow
/// disk can never make the queue grow without bound, and nothing is dropped. The writer
/// thread never waits for a caller, so a caller holding a lock while it queues (the
/// pending-action store's persistence hook) cannot deadlock it.
pub struct Writer {
    queue: std::sync::Arc<queue::Queue<Job>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    journal: std::sync::Arc<Journal>,
}

/// Tells the queue when the writer thread ends, even by a panic (waiting callers go free).
struct WriterGone(std::sync::Arc<queue::Queue<Job>>);

impl Drop for WriterGone {
    fn drop(&mut self) {
        self.0.writer_gone();
    }
}

impl Writer {
    /// Starts the writer thread for `journal`, its queue bounded by
    /// [`JournalLimits::from_env_or_default`]; `report` is called on that thread after each
    /// write.
    pub fn spawn(journal: std::sync::Arc<Journal>, report: WriteReport) -> Result<Writer, JournalError> {
        Self::spawn_bounded(journal, report, JournalLimits::from_env_or_default().queue_bytes)
    }

    /// [`spawn`](Self::spawn) with a queue that holds at most `queue_bytes` (a single larger
    /// job is taken alone).
    pub fn spawn_bounded(
        journal: std::sync::Arc<Journal>,
        report: WriteReport,
        queue_bytes: u64,
    ) -> Result<Writer, JournalError> {
        let queue = std::sync::Arc::new(queue::Queue::new(queue_bytes));
        let j = journal.clone();
        let q = queue.clone();
        let thread = std::thread::Builder::new().name("rd-journal".into()).spawn(move || {
            let _gone = WriterGone(q.clone());
            while let Some((job, weight)) = q.pop() {
                match job {
                    Job::Record(d) => report(j.path(), j.record(&d).as_ref().map(|_| ())),
                    Job::Run(f) => report(j.path(), f(&j).as_ref().map(|_| ())),
                    Job::Flush(done) => {
                        let _ = done.send(());
                    }
                    Job::Pushed(workspace, action) => {
                        let saved = j.save_pending(&workspace, &action);
                        let recorded = saved.and_then(|_| j.record_push(&Push::of(&workspace, &action)));
                        report(j.path(), recorded.as_ref().map(|_| ()))
                    }
                    Job::Comments(workspace, id, comments) => {
                        report(j.path(), j.save_comments(&workspace, &id, &comments).as_ref().map(|_| ()))
                    }
                    Job::Review(workspace, id, state) => {
                        report(j.path(), j.save_review(&workspace, &id, &state).as_ref().map(|_| ()))
                    }
                    Job::Unpending(workspace, id) => {
                        report(j.path(), j.remove_pending(&workspace, &id).as_ref().map(|_| ()))
                    }
                    Job::Round(workspace, id, round) => {
                        report(j.path(), j.keep_round(&workspace, &id, &round).as_ref().map(|_| ()))
                    }
                    Job::RoundTaken(workspace, id) => {
                        report(j.path(), j.forget_round(&workspace, &id).as_ref().map(|_| ()))
                    }
                }
                // The job (and the bytes it held) is dropped by now.
                q.done(weight);
            }
        });
        let thread = thread.map_err(JournalError::Thread)?;
        Ok(Writer { queue, thread: Mutex::new(Some(thread)), journal })
    }

    /// The journal written to.
    pub fn journal(&self) -> &std::sync::Arc<Journal> {
        &self.journal
    }

    /// Queues `job`, waiting first for room in the queue if it is full.
    fn send(&self, job: Job) -> bool {
        let weight = job.weight();
        self.queue.push(job, weight).is_ok()
    }

    /// The bytes waiting to be written now (queued, and being written): at most the queue's
    /// bound, or one job alone when a single job is larger.
    pub fn queued_bytes(&self) -> u64 {
        self.queue.held()
    }

    /// The most bytes that ever waited at once.
    pub fn peak_queued_bytes(&self) -> u64 {
        self.queue.peak()
    }

    /// Queues `d`; it is written after everything queued before it. Never blocks on SQLite
    /// (only on a full queue, until the writer has made room).
    pub fn record(&self, d: Decision) {
        self.send(Job::Record(d));
    }

    /// The store's persistence hook for `workspace` (see
    /// `PendingActionStore::set_persistence`): each push is queued to be kept as pending and
    /// recorded in `pushes`, each decision or pop to be forgotten, in store order. Never
    /// blocks on SQLite; a push waits for room when the queue is full (see [`Writer`]).
    pub fn persistence(self: &std::sync::Arc<Self>, workspace: &str) -> resolve_engine::PersistFn {
        let writer = std::sync::Arc::downgrade(self);
        let workspace = workspace.to_string();
        Box::new(move |event| {
            let Some(writer) = writer.upgrade() else { return };
            let job = match event {
                resolve_engine::Persist::Save(action) => Job::Pushed(workspace.clone(), Box::new(action)),
                resolve_engine::Persist::Remove { id } => Job::Unpending(workspace.clone(), id),
                resolve_engine::Persist::Comments { id, comments } => Job::Comments(workspace.clone(), id, comments),
                resolve_engine::Persist::Review { id, state } => Job::Review(workspace.clone(), id, Box::new(state)),
                resolve_engine::Persist::Round { id, round } => Job::Round(workspace.clone(), id, Box::new(round)),
                resolve_engine::Persist::RoundTaken { id } => Job::RoundTaken(workspace.clone(), id),
            };
            writer.send(job);
        })
    }

    /// Queues `job` (e.g. keeping undo data); it runs after everything queued before it, and
    /// its result is reported like a decision's. It counts [`RUN_JOB_WEIGHT`] bytes in the
    /// queue; use [`run_sized`](Self::run_sized) when it holds more.
    pub fn run(&self, job: JournalJob) {
        self.run_sized(RUN_JOB_WEIGHT, job);
    }

    /// [`run`](Self::run) for a job holding about `bytes` bytes (what the queue counts).
    pub fn run_sized(&self, bytes: u64, job: JournalJob) {
        let weight = bytes.saturating_add(JOB_OVERHEAD);
        let _ = self.queue.push(Job::Run(job), weight);
    }

    /// Waits until everything queued so far has been written (or has failed). Blocking: call
    /// it from a blocking context (e.g. `spawn_blocking`), not on an async worker.
    pub fn flush(&self) {
        let (done, wait) = mpsc::channel();
        if self.send(Job::Flush(done)) {
            let _ = wait.recv();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread once what is queued is written.
        self.queue.close();
        if let Some(t) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = t.join();
        }
    }
}
