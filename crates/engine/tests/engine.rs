//! Integration tests of the engine's public API: the resolve tool, the store, the custom
//! tool API and the session, with real temp dirs. New engine-level behaviour tests go here;
//! whole workflows across crates go in the `tests/` package.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use resolve_engine::*;
use serde_json::{json, Value};

fn session() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let s = Session::with_store(dir.path(), ResolvePolicy::Agent, PendingActionStore::with_id_prefix("a")).unwrap();
    (dir, s)
}

fn push(s: &Session, label: &str) -> ActionId {
    s.api().push_pending_action(CustomToolPendingAction::new(label, |_| async { Ok(ToolResult::empty()) })).unwrap()
}

async fn resolve(s: &Session, action: &str, reason: &str) -> ToolResult {
    s.call(Actor::Agent, "resolve", json!({"action": action, "reason": reason})).await
}

#[tokio::test]
async fn resolve_on_empty_stack_fails_with_exact_message() {
    let (_d, s) = session();
    let r = resolve(&s, "apply", "go").await;
    assert!(r.is_error);
    assert_eq!(r.text_content(), "No pending action to resolve. Nothing to apply or discard.");
    let r = resolve(&s, "discard", "no").await;
    assert_eq!(r.text_content(), "No pending action to resolve. Nothing to apply or discard.");
}

#[tokio::test]
async fn apply_without_text_says_applied_label_and_pops() {
    let (_d, s) = session();
    let id = push(&s, "Rename: 2 files");
    let r = resolve(&s, "apply", "looks right").await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.text_content(), "Applied: Rename: 2 files.");
    assert_eq!(
        r.details.unwrap(),
        json!({"action": "apply", "reason": "looks right", "source_tool_name": "custom_tool", "label": "Rename: 2 files", "action_id": id})
    );
    assert!(!s.store().has_pending());
}

#[tokio::test]
async fn apply_keeps_the_apply_result_content_and_passes_reason_verbatim() {
    let (_d, s) = session();
    let seen = Arc::new(std::sync::Mutex::new(String::new()));
    let seen2 = seen.clone();
    s.api()
        .push_pending_action(
            CustomToolPendingAction::new("x", move |reason| {
                *seen2.lock().unwrap() = reason.clone();
                async move { Ok(ToolResult::text(format!("did it because {reason}"))) }
            })
            .with_source_tool_name("my_tool"),
        )
        .unwrap();
    let r = resolve(&s, "apply", "  ship it  ").await;
    assert_eq!(r.text_content(), "did it because   ship it  ");
    assert_eq!(*seen.lock().unwrap(), "  ship it  ", "the reason reaches apply byte for byte (SPEC §4)");
    assert_eq!(r.details.unwrap()["source_tool_name"], "my_tool");
}

#[tokio::test]
async fn discard_without_reject_uses_the_exact_default() {
    let (_d, s) = session();
    push(&s, "AST Edit: 1 replacement in 1 file");
    let r = resolve(&s, "discard", "wrong scope").await;
    assert!(!r.is_error);
    assert_eq!(r.text_content(), "Discarded: AST Edit: 1 replacement in 1 file. Reason: wrong scope");
    assert_eq!(r.details.unwrap()["action"], "discard");
    assert!(!s.store().has_pending());
}

#[tokio::test]
async fn discard_with_reject_uses_its_result_and_nothing_keeps_default() {
    let (_d, s) = session();
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    s.api()
        .push_pending_action(CustomToolPendingAction::new("quiet", |_| async { Ok(ToolResult::empty()) }).with_reject(
            move |_| {
                c.fetch_add(1, Ordering::SeqCst);
                async { Ok(None) }
            },
        ))
        .unwrap();
    s.api()
        .push_pending_action(
            CustomToolPendingAction::new("loud", |_| async { Ok(ToolResult::empty()) })
                .with_reject(|reason| async move { Ok(Some(ToolResult::text(format!("cleaned up ({reason})")))) }),
        )
        .unwrap();
    assert_eq!(resolve(&s, "discard", "nope").await.text_content(), "cleaned up (nope)");
    assert_eq!(resolve(&s, "discard", "nah").await.text_content(), "Discarded: quiet. Reason: nah");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "reject runs once");
}

#[tokio::test]
async fn lifo_resolves_most_recent_first() {
    let (_d, s) = session();
    push(&s, "first");
    push(&s, "second");
    assert_eq!(resolve(&s, "apply", "ok").await.text_content(), "Applied: second.");
    assert_eq!(resolve(&s, "apply", "ok").await.text_content(), "Applied: first.");
}

#[tokio::test]
async fn empty_reason_is_refused_and_nothing_happens() {
    let (_d, s) = session();
    push(&s, "x");
    for reason in ["", "   "] {
        let r = resolve(&s, "apply", reason).await;
        assert!(r.is_error);
        assert!(r.text_content().contains("reason"), "{}", r.text_content());
        assert_eq!(r.error_code.as_deref(), Some("invalid_params"));
    }
    assert_eq!(s.store().len(), 1);
}

#[tokio::test]
async fn malformed_resolve_params_are_refused_naming_the_field() {
    let (_d, s) = session();
    push(&s, "x");
    let r = s.call(Actor::Agent, "resolve", json!({"action": "yes", "reason": "r"})).await;
    assert!(r.is_error && r.text_content().contains("`action`"), "{}", r.text_content());
    let r = s.call(Actor::Agent, "resolve", json!({"action": "apply"})).await;
    assert!(r.is_error && r.text_content().contains("reason"), "{}", r.text_content());
    let r = s.call(Actor::Agent, "resolve", json!({"action": "apply", "reason": "r", "bogus": 1})).await;
    assert!(r.is_error && r.text_content().contains("bogus"), "{}", r.text_content());
    assert_eq!(s.store().len(), 1);
}

