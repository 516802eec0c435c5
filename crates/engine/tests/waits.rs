//! Agent waits that survive real clients: a `resolve` waits for the person at most its bound,
//! then says so (a normal result) and keeps its proposal; a decision made while none of an
//! agent's calls waits is kept for that agent and delivered exactly once — by its next
//! `resolve`, or first in its next call of another tool; each agent gets only its own.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use resolve_engine::{
    Actor, CustomToolApi, CustomToolPendingAction, MailboxChange, PendingActionStore, ResolvePolicy, Session, Tool,
    ToolContext, ToolError, ToolResult, WaitBound,
};
use serde_json::{json, Value};

struct Preview(CustomToolApi);

#[async_trait]
impl Tool for Preview {
    fn name(&self) -> &str {
        "preview"
    }
    fn label(&self) -> &str {
        "Preview"
    }
    fn description(&self) -> &str {
        "pushes one action"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]})
    }
    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let label = params["label"].as_str().unwrap_or("x").to_string();
        self.0.push_from(&ctx, CustomToolPendingAction::new(label, |_| async { Ok(ToolResult::text("written")) }))?;
        Ok(ToolResult::text("previewed"))
    }
}

fn desk() -> (tempfile::TempDir, Arc<Session>) {
    let dir = tempfile::tempdir().unwrap();
    let s = Session::with_store(dir.path(), ResolvePolicy::Human, PendingActionStore::with_id_prefix("w")).unwrap();
    s.load(|api| vec![Arc::new(Preview(api.clone())) as Arc<dyn Tool>]).unwrap();
    (dir, Arc::new(s))
}

fn ctx(s: &Session, client: &str) -> ToolContext {
    ToolContext::new(s.new_call_id()).with_client(client)
}

async fn agent(s: &Arc<Session>, client: &str, tool: &str, params: Value) -> ToolResult {
    s.call_with(Actor::Agent, ctx(s, client), tool, params).await
}

async fn person(s: &Session, action: &str, reason: &str) -> ToolResult {
    s.call(Actor::Person, "resolve", json!({"action": action, "reason": reason})).await
}

#[tokio::test(start_paused = true)]
async fn a_bounded_wait_says_not_decided_yet_keeps_the_proposal_and_the_next_resolve_gets_the_decision() {
    let (_d, s) = desk();
    agent(&s, "claude-code", "preview", json!({"label": "AST Edit: 3 replacements in 1 file"})).await;
    let id = s.store().peek().unwrap().id;
    let ask = ctx(&s, "claude-code").with_wait(WaitBound::For(Duration::from_secs(45)));
    let r = s.call_with(Actor::Agent, ask, "resolve", json!({"action": "apply", "reason": "tests pass"})).await;
    assert!(!r.is_error, "a normal result, not an error: {r:?}");
    let text = r.text_content();
    assert!(text.contains("has not decided yet in 45 s") && text.contains(&id), "{text}");
    assert!(text.contains("nothing was written") && text.contains("Call `resolve` again"), "{text}");
    let proposal = s.store().peek().unwrap().proposal.expect("the proposal stays on the card");
    assert!(!proposal.waiting, "shown as not waiting now");
    assert_eq!(proposal.client.as_deref(), Some("claude-code"));
    assert!(s.history().is_empty(), "nothing was decided");

    // The person decides while no call waits; the agent's next resolve gets it, even though
    // the stack is empty by then.
    assert!(!person(&s, "apply", "reviewed, ship it").await.is_error);
    assert!(!s.store().has_pending());
    let r = agent(&s, "claude-code", "resolve", json!({"action": "apply", "reason": "still here"})).await;
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.text_content().ends_with("Decided by the person: applied. Reason: reviewed, ship it"),
        "{}",
        r.text_content()
    );
    assert_eq!(r.details.as_ref().unwrap()["decided_by"], "person");
    assert_eq!(r.details.as_ref().unwrap()["action_id"], id.as_str());
    // Exactly once: the next one sees SPEC §4's empty stack.
    let r = agent(&s, "claude-code", "resolve", json!({"action": "apply", "reason": "again"})).await;
    assert_eq!(r.text_content(), "No pending action to resolve. Nothing to apply or discard.");
    assert_eq!(s.history().len(), 1, "one decision, journalled once (by the person)");
}

#[tokio::test]
async fn a_decision_made_while_no_call_waits_comes_first_in_the_agents_next_call_of_another_tool() {
    let (_d, s) = desk();
    agent(&s, "claude-code", "preview", json!({"label": "Batch rename: 2 files"})).await;
    assert!(!person(&s, "discard", "wrong folder").await.is_error);
    let r = agent(&s, "claude-code", "preview", json!({"label": "Batch rename: 1 file"})).await;
    let text = r.text_content();
    assert!(text.starts_with("Decisions made on your earlier previews while you were not waiting:"), "{text}");
    assert!(text.contains("Discarded: Batch rename: 2 files. Reason: wrong folder"), "{text}");
    assert!(text.contains("Decided by the person: discarded. Reason: wrong folder"), "{text}");
    assert!(text.ends_with("previewed"), "then the tool's own result: {text}");
    let again = agent(&s, "claude-code", "preview", json!({"label": "x"})).await;
    assert_eq!(again.text_content(), "previewed", "delivered once");
}

