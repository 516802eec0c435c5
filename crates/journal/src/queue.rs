//! The writer's queue: jobs in order, bounded by the bytes they hold.
//!
//! Each job has a weight (an estimate of the bytes it keeps alive). A job is taken when the
//! queue is empty or when it fits under the bound; otherwise the caller waits until the
//! writer has written enough (back-pressure). The weight of the job being written still
//! counts until it is done, so the bytes held are at most the bound, or one job alone when a
//! single job is larger. Nothing is ever dropped while the writer runs.
//!
//! Deadlock freedom: the writer thread never waits for a caller (it only takes jobs and
//! reports), so a caller waiting for room — even one holding the pending-action store's
//! lock, as the persistence hook does — always gets it. A job queued from the writer thread
//! itself never waits (nobody else would make room). If the writer thread is gone (it
//! panicked), waiting callers are released and their jobs refused.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;

pub(crate) struct Queue<T> {
    state: Mutex<State<T>>,
    /// Signalled when bytes were written, or the queue closed.
    room: Condvar,
    /// Signalled when a job arrived, or the queue closed.
    work: Condvar,
    max_bytes: u64,
}

struct State<T> {
    jobs: VecDeque<(T, u64)>,
    /// The weights of the queued jobs and of the job being written.
    held: u64,
    /// The most `held` ever was (for tests and measurements).
    peak: u64,
    /// No more jobs are taken (the writer is dropped).
    closed: bool,
    /// The writer thread ended: nobody takes jobs any more.
    gone: bool,
    writer: Option<ThreadId>,
}

impl<T> Queue<T> {
    pub fn new(max_bytes: u64) -> Self {
        Queue {
            state: Mutex::new(State {
                jobs: VecDeque::new(),
                held: 0,
                peak: 0,
                closed: false,
                gone: false,
                writer: None,
            }),
            room: Condvar::new(),
            work: Condvar::new(),
            max_bytes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Every change under this lock is a few assignments: a poisoned lock is consistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `job` after every job queued before it, waiting first until it fits. `Err`
    /// gives the job back when the queue is closed or its writer is gone.
    pub fn push(&self, job: T, weight: u64) -> Result<(), T> {
        let mut state = self.lock();
        let on_writer = state.writer == Some(std::thread::current().id());
        while !on_writer
            && !state.closed
            && !state.gone
            && state.held > 0
            && state.held.saturating_add(weight) > self.max_bytes
        {
            state = self.room.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        if state.closed || state.gone {
            return Err(job);
        }
        state.held = state.held.saturating_add(weight);
        state.peak = state.peak.max(state.held);
        state.jobs.push_back((job, weight));
        drop(state);
        self.work.notify_one();
        Ok(())
    }

    /// For the writer thread: the next job and its weight, waiting for one; `None` once the
    /// queue is closed and empty. Call [`done`](Self::done) with the weight once written.
    pub fn pop(&self) -> Option<(T, u64)> {
        let mut state = self.lock();
        state.writer = Some(std::thread::current().id());
        loop {
            if let Some(next) = state.jobs.pop_front() {
                return Some(next);
            }
            if state.closed {
                return None;
            }
            state = self.work.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// A job of `weight` was written: its bytes are free.
    pub fn done(&self, weight: u64) {
        let mut state = self.lock();
        state.held = state.held.saturating_sub(weight);
        drop(state);
        self.room.notify_all();
    }

    /// Takes no more jobs; the writer ends once the queued ones are written.
    pub fn close(&self) {
        self.lock().closed = true;
        self.work.notify_all();
        self.room.notify_all();
    }

    /// The writer thread ended (normally or not): waiting callers are released.
    pub fn writer_gone(&self) {
        let mut state = self.lock();
        state.gone = true;
        state.jobs.clear();
        state.held = 0;
        drop(state);
        self.room.notify_all();
    }

    /// The bytes held now (queued, and being written).
    pub fn held(&self) -> u64 {
        self.lock().held
    }

    /// The most bytes ever held at once.
    pub fn peak(&self) -> u64 {
        self.lock().peak
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_job_that_does_not_fit_waits_until_the_writer_makes_room_and_order_is_kept() {
        let q = Arc::new(Queue::<u32>::new(10));
        q.push(1, 6).unwrap();
        let (tx, pushed) = std::sync::mpsc::channel();
        let qq = q.clone();
        let caller = std::thread::spawn(move || {
            qq.push(2, 6).unwrap();
            tx.send(()).unwrap();
        });
        assert_eq!(
            pushed.recv_timeout(std::time::Duration::from_millis(200)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout),
            "6 + 6 > 10: the second push waits"
        );
        assert_eq!(q.held(), 6);
        let (job, weight) = q.pop().unwrap();
        assert_eq!(job, 1);
        assert_eq!(q.held(), 6, "the job being written still counts");
        q.done(weight);
        pushed.recv().unwrap();
        caller.join().unwrap();
        assert_eq!(q.pop().unwrap().0, 2);
        assert!(q.peak() <= 10, "never more than the bound: {}", q.peak());
    }

    #[test]
    fn a_job_larger_than_the_bound_is_taken_alone() {
        let q = Queue::<u32>::new(10);
        q.push(1, 50).unwrap();
        assert_eq!(q.held(), 50);
        let (_, w) = q.pop().unwrap();
        q.done(w);
        assert_eq!(q.held(), 0);
    }

    #[test]
    fn waiting_callers_are_released_when_the_writer_is_gone() {
        let q = Arc::new(Queue::<u32>::new(10));
        q.push(1, 10).unwrap();
        let qq = q.clone();
        let caller = std::thread::spawn(move || qq.push(2, 5));
        // The caller either waits and is released, or arrives after: both refuse job 2.
        q.writer_gone();
        assert_eq!(caller.join().unwrap(), Err(2));
    }

    #[test]
    fn the_writer_thread_never_waits_on_its_own_queue() {
        let q = Queue::<u32>::new(10);
        q.push(1, 10).unwrap();
        let (_, _w) = q.pop().unwrap(); // this thread is now the writer, its job being written
        q.push(2, 10).expect("queued at once from the writer thread, never waiting for itself");
        assert_eq!(q.held(), 20);
    }
}