#[tokio::test]
async fn expected_id_mismatch_changes_nothing() {
    let (_d, s) = session();
    let first = push(&s, "first");
    let second = push(&s, "second");
    let rev = s.store().revision();
    let r = s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "r", "expected_id": first})).await;
    assert!(r.is_error);
    assert_eq!(r.error_code.as_deref(), Some("id_mismatch"));
    assert!(r.text_content().contains(&second), "names the actual top: {}", r.text_content());
    assert_eq!(s.store().len(), 2);
    assert_eq!(s.store().revision(), rev, "no event for a refused resolve");
    let r = s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "r", "expected_id": second})).await;
    assert!(!r.is_error);
}

/// Runs the same resolve call twice, on two tasks at once (a race, or a double click).
async fn two_resolves_at_once(s: &Arc<Session>, params: Value) -> (ToolResult, ToolResult) {
    let call =
        |s: Arc<Session>, params: Value| tokio::spawn(async move { s.call(Actor::Person, "resolve", params).await });
    let (a, b) = tokio::join!(call(s.clone(), params.clone()), call(s.clone(), params));
    (a.expect("first resolve task"), b.expect("second resolve task"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_resolves_never_resolve_the_same_action_twice() {
    let (_d, s) = session();
    let s = Arc::new(s);
    let applied = Arc::new(std::sync::Mutex::new(Vec::new()));
    for label in ["one", "two"] {
        let applied = applied.clone();
        s.api()
            .push_pending_action(CustomToolPendingAction::new(label, move |_| {
                let applied = applied.clone();
                async move {
                    tokio::task::yield_now().await;
                    applied.lock().unwrap().push(label);
                    Ok(ToolResult::empty())
                }
            }))
            .unwrap();
    }
    let (a, b) = two_resolves_at_once(&s, json!({"action": "apply", "reason": "r"})).await;
    assert!(!a.is_error && !b.is_error);
    let mut got = applied.lock().unwrap().clone();
    got.sort();
    assert_eq!(got, vec!["one", "two"], "each action applied exactly once");
    assert!(!s.store().has_pending());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_double_click_with_expected_id_resolves_once() {
    let (_d, s) = session();
    let s = Arc::new(s);
    push(&s, "bottom");
    let top = push(&s, "top");
    let (a, b) = two_resolves_at_once(&s, json!({"action": "apply", "reason": "r", "expected_id": top})).await;
    assert_eq!([a.is_error, b.is_error].iter().filter(|e| **e).count(), 1, "exactly one of the two clicks fails");
    assert_eq!(s.store().len(), 1);
    assert_eq!(s.store().peek().unwrap().label, "bottom");
}

#[tokio::test]
async fn failing_apply_keeps_the_action_as_failed() {
    let (_d, s) = session();
    let id = s
        .api()
        .push_pending_action(CustomToolPendingAction::new("boom", |_| async { Err(ToolError::Io("disk full".into())) }))
        .unwrap();
    let r = resolve(&s, "apply", "r").await;
    assert!(r.is_error);
    assert_eq!(r.error_code.as_deref(), Some("apply_failed"));
    assert!(r.text_content().contains("disk full"), "{}", r.text_content());
    let top = s.store().peek().unwrap();
    assert_eq!(top.id, id, "the action stays on the stack");
    assert_eq!(top.status, ActionStatus::Failed { error: "disk full".into() });
    assert_eq!(r.details.unwrap()["action_id"], json!(id));
}

#[tokio::test]
async fn panicking_apply_is_a_failed_apply() {
    let (_d, s) = session();
    s.api()
        .push_pending_action(CustomToolPendingAction::new("panics", |_| async { panic!("bug in a custom tool") }))
        .unwrap();
    let r = resolve(&s, "apply", "r").await;
    assert!(r.is_error);
    assert_eq!(s.store().peek().unwrap().status.as_str(), "failed");
}

#[tokio::test]
async fn stale_change_set_is_refused_and_marked_stale() {
    let (d, s) = session();
    std::fs::write(d.path().join("a.txt"), "one\n").unwrap();
    let mut cs = ChangeSet::new();
    cs.edit("a.txt", b"one\n".to_vec(), b"ONE\n".to_vec());
    s.api()
        .push_pending_action(CustomToolPendingAction::from_change_set(
            "Edit: a.txt",
            cs,
            s.workspace().clone(),
            "Wrote 1 file.",
        ))
        .unwrap();
    std::fs::write(d.path().join("a.txt"), "someone else\n").unwrap();
    let r = resolve(&s, "apply", "r").await;
    assert!(r.is_error);
    assert_eq!(r.error_code.as_deref(), Some("stale"));
    assert!(r.text_content().contains("a.txt (content changed)"), "{}", r.text_content());
    match s.store().peek().unwrap().status {
        ActionStatus::Stale { files, .. } => assert_eq!(files, vec!["a.txt"]),
        other => panic!("expected stale, got {other:?}"),
    }
    assert_eq!(std::fs::read_to_string(d.path().join("a.txt")).unwrap(), "someone else\n");
    // Discarding a stale action still works.
    assert!(!resolve(&s, "discard", "outdated").await.is_error);
}

#[tokio::test]
async fn change_set_action_applies_and_reports_text() {
    let (d, s) = session();
    std::fs::write(d.path().join("a.txt"), "one\n").unwrap();
    let mut cs = ChangeSet::new();
    cs.edit("a.txt", b"one\n".to_vec(), b"ONE\n".to_vec());
    s.api()
        .push_pending_action(CustomToolPendingAction::from_change_set(
            "Edit: a.txt",
            cs,
            s.workspace().clone(),
            "Wrote 1 file.",
        ))
        .unwrap();
    assert!(s.store().peek().unwrap().has_change_set);
    assert_eq!(resolve(&s, "apply", "r").await.text_content(), "Wrote 1 file.");
    assert_eq!(std::fs::read_to_string(d.path().join("a.txt")).unwrap(), "ONE\n");
}

#[test]
fn push_without_a_store_fails_with_exact_message() {
    let api = CustomToolApi::without_store(None);
    let err =
        api.push_pending_action(CustomToolPendingAction::new("x", |_| async { Ok(ToolResult::empty()) })).unwrap_err();
    assert_eq!(err.to_string(), "Pending action store unavailable for custom tools in this runtime.");
}

#[test]
fn source_tool_name_defaults_to_custom_tool() {
    let (_d, s) = session();
    push(&s, "x");
    assert_eq!(s.store().peek().unwrap().source_tool_name, "custom_tool");
}

struct Named(&'static str, CustomToolApi);

#[async_trait]
impl Tool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn label(&self) -> &str {
        "Named"
    }
    fn description(&self) -> &str {
        "pushes one action"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"], "additionalProperties": false})
    }
    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let n = params["n"].as_u64().unwrap_or(1);
        self.1.push_from(
            &ctx,
            CustomToolPendingAction::new(format!("Named: {n}"), |_| async { Ok(ToolResult::empty()) }),
        )?;
        Ok(ToolResult::text("previewed"))
    }
}

#[test]
fn tool_name_conflicts_are_refused() {
    let (_d, s) = session();
    let err = s.load(|api| vec![Arc::new(Named("resolve", api.clone())) as Arc<dyn Tool>]).unwrap_err();
    assert_eq!(err.to_string(), "Tool name \"resolve\" conflicts with existing tool");
    s.load(|api| vec![Arc::new(Named("mine", api.clone())) as Arc<dyn Tool>]).unwrap();
    let err = s.load(|api| vec![Arc::new(Named("mine", api.clone())) as Arc<dyn Tool>]).unwrap_err();
    assert_eq!(err.to_string(), "Tool name \"mine\" conflicts with existing tool");
}

#[tokio::test]
async fn tool_choice_is_forced_to_resolve_only_while_pending() {
    let (_d, s) = session();
    s.load(|api| vec![Arc::new(Named("mine", api.clone())) as Arc<dyn Tool>]).unwrap();
    assert_eq!(s.tool_choice(), ToolChoice::Auto);
    let names = |s: &Session| s.offered_tools().into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(names(&s), vec!["mine"], "resolve is hidden while nothing is pending");
    let r = s.call(Actor::Agent, "mine", json!({"n": 2})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(s.tool_choice(), ToolChoice::Forced { tool: "resolve".into() });
    assert_eq!(names(&s), vec!["resolve", "mine"]);
    assert_eq!(s.take_reminders(), vec![PREVIEW_REMINDER.to_string()]);
    assert!(s.take_reminders().is_empty(), "reminders are taken once");
    resolve(&s, "apply", "ok").await;
    assert_eq!(s.tool_choice(), ToolChoice::Auto);
    assert_eq!(names(&s), vec!["mine"]);
}

#[tokio::test]
async fn pushes_remember_their_tool_call_and_can_be_rerun() {
    let (_d, s) = session();
    s.load(|api| vec![Arc::new(Named("mine", api.clone())) as Arc<dyn Tool>]).unwrap();
    s.call(Actor::Person, "mine", json!({"n": 3})).await;
    let top = s.store().peek().unwrap();
    assert_eq!(top.origin, Some(ToolCall { tool: "mine".into(), params: json!({"n": 3}) }));
    assert!(s.take_reminders().is_empty(), "a person's call queues no model reminder");
    let r = s.rerun(Actor::Person, &top.id).await;
    assert!(!r.is_error);
    assert_eq!(s.store().len(), 2, "a pending (not stale) action is kept; the new preview goes on top");
}

#[tokio::test]
async fn rerun_of_a_stale_top_replaces_it_with_a_fresh_preview() {
    let (_d, s) = session();
    s.load(|api| vec![Arc::new(Named("mine", api.clone())) as Arc<dyn Tool>]).unwrap();
    s.call(Actor::Person, "mine", json!({"n": 1})).await;
    let id = s.store().peek().unwrap().id;
    s.store().set_status(&id, ActionStatus::Stale { files: vec!["a".into()], message: "m".into() });
    let r = s.rerun(Actor::Person, &id).await;
    assert!(!r.is_error, "{r:?}");
    let list = s.store().list();
    assert_eq!(list.len(), 1, "the stale action was replaced");
    assert_ne!(list[0].id, id);
    assert_eq!(list[0].status, ActionStatus::Pending);
    assert!(s.history()[0].header.starts_with("Discard: 1 [Named]"), "{}", s.history()[0].header);
}

#[tokio::test]
async fn invalid_params_never_reach_the_tool() {
    let (_d, s) = session();
    s.load(|api| vec![Arc::new(Named("mine", api.clone())) as Arc<dyn Tool>]).unwrap();
    let r = s.call(Actor::Agent, "mine", json!({"n": 0})).await;
    assert!(r.is_error);
    assert!(r.text_content().contains("`n`"), "{}", r.text_content());
    assert_eq!(s.store().len(), 0);
    let r = s.call(Actor::Agent, "nope", json!({})).await;
    assert_eq!(r.text_content(), "Unknown tool `nope`. Known tools: resolve, set_policy, await_decision, mine.");
}

#[tokio::test]
async fn history_renders_accept_discard_and_errors_newest_first() {
    let (_d, s) = session();
    s.api()
        .push_pending_action(CustomToolPendingAction::new("Fail: x", |_| async {
            Err(ToolError::Failed("nope".into()))
        }))
        .unwrap();
    push(&s, "Batch rename: 2 files");
    push(&s, "AST Edit: 1 replacement in 1 file");
    resolve(&s, "apply", "good").await;
    resolve(&s, "discard", "bad").await;
    resolve(&s, "apply", "try").await;
    let h: Vec<String> = s.history().into_iter().map(|e| e.header).collect();
    assert_eq!(h[1], "Discard: 2 files [Batch rename]");
    assert_eq!(h[2], "Accept: 1 replacement in 1 file [AST Edit]");
    assert!(h[0].starts_with("Error: Apply failed for \"Fail: x\""), "{}", h[0]);
}

#[tokio::test]
async fn wait_until_resolved_returns_when_the_stack_empties() {
    let (_d, s) = session();
    let s = Arc::new(s);
    push(&s, "x");
    let waiter = tokio::spawn({
        let s = s.clone();
        async move { s.wait_until_resolved().await }
    });
    resolve(&s, "apply", "ok").await;
    waiter.await.unwrap();
    assert!(!s.store().has_pending());
}

#[tokio::test]
async fn observers_see_every_transcript_entry_as_it_is_recorded() {
    let (_d, s) = session();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    s.observe(move |e| seen2.lock().unwrap().push((e.call.tool.clone(), HistoryEntry::from_transcript(e).is_some())));
    push(&s, "x");
    resolve(&s, "apply", "ok").await;
    resolve(&s, "apply", "again").await; // refused before anything ran: not a history entry
    assert_eq!(*seen.lock().unwrap(), vec![("resolve".to_string(), true), ("resolve".to_string(), false)]);
}

// ---- Who decides: the `human` and `agent` policies, enforced by `Session::call` ----

fn human_session() -> (tempfile::TempDir, Arc<Session>) {
    let dir = tempfile::tempdir().unwrap();
    let s = Session::with_store(dir.path(), ResolvePolicy::Human, PendingActionStore::with_id_prefix("h")).unwrap();
    s.load(|api| vec![Arc::new(Named("mine", api.clone())) as Arc<dyn Tool>]).unwrap();
    (dir, Arc::new(s))
}

/// Pushes an action whose applies are counted (to prove nothing was applied).
fn push_counting_applies(s: &Session) -> Arc<AtomicUsize> {
    let applied = Arc::new(AtomicUsize::new(0));
    let a2 = applied.clone();
    s.api()
        .push_pending_action(CustomToolPendingAction::new("x", move |_| {
            a2.fetch_add(1, Ordering::SeqCst);
            async { Ok(ToolResult::empty()) }
        }))
        .unwrap();
    applied
}

/// Waits (on store events, no polling) until the top action carries a proposal.
async fn proposal_on_top(s: &Session) -> Proposal {
    let mut events = s.store().subscribe();
    loop {
        if let Some(p) = s.store().peek().and_then(|a| a.proposal) {
            return p;
        }
        events.recv().await.expect("the store is alive");
    }
}

fn agent_resolve(
    s: &Arc<Session>,
    ctx: ToolContext,
    action: &str,
    reason: &str,
) -> tokio::task::JoinHandle<ToolResult> {
    let s = s.clone();
    let params = json!({"action": action, "reason": reason});
    tokio::spawn(async move { s.call_with(Actor::Agent, ctx, "resolve", params).await })
}

#[tokio::test]
async fn human_policy_agent_resolve_waits_and_returns_the_persons_decision() {
    let (_d, s) = human_session();
    let ctx = ToolContext::new("push-1").with_client("claude-code");
    assert!(!s.call_with(Actor::Agent, ctx, "mine", json!({"n": 1})).await.is_error);
    let id = s.store().peek().unwrap().id;
    assert_eq!(s.store().peek().unwrap().pushed_by.as_deref(), Some("claude-code"), "the card names who pushed it");

    let waiting =
        agent_resolve(&s, ToolContext::new("agent-resolve").with_client("claude-code"), "apply", "tests pass");
    let proposal = proposal_on_top(&s).await;
    assert_eq!(proposal.choice, ResolveAction::Apply);
    assert_eq!(proposal.reason, "tests pass");
    assert_eq!(proposal.client.as_deref(), Some("claude-code"));
    assert!(s.store().has_pending(), "an agent's resolve under `human` decides nothing by itself");
    assert!(!waiting.is_finished(), "the agent waits for the person");

    let person = s
        .call(Actor::Person, "resolve", json!({"action": "discard", "reason": "not this week", "expected_id": id}))
        .await;
    assert!(!person.is_error, "{person:?}");
    let seen = waiting.await.unwrap();
    assert!(!seen.is_error, "{seen:?}");
    let text = seen.text_content();
    assert!(
        text.starts_with("Discarded: Named: 1. Reason: not this week"),
        "the agent sees the person's result: {text}"
    );
    assert!(text.ends_with("Decided by the person: discarded. Reason: not this week"), "{text}");
    assert_eq!(seen.details.as_ref().unwrap()["decided_by"], "person");
    assert_eq!(seen.details.as_ref().unwrap()["action"], "discard", "the person's choice, not the agent's");

    let history = s.history();
    assert_eq!(history.len(), 1, "one decision, recorded once (the relay to the agent is not a second one)");
    assert_eq!(history[0].actor, Actor::Person, "the person decided");
    assert_eq!(history[0].proposal.as_ref().and_then(|p| p.client.as_deref()), Some("claude-code"), "who asked");
    let transcript = s.transcript();
    let relay = transcript.iter().find(|e| e.call_id == "agent-resolve").unwrap();
    let decider = transcript.iter().find(|e| e.actor == Actor::Person).unwrap();
    assert_eq!(relay.relay_of.as_deref(), Some(decider.call_id.as_str()), "the relay names the deciding call");
}

#[tokio::test]
async fn human_policy_wait_survives_a_failed_apply_and_ends_with_the_decision() {
    let (_d, s) = human_session();
    let attempts = Arc::new(AtomicUsize::new(0));
    let a2 = attempts.clone();
    s.api()
        .push_pending_action(CustomToolPendingAction::new("Flaky", move |_| {
            let n = a2.fetch_add(1, Ordering::SeqCst);
            async move {
                if n == 0 {
                    Err(ToolError::Failed("disk hiccup".into()))
                } else {
                    Ok(ToolResult::text("written"))
                }
            }
        }))
        .unwrap();
    let waiting = agent_resolve(&s, ToolContext::new("w"), "apply", "go");
    proposal_on_top(&s).await;
    let first = s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "try"})).await;
    assert!(first.is_error, "the first apply fails: {first:?}");
    assert!(!waiting.is_finished(), "a failed apply keeps the action, so the agent keeps waiting");
    let second = s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "again"})).await;
    assert!(!second.is_error, "{second:?}");
    let seen = waiting.await.unwrap();
    assert!(seen.text_content().starts_with("written"), "{seen:?}");
    assert!(seen.text_content().ends_with("Decided by the person: applied. Reason: again"), "{seen:?}");
}