#[tokio::test]
async fn two_clients_each_get_only_their_own_decisions() {
    let (_d, s) = desk();
    agent(&s, "claude-code", "preview", json!({"label": "A"})).await;
    agent(&s, "codex", "preview", json!({"label": "B"})).await;
    assert!(!person(&s, "discard", "not B").await.is_error);
    assert!(!person(&s, "apply", "A is fine").await.is_error);
    let a = agent(&s, "claude-code", "resolve", json!({"action": "apply", "reason": "?"})).await;
    let b = agent(&s, "codex", "resolve", json!({"action": "apply", "reason": "?"})).await;
    assert!(a.text_content().contains("Reason: A is fine") && !a.text_content().contains("not B"), "{a:?}");
    assert!(b.text_content().contains("Reason: not B") && !b.text_content().contains("A is fine"), "{b:?}");
}

#[tokio::test]
async fn a_cancelled_wait_keeps_its_proposal_and_the_later_decision_is_kept_for_the_agent() {
    let (_d, s) = desk();
    agent(&s, "claude-code", "preview", json!({"label": "A"})).await;
    let cancel = resolve_engine::CancellationToken::new();
    let (s2, c2) = (s.clone(), cancel.clone());
    let waiting = tokio::spawn(async move {
        let ask = ToolContext::new("wait-1").with_client("claude-code").with_cancel(c2);
        s2.call_with(Actor::Agent, ask, "resolve", json!({"action": "apply", "reason": "go"})).await
    });
    let mut events = s.store().subscribe();
    while s.store().peek().and_then(|a| a.proposal).is_none() {
        events.recv().await.unwrap();
    }
    assert!(s.waits().is_waiting(&s.store().peek().unwrap().id), "the window can show the agent waits");
    cancel.cancel();
    assert_eq!(waiting.await.unwrap().error_code.as_deref(), Some("cancelled"));
    assert!(!s.waits().is_waiting(&s.store().peek().unwrap().id));
    assert!(!person(&s, "apply", "after the time-out").await.is_error);
    assert_eq!(s.waits().mailbox().len(), 1, "kept for the agent");
    let r = agent(&s, "claude-code", "resolve", json!({"action": "apply", "reason": "?"})).await;
    assert!(r.text_content().contains("Reason: after the time-out"), "{r:?}");
}

#[tokio::test]
async fn the_mailbox_is_mirrored_and_a_new_session_restores_it() {
    let (dir, s) = desk();
    let mirror = Arc::new(Mutex::new(Vec::new()));
    let m = mirror.clone();
    s.waits().set_persistence(Box::new(move |c| m.lock().unwrap().push(c)));
    agent(&s, "claude-code", "preview", json!({"label": "A"})).await;
    assert!(!person(&s, "apply", "ok").await.is_error);
    let kept: Vec<_> = mirror
        .lock()
        .unwrap()
        .iter()
        .filter_map(|c| match c {
            MailboxChange::Kept(d) => Some((**d).clone()),
            MailboxChange::Delivered(_) => None,
        })
        .collect();
    assert_eq!(kept.len(), 1);
    // A restart: a new session of the same workspace gets the kept decision back.
    let again = Arc::new(Session::open(dir.path(), ResolvePolicy::Human).unwrap());
    again.waits().restore(kept);
    let r = agent(&again, "claude-code", "resolve", json!({"action": "apply", "reason": "?"})).await;
    assert!(r.text_content().ends_with("Decided by the person: applied. Reason: ok"), "{r:?}");
    assert!(again.waits().mailbox().is_empty());
}

#[tokio::test]
async fn an_agent_that_decides_itself_under_the_agent_policy_is_not_sent_its_own_decision() {
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(Session::open(dir.path(), ResolvePolicy::Agent).unwrap());
    s.load(|api| vec![Arc::new(Preview(api.clone())) as Arc<dyn Tool>]).unwrap();
    agent(&s, "claude-code", "preview", json!({"label": "A"})).await;
    let r = agent(&s, "claude-code", "resolve", json!({"action": "apply", "reason": "mine"})).await;
    assert!(!r.is_error);
    assert!(s.waits().mailbox().is_empty());
    // A person deciding an agent's action in the window is kept for that agent.
    agent(&s, "claude-code", "preview", json!({"label": "B"})).await;
    assert!(!person(&s, "discard", "no").await.is_error);
    assert_eq!(s.waits().mailbox().len(), 1);
}

#[tokio::test]
async fn not_now_answers_the_waiting_agent_without_deciding_and_keeps_the_action() {
    let (_d, s) = desk();
    agent(&s, "claude-code", "preview", json!({"label": "A"})).await;
    let id = s.store().peek().unwrap().id;
    let s2 = s.clone();
    let waiting = tokio::spawn(async move {
        let ask = ToolContext::new("wait-1").with_client("claude-code").with_wait(WaitBound::Unbounded);
        s2.call_with(Actor::Agent, ask, "resolve", json!({"action": "apply", "reason": "go"})).await
    });
    let mut events = s.store().subscribe();
    while !s.waits().is_waiting(&id) {
        events.recv().await.unwrap();
    }
    assert_eq!(s.snooze(&id), 1, "one agent was waiting");
    let r = waiting.await.unwrap();
    assert!(!r.is_error, "{r:?}");
    assert!(r.text_content().contains("will review") && r.text_content().contains("nothing was applied"), "{r:?}");
    assert!(s.store().has_pending(), "the action stays pending");
    assert!(!s.store().peek().unwrap().proposal.unwrap().waiting);
    assert!(s.history().is_empty(), "nothing was decided");
    assert_eq!(s.snooze(&id), 0, "nobody waits now");
    assert!(!person(&s, "apply", "later").await.is_error);
    let r = agent(&s, "claude-code", "resolve", json!({"action": "apply", "reason": "?"})).await;
    assert!(r.text_content().ends_with("Decided by the person: applied. Reason: later"), "kept for it: {r:?}");
}
