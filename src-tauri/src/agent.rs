//! The agent session in the window: one conversation per open session.
//!
//! A conversation holds the agent loop (its message history, kept across turns), the turn
//! running now (its cancellation token and task), and the log of every update sent to the
//! UI (so a reloaded window can show the conversation again). A turn runs in a spawned
//! task; its events are converted to wire updates and emitted as `agent-event`. Policy is
//! not decided here: under `human` the engine makes the agent's `resolve` wait for the
//! person's Apply/Discard (made through `resolve_action`), whose decision becomes the
//! model's answer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use resolve_agent::{AgentLoop, LlmClient, ModelSource, ProviderConfig};
use resolve_engine::{CancellationToken, Session};
use resolve_protocol::ipc::events::AGENT_EVENT;
use resolve_protocol::{self as wire, AgentUpdate, IpcError, IpcErrorCode};
use tauri::async_runtime::JoinHandle;

use crate::convert;
use crate::events::Emitter;

struct Running {
    turn: u64,
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

/// One session's conversation with the model.
#[derive(Default)]
pub struct Conversation {
    agent: Arc<tokio::sync::Mutex<Option<AgentLoop>>>,
    running: Arc<Mutex<Option<Running>>>,
    log: Arc<Mutex<Vec<AgentUpdate>>>,
    /// The last turn number given; never reset, so late events of a replaced conversation
    /// are recognisable.
    turns: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Conversation {
    /// Starts a turn for `prompt` on `session` with the provider `config`; returns its number.
    /// Refused while another turn runs.
    pub fn start_turn(
        &self,
        session: Arc<Session>,
        config: ProviderConfig,
        prompt: String,
        emit: Option<Emitter>,
    ) -> Result<u64, IpcError> {
        if prompt.trim().is_empty() {
            return Err(IpcError::new(
                IpcErrorCode::InvalidParams,
                "The message is empty: write what the agent should do.",
            ));
        }
        let resolve_wait = std::time::Duration::from_secs(config.resolve_wait_secs.max(1));
        // The variable when set, else the key stored in the system keyring (a keyring that
        // cannot be read sends none; the settings dialog shows why).
        let (key, _, _) = resolve_agent::llm::secret::api_key(&config);
        let client =
            LlmClient::with_key(config, key).map_err(|e| IpcError::new(IpcErrorCode::InvalidParams, e.to_string()))?;
        let mut running = lock(&self.running);
        if let Some(r) = running.as_ref().filter(|r| !r.task.inner().is_finished()) {
            return Err(IpcError::new(
                IpcErrorCode::Busy,
                format!("The agent is still working on turn {}: stop it or wait for it to finish.", r.turn),
            ));
        }
        let turn = self.turns.fetch_add(1, Ordering::SeqCst) + 1;
        let cancel = CancellationToken::new();
        let log = self.log.clone();
        let send = move |event: wire::AgentEvent| {
            let update = AgentUpdate { turn, event };
            if let Some(emit) = &emit {
                emit(AGENT_EVENT, serde_json::to_value(&update).unwrap_or_default());
            }
            lock(&log).push(update);
        };
        send(wire::AgentEvent::Prompt { text: prompt.clone() });
        let agent = self.agent.clone();
        let slot = self.running.clone();
        let token = cancel.clone();
        let task = tauri::async_runtime::spawn(async move {
            let mut guard = agent.lock().await;
            let agent = match guard.take() {
                Some(mut a) => {
                    a.set_model(ModelSource::Live(client));
                    guard.insert(a.with_resolve_wait(resolve_wait))
                }
                None => guard.insert(AgentLoop::new(ModelSource::Live(client)).with_resolve_wait(resolve_wait)),
            };
            // The outcome is also the last event (`turnDone`, after an `error` when it failed).
            let _ = agent.run_turn(&session, &prompt, token, |e| send(convert::agent_event(e))).await;
            let mut slot = lock(&slot);
            if slot.as_ref().is_some_and(|r| r.turn == turn) {
                *slot = None;
            }
        });
        *running = Some(Running { turn, cancel, task });
        Ok(turn)
    }

    /// Cancels the running turn, if any (its `turnDone` event follows).
    pub fn stop(&self) {
        if let Some(r) = lock(&self.running).as_ref() {
            r.cancel.cancel();
        }
    }

    /// Cancels the running turn and waits until it has ended.
    pub async fn stop_and_wait(&self) {
        let running = lock(&self.running).take();
        if let Some(r) = running {
            r.cancel.cancel();
            let _ = r.task.await;
        }
    }

    /// Stops any turn, discards every pending action (as the person, top first, with
    /// `reason`, so each goes into the history), then forgets the messages.
    pub async fn start_new(
        &self,
        desk: &resolve_desk_core::Desk,
        reason: Option<&str>,
    ) -> Result<Vec<String>, IpcError> {
        const PURPOSE: &str = "before starting a new conversation";
        // Refused before the turn stops when a reason is missing (nothing changes then).
        if !desk.session().store().is_empty() && reason.unwrap_or_default().trim().is_empty() {
            return desk.discard_all("", PURPOSE).await.map_err(crate::convert::desk_error);
        }
        self.stop_and_wait().await;
        // Passed on byte for byte (SPEC §4); only a blank one is refused.
        let discarded =
            desk.discard_all(reason.unwrap_or_default(), PURPOSE).await.map_err(crate::convert::desk_error)?;
        if let Some(agent) = self.agent.lock().await.as_mut() {
            agent.reset();
        }
        lock(&self.log).clear();
        Ok(discarded)
    }

    /// The conversation so far, for a window that (re)opens.
    pub fn view(&self) -> wire::ConversationView {
        let running_turn = lock(&self.running).as_ref().filter(|r| !r.task.inner().is_finished()).map(|r| r.turn);
        wire::ConversationView { running_turn, updates: lock(&self.log).clone() }
    }
}

impl Drop for Conversation {
    fn drop(&mut self) {
        // A closed session's turn must not keep waiting for a person who cannot see it.
        if let Some(r) = lock(&self.running).as_ref() {
            r.cancel.cancel();
        }
    }
}