#[tokio::test]
async fn human_policy_cancelled_resolve_leaves_the_action_pending() {
    let (_d, s) = human_session();
    let applied = push_counting_applies(&s);
    let cancel = CancellationToken::new();
    let waiting = agent_resolve(&s, ToolContext::new("c").with_cancel(cancel.clone()), "apply", "go");
    proposal_on_top(&s).await;
    cancel.cancel();
    let seen = waiting.await.unwrap();
    assert!(seen.is_error);
    assert_eq!(seen.error_code.as_deref(), Some("cancelled"), "{seen:?}");
    assert!(s.store().has_pending(), "a cancelled wait leaves the action pending");
    let proposal = s.store().peek().unwrap().proposal.expect("the proposal stays beside the action");
    assert!(!proposal.waiting, "shown as no longer waiting");
    assert_eq!(applied.load(Ordering::SeqCst), 0, "nothing was applied");
    assert!(s.history().is_empty());
}

#[tokio::test]
async fn closing_the_session_ends_a_waiting_resolve_and_refuses_later_calls() {
    let (_d, s) = human_session();
    let applied = push_counting_applies(&s);
    let waiting = agent_resolve(&s, ToolContext::new("c"), "apply", "go");
    proposal_on_top(&s).await;
    s.close();
    let seen = waiting.await.unwrap();
    assert_eq!(seen.error_code.as_deref(), Some("closed"), "{seen:?}");
    assert!(seen.text_content().contains("nothing was applied"), "{}", seen.text_content());
    assert!(seen.text_content().contains("resolve-desk "), "says how to reopen: {}", seen.text_content());
    let later = s.call(Actor::Agent, "mine", json!({"n": 1})).await;
    assert_eq!(later.error_code.as_deref(), Some("closed"), "later calls say the desk is closed");
    assert_eq!(applied.load(Ordering::SeqCst), 0, "closing never applies");
}

#[tokio::test(start_paused = true)]
async fn a_waiting_resolve_reports_progress_until_the_person_decides() {
    let (_d, s) = human_session();
    push(&s, "x");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let sink: resolve_engine::tool::ProgressSink = Arc::new(move |_id: &str, p: Progress| {
        let _ = tx.send(p);
    });
    let waiting = agent_resolve(&s, ToolContext::new("p").with_progress(sink), "discard", "no");
    let first = rx.recv().await.unwrap();
    let second = rx.recv().await.unwrap(); // time is paused: the heartbeat's clock advances when idle
    assert!(first.message.as_deref().unwrap().contains("Waiting for the person"), "{first:?}");
    assert!(second.done > first.done, "heartbeats keep coming while waiting");
    assert!(!waiting.is_finished());
    s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "fine"})).await;
    assert!(!waiting.await.unwrap().is_error);
}

#[tokio::test]
async fn agent_policy_resolve_decides_at_once_and_history_shows_the_agent() {
    let (_d, s) = session();
    push(&s, "x");
    let r = s
        .call_with(
            Actor::Agent,
            ToolContext::new("a").with_client("m"),
            "resolve",
            json!({"action": "apply", "reason": "ok"}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    assert!(!s.store().has_pending());
    assert_eq!(s.history()[0].actor, Actor::Agent);
    assert_eq!(s.history()[0].client.as_deref(), Some("m"), "the history names the deciding agent");
    assert!(r.details.unwrap().get("decided_by").is_none(), "no relay under `agent`");
    push(&s, "y");
    let by_person = s.call(Actor::Person, "resolve", json!({"action": "discard", "reason": "no"})).await;
    assert!(!by_person.is_error, "{by_person:?}");
    assert_eq!(s.history()[0].client, None, "a person's decision names no agent");
}

#[tokio::test]
async fn set_policy_changes_who_decides_only_while_nothing_is_pending() {
    let (_d, s) = human_session();
    let by_agent = s.call(Actor::Agent, "set_policy", json!({"policy": "agent"})).await;
    assert!(by_agent.is_error && by_agent.text_content().contains("agent cannot change"), "{by_agent:?}");
    assert_eq!(s.policy(), ResolvePolicy::Human);
    push(&s, "x");
    let while_pending = s.call(Actor::Person, "set_policy", json!({"policy": "agent"})).await;
    assert!(while_pending.is_error, "{while_pending:?}");
    assert!(while_pending.text_content().contains("1 action is waiting"), "{}", while_pending.text_content());
    assert_eq!(s.policy(), ResolvePolicy::Human);
    s.call(Actor::Person, "resolve", json!({"action": "discard", "reason": "clear"})).await;
    let ok = s.call(Actor::Person, "set_policy", json!({"policy": "agent"})).await;
    assert!(!ok.is_error, "{ok:?}");
    assert_eq!(s.policy(), ResolvePolicy::Agent);
    assert!(
        s.transcript().iter().any(|e| e.call.tool == "set_policy" && !e.result.is_error),
        "recorded in the transcript"
    );
    assert!(!s.offered_tools().iter().any(|t| t.name == "set_policy"), "never offered to a model");
    push(&s, "y");
    let r = s.call(Actor::Agent, "resolve", json!({"action": "apply", "reason": "now mine"})).await;
    assert!(!r.is_error && !s.store().has_pending(), "under `agent` the agent's resolve decides: {r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_decision_reaches_the_agent_only_after_the_action_left_the_stack() {
    // The agent builds its next request as soon as its resolve returns; by then the stack
    // must no longer hold the action, or that request would still be forced to `resolve`.
    for round in 0..50 {
        let (_d, s) = human_session();
        push(&s, "x");
        let waiting = agent_resolve(&s, ToolContext::new("w"), "apply", "go");
        proposal_on_top(&s).await;
        let person = {
            let s = s.clone();
            tokio::spawn(
                async move { s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "ok"})).await },
            )
        };
        let seen = waiting.await.unwrap();
        assert!(!seen.is_error, "{seen:?}");
        assert!(
            !s.store().has_pending(),
            "round {round}: the agent was answered while the action was still on the stack"
        );
        assert_eq!(s.tool_choice(), ToolChoice::Auto, "round {round}: the next request must not force resolve");
        person.await.unwrap();
    }
}

#[tokio::test]
async fn typed_resolve_decides_refuses_and_fails_through_the_one_door() {
    let (_d, s) = session();
    let refused = s
        .resolve(
            Actor::Person,
            Resolve {
                choice: ResolveAction::Apply,
                reason: "go".into(),
                expected_id: None,
                leave_out: None,
                review: None,
                edits: Vec::new(),
            },
        )
        .await;
    assert_eq!(
        refused,
        ResolveOutcome::Refused {
            code: Some(ErrorCode::NoPendingAction),
            message: "No pending action to resolve. Nothing to apply or discard.".into()
        }
    );
    s.api()
        .push_pending_action(CustomToolPendingAction::new("breaks", |_| async {
            Err(ToolError::Failed("disk on fire".into()))
        }))
        .unwrap();
    let id = push(&s, "Named: ok");
    let wrong = s
        .resolve(
            Actor::Person,
            Resolve {
                choice: ResolveAction::Apply,
                reason: "r".into(),
                expected_id: Some("nope".into()),
                leave_out: None,
                review: None,
                edits: Vec::new(),
            },
        )
        .await;
    assert!(matches!(wrong, ResolveOutcome::Refused { code: Some(ErrorCode::IdMismatch), .. }), "{wrong:?}");
    let decided = s
        .resolve(
            Actor::Person,
            Resolve {
                choice: ResolveAction::Discard,
                reason: " no ".into(),
                expected_id: Some(id.clone()),
                leave_out: None,
                review: None,
                edits: Vec::new(),
            },
        )
        .await;
    let ResolveOutcome::Decided { details, text, decided_by } = decided else { panic!("{decided:?}") };
    assert_eq!(
        (details.action, details.reason.as_str(), details.action_id.as_str()),
        (ResolveAction::Discard, " no ", id.as_str()),
        "the reason is kept byte for byte (SPEC §4)"
    );
    assert_eq!(text, "Discarded: Named: ok. Reason:  no ");
    assert_eq!(decided_by, Actor::Person);
    let failed = s
        .resolve(
            Actor::Script,
            Resolve {
                choice: ResolveAction::Apply,
                reason: "try".into(),
                expected_id: None,
                leave_out: None,
                review: None,
                edits: Vec::new(),
            },
        )
        .await;
    let ResolveOutcome::ApplyFailed { details, status, .. } = failed else { panic!("{failed:?}") };
    assert_eq!(details.label, "breaks");
    assert!(matches!(status, Some(ActionStatus::Failed { .. })), "the action stays, failed: {status:?}");
    let history = s.history();
    assert_eq!(history.len(), 2, "the decided and the failed resolve are in the history, refusals are not");
    assert_eq!((history[0].actor, history[0].is_error), (Actor::Script, true));
    assert_eq!(s.transcript().len(), 4, "every typed resolve is a recorded call");
}

#[tokio::test]
async fn call_records_name_the_actions_pushed_and_who_decided() {
    let (_d, s) = human_session();
    let pushed = s.call_traced(Actor::Agent, ToolContext::new("push-1"), "mine", json!({"n": 1})).await;
    assert_eq!(pushed.pushed, vec![s.store().peek().unwrap().id], "the call names the action it pushed");
    assert_eq!(pushed.decided_by, None);
    let id = pushed.pushed[0].clone();
    let waiting = {
        let s = s.clone();
        tokio::spawn(async move {
            s.call_traced(
                Actor::Agent,
                ToolContext::new("agent-resolve"),
                "resolve",
                json!({"action": "apply", "reason": "ok"}),
            )
            .await
        })
    };
    proposal_on_top(&s).await;
    let person = s
        .resolve(
            Actor::Person,
            Resolve {
                choice: ResolveAction::Apply,
                reason: "fine".into(),
                expected_id: Some(id),
                leave_out: None,
                review: None,
                edits: Vec::new(),
            },
        )
        .await;
    assert!(matches!(person, ResolveOutcome::Decided { decided_by: Actor::Person, .. }), "{person:?}");
    let relayed = waiting.await.unwrap();
    assert_eq!(relayed.decided_by, Some(Actor::Person), "the agent learns, typed, that the person decided");
    assert!(relayed.pushed.is_empty());
}

// ---- Exact errors (issue 11): the reason verbatim, unknown keys named, tools' own messages first ----

/// Reasons with what a trim would lose: outer spaces, tabs, newlines, a CRLF, non-ASCII.
const VERBATIM_REASONS: [&str; 3] = ["  keep the spaces  ", "\n\tline one\r\nline two\n\n", " é — ok\u{a0}"];

#[tokio::test]
async fn resolve_passes_the_reason_byte_for_byte() {
    let (_d, s) = session();
    for reason in VERBATIM_REASONS {
        let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let (on_apply, on_reject) = (seen.clone(), seen.clone());
        // apply(reason): what the action sees, the result details, the history.
        s.api()
            .push_pending_action(CustomToolPendingAction::new("Mine: apply", move |reason| {
                on_apply.lock().unwrap().push(reason);
                async { Ok(ToolResult::empty()) }
            }))
            .unwrap();
        let r = resolve(&s, "apply", reason).await;
        assert!(!r.is_error, "{r:?}");
        assert_eq!(r.details.as_ref().unwrap()["reason"], reason);
        assert_eq!(s.history()[0].details.reason, reason, "the history keeps it too");
        // reject(reason) of an action that has one.
        s.api()
            .push_pending_action(
                CustomToolPendingAction::new("Mine: reject", |_| async { Ok(ToolResult::empty()) }).with_reject(
                    move |reason| {
                        on_reject.lock().unwrap().push(reason);
                        async { Ok(None) }
                    },
                ),
            )
            .unwrap();
        let r = resolve(&s, "discard", reason).await;
        assert_eq!(r.text_content(), format!("Discarded: Mine: reject. Reason: {reason}"));
        assert_eq!(r.details.as_ref().unwrap()["reason"], reason);
        assert_eq!(
            *seen.lock().unwrap(),
            vec![reason.to_string(), reason.to_string()],
            "apply and reject see it as given"
        );
        // The typed door (the app's buttons, scripts) too.
        push(&s, "Mine: typed");
        let outcome = s
            .resolve(
                Actor::Person,
                Resolve {
                    choice: ResolveAction::Discard,
                    reason: reason.into(),
                    expected_id: None,
                    leave_out: None,
                    review: None,
                    edits: Vec::new(),
                },
            )
            .await;
        match outcome {
            ResolveOutcome::Decided { details, text, .. } => {
                assert_eq!(details.reason, reason);
                assert_eq!(text, format!("Discarded: Mine: typed. Reason: {reason}"));
            }
            other => panic!("expected a decision, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn an_agents_proposal_under_the_human_policy_keeps_the_reason_byte_for_byte() {
    let (_d, s) = human_session();
    push_counting_applies(&s);
    let reason = VERBATIM_REASONS[1];
    let waiting = agent_resolve(&s, ToolContext::new("agent-resolve"), "apply", reason);
    assert_eq!(proposal_on_top(&s).await.reason, reason);
    s.call(Actor::Person, "resolve", json!({"action": "discard", "reason": reason})).await;
    let seen = waiting.await.unwrap();
    assert!(seen.text_content().starts_with(&format!("Discarded: x. Reason: {reason}")), "{}", seen.text_content());
}

#[tokio::test]
async fn only_a_blank_reason_is_refused() {
    let (_d, s) = session();
    push(&s, "x");
    for blank in ["", " ", "\n\t \r\n", "\u{a0}\u{2003}"] {
        let r = resolve(&s, "apply", blank).await;
        assert_eq!(
            r.text_content(),
            "`reason` must be a non-empty string: say why you apply or discard this action.",
            "{blank:?}"
        );
    }
    assert_eq!(s.store().len(), 1, "nothing was decided");
}

#[tokio::test]
async fn unknown_key_of_resolve_is_refused_naming_it_and_listing_known_keys() {
    let (_d, s) = session();
    push(&s, "x");
    let r = s.call(Actor::Agent, "resolve", json!({"action": "apply", "reasons": "ok"})).await;
    assert_eq!(
        r.text_content(),
        "Unknown parameter `reasons` for `resolve`: known parameters are `action`, `reason`, `expected_id`, `leave_out`, `review`, `edits`. Did you mean `reason`?"
    );
    assert_eq!(r.error_code.as_deref(), Some("invalid_params"));
    assert_eq!(s.store().len(), 1);
}

#[tokio::test]
async fn resolve_messages_name_the_bad_value() {
    let (_d, s) = session();
    push(&s, "x");
    let text = |r: ToolResult| r.text_content();
    let r = s.call(Actor::Agent, "resolve", json!({"action": "accept", "reason": "ok"})).await;
    assert_eq!(text(r), "`action` must be \"apply\" or \"discard\", got \"accept\".");
    let r = s.call(Actor::Agent, "resolve", json!({"reason": "ok"})).await;
    assert_eq!(text(r), "`action` is required: \"apply\" or \"discard\".");
    let r = s.call(Actor::Agent, "resolve", json!({"action": "apply", "reason": 42})).await;
    assert_eq!(text(r), "`reason` must be a non-empty string, got 42: say why you apply or discard this action.");
    let r = s.call(Actor::Agent, "resolve", json!({"action": "apply", "reason": "ok", "expected_id": 7})).await;
    assert_eq!(text(r), "`expected_id` must be a string (the id of the action you reviewed), got 7.");
    assert_eq!(s.store().len(), 1);
}

#[tokio::test]
async fn a_custom_tool_with_a_closed_schema_refuses_unknown_keys_naming_them() {
    let (_d, s) = session();
    s.load(|api| vec![Arc::new(Named("mine", api.clone())) as Arc<dyn Tool>]).unwrap();
    let r = s.call(Actor::Agent, "mine", json!({"n": 1, "m": 2})).await;
    assert_eq!(
        r.text_content(),
        "Unknown parameter `m` for `mine`: known parameters are `n`. Remove it and call again."
    );
    assert_eq!(r.error_code.as_deref(), Some("invalid_params"));
    assert_eq!(s.store().len(), 0, "nothing ran");
    // The built-in `set_policy` gets the same check from its schema.
    let r = s.call(Actor::Person, "set_policy", json!({"policy": "human", "polcy": "agent"})).await;
    assert_eq!(
        r.text_content(),
        "Unknown parameter `polcy` for `set_policy`: known parameters are `policy`. Did you mean `policy`?"
    );
}

/// A tool whose own check gives its exact message; the schema would say something else.
struct OwnCheck;

#[async_trait]
impl Tool for OwnCheck {
    fn name(&self) -> &str {
        "own"
    }
    fn label(&self) -> &str {
        "Own"
    }
    fn description(&self) -> &str {
        "checks its own parameters"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"items": {"type": "array", "minItems": 1}}, "required": ["items"]})
    }
    fn check_params(&self, params: &Value) -> Result<(), ToolError> {
        match params.get("items").and_then(Value::as_array) {
            Some(items) if !items.is_empty() => Ok(()),
            _ => Err(ToolError::InvalidParams("`items` must include at least one item".into())),
        }
    }
    async fn execute(&self, _ctx: ToolContext, _params: Value) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text("ran"))
    }
}

#[tokio::test]
async fn a_tools_own_check_runs_before_the_schema_and_its_message_wins() {
    let (_d, s) = session();
    s.load(|_| vec![Arc::new(OwnCheck) as Arc<dyn Tool>]).unwrap();
    for params in [json!({}), json!({"items": []})] {
        let r = s.call(Actor::Agent, "own", params).await;
        assert_eq!(r.text_content(), "`items` must include at least one item");
    }
    // What the tool's own check lets through still meets the schema (the backstop).
    let r = s.call(Actor::Agent, "own", json!({"items": [1], "extra": "x"})).await;
    assert_eq!(r.text_content(), "ran", "an open schema takes extra keys");
}

// ---- Lean transcript: large results are trimmed once the observers have seen them ----

/// Answers with 200 KB of text and details listing 5,000 files, and pushes an action whose
/// apply answers with 10 KB of text.
struct Big(CustomToolApi);

#[async_trait]
impl Tool for Big {
    fn name(&self) -> &str {
        "big"
    }
    fn label(&self) -> &str {
        "Big"
    }
    fn description(&self) -> &str {
        "a large preview"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(&self, ctx: ToolContext, _params: Value) -> Result<ToolResult, ToolError> {
        let id = self.0.push_from(
            &ctx,
            CustomToolPendingAction::new("Big: 5000 files", |_| async {
                Ok(ToolResult::text("applied line\n".repeat(800)))
            }),
        )?;
        let files: Vec<Value> = (0..5000).map(|i| json!({"path": format!("src/f{i}.ts"), "replacements": 1})).collect();
        let text = format!("Big preview\n{}", "-console.log(x)\n+logger.debug(x)\n".repeat(6000));
        Ok(ToolResult::text(text).with_details(json!({"summary": {"files": 5000}, "files": files, "action_id": id})))
    }
}

#[tokio::test]
async fn the_transcript_trims_large_results_and_keeps_resolves_whole() {
    let (_d, s) = session();
    s.load(|api| vec![Arc::new(Big(api.clone())) as Arc<dyn Tool>]).unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    s.observe(move |e| seen2.lock().unwrap().push((e.result.text_content().len(), e.elided)));
    let preview = s.call(Actor::Agent, "big", json!({})).await;
    assert!(!preview.is_error, "{}", preview.text_content());
    let full_text = preview.text_content().len();
    let full_details = serde_json::to_vec(preview.details.as_ref().unwrap()).unwrap().len();
    assert!(full_text > 100_000 && full_details > 100_000, "the caller gets the whole result");
    let applied = resolve(&s, "apply", "ok").await;
    assert!(!applied.is_error);

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, vec![(full_text, 0), (applied.text_content().len(), 0)], "observers see every entry whole");

    let t = s.transcript();
    assert_eq!(s.transcript_len(), 2);
    let e = &t[0];
    let text = e.result.text_content();
    assert!(text.len() <= lean::TRANSCRIPT_TEXT_BYTES + 4 && text.starts_with("Big preview\n"), "{}", text.len());
    let details = e.result.details.as_ref().unwrap();
    let kept_details = serde_json::to_vec(details).unwrap().len();
    assert!(kept_details <= lean::TRANSCRIPT_DETAILS_BYTES, "{kept_details}");
    assert_eq!(details["action_id"], "a1", "small members stay");
    assert_eq!(details["summary"]["files"], 5000);
    assert!(!details["files"].as_array().unwrap().is_empty(), "a prefix of the file list stays");
    assert_eq!(e.elided, (full_text - text.len() + "…".len()) + (full_details - kept_details), "bytes dropped");
    let json = serde_json::to_value(e).unwrap();
    assert_eq!(json["elided"], e.elided, "a reader of the transcript is told");

    let r = &t[1];
    assert_eq!(r.call.tool, "resolve");
    assert_eq!(r.elided, 0);
    assert_eq!(r.result, applied, "a resolve entry is kept whole");
    assert!(serde_json::to_value(r).unwrap().get("elided").is_none());
    let history = s.history();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].text, applied.text_content(), "the history reads the whole resolve");
    assert_eq!(history[0].details.label, "Big: 5000 files");
}
