//! The `human` policy: an agent's `resolve` waits in the engine until a person decides, and
//! the person's decision is what the model reads. (Needs the engine's policy work on main.)

use super::*;
use resolve_engine::{ActionInfo, ResolveAction};
use tokio::sync::mpsc;

/// Waits (on store events, no sleeps) until the top action carries a proposal.
async fn proposal_on_top(session: &Session) -> ActionInfo {
    let mut events = session.store().subscribe();
    loop {
        if let Some(top) = session.store().peek().filter(|a| a.proposal.is_some()) {
            return top;
        }
        events.recv().await.expect("store events keep coming");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn human_policy_waits_for_the_person_and_the_model_reads_their_decision() {
    let d = desk(ResolvePolicy::Human);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(None, &[("c1", "ast_edit", ast_edit_args("a.ts"))]),
        FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "apply", "reason": "the model likes it"}))]),
        FakeReply::text("Understood, leaving a.ts as it is."),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, None);
    let session = d.session.clone();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let turn = tokio::spawn(async move {
        agent
            .run_turn(&session, "use logger.debug", CancellationToken::new(), move |e| {
                let _ = tx.send(e);
            })
            .await
    });

    let top = proposal_on_top(&d.session).await;
    let proposal = top.proposal.clone().unwrap();
    assert_eq!(proposal.choice, ResolveAction::Apply);
    assert_eq!(proposal.reason, "the model likes it");
    assert_eq!(proposal.client.as_deref(), Some("fake-model"), "the model is named as the proposer");
    assert_eq!(top.pushed_by.as_deref(), Some("fake-model"), "the preview records the model that pushed it");
    assert_eq!(d.read("a.ts"), "console.log(1);\n", "the model's resolve decided nothing");
    let mut seen = Vec::new();
    while let Ok(e) = rx.try_recv() {
        seen.push(e);
    }
    assert!(
        seen.iter().any(|e| matches!(e, AgentEvent::WaitingForPerson { proposed_action: Some(a), .. } if a == "apply")),
        "waiting_for_person was emitted before the call blocked: {seen:?}"
    );

    let person = d
        .session
        .call(
            Actor::Person,
            "resolve",
            json!({"action": "discard", "reason": "not in this release", "expected_id": top.id}),
        )
        .await;
    assert!(!person.is_error, "{person:?}");
    assert_eq!(turn.await.unwrap().unwrap(), TurnOutcome::Answered);

    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3);
    let last = messages(&reqs[2].body).last().unwrap().clone();
    assert_eq!(last["tool_call_id"], "c2");
    let content = last["content"].as_str().unwrap();
    assert!(
        content.contains("Decided by the person: discarded. Reason: not in this release"),
        "the model reads the person's decision and reason as the resolve result: {content}"
    );
    assert_eq!(d.read("a.ts"), "console.log(1);\n", "discarded by the person");
    while let Ok(e) = rx.try_recv() {
        seen.push(e);
    }
    let resolve_result = seen
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolResult { tool, details, .. } if tool == RESOLVE_TOOL_NAME => details.clone(),
            _ => None,
        })
        .expect("a resolve result");
    assert_eq!(resolve_result["decided_by"], "person");
    assert!(d.session.transcript().iter().any(|e| e.actor == Actor::Person && e.call.tool == RESOLVE_TOOL_NAME));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_while_waiting_for_the_person_ends_the_turn_and_keeps_the_action() {
    let d = desk(ResolvePolicy::Human);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(None, &[("c1", "ast_edit", ast_edit_args("a.ts"))]),
        FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "apply", "reason": "ok"}))]),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, None);
    let session = d.session.clone();
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    let turn = tokio::spawn(async move { agent.run_turn(&session, "go", token, |_| {}).await });
    proposal_on_top(&d.session).await;
    cancel.cancel();
    assert!(matches!(turn.await.unwrap(), Err(AgentError::Cancelled)));
    assert_eq!(d.session.store().len(), 1, "the action stays pending");
    assert_eq!(d.read("a.ts"), "console.log(1);\n");
}

/// Regression (found here, fixed in the engine): the person's decision must reach the
/// waiting agent only after the action left the stack, or the loop's next request would
/// still offer and force `resolve` on what is about to be an empty stack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_persons_decision_the_next_request_no_longer_forces_resolve() {
    for _ in 0..20 {
        let d = desk(ResolvePolicy::Human);
        let fake = FakeLlm::start(vec![
            FakeReply::tool_calls(None, &[("c1", "ast_edit", ast_edit_args("a.ts"))]),
            FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "apply", "reason": "ok"}))]),
            FakeReply::text("ok"),
        ])
        .await
        .unwrap();
        let mut agent = live(&fake, None);
        let session = d.session.clone();
        let turn = tokio::spawn(async move { agent.run_turn(&session, "go", CancellationToken::new(), |_| {}).await });
        let top = proposal_on_top(&d.session).await;
        d.session
            .call(Actor::Person, "resolve", json!({"action": "discard", "reason": "no", "expected_id": top.id}))
            .await;
        turn.await.unwrap().unwrap();
        let reqs = fake.requests();
        assert!(
            reqs[2].body.get("tool_choice").is_none(),
            "resolve still forced after the person decided: {}",
            reqs[2].body["tool_choice"]
        );
    }
}

/// Waits (on store events) until the top action's proposal says its agent is not waiting.
async fn proposal_not_waiting(session: &Session) {
    let mut events = session.store().subscribe();
    loop {
        if session.store().peek().and_then(|a| a.proposal).is_some_and(|p| !p.waiting) {
            return;
        }
        events.recv().await.expect("store events keep coming");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bounded_wait_is_renewed_by_the_loop_without_a_model_request() {
    let d = desk(ResolvePolicy::Human);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(None, &[("c1", "ast_edit", ast_edit_args("a.ts"))]),
        FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "apply", "reason": "looks right"}))]),
        FakeReply::text("Applied."),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, None).with_resolve_wait(std::time::Duration::from_millis(200));
    let session = d.session.clone();
    let turn = tokio::spawn(async move { agent.run_turn(&session, "go", CancellationToken::new(), |_| {}).await });
    // The first bounded wait ends with no decision (the proposal shows "not waiting"); the loop
    // asks again by itself, so it waits once more.
    proposal_on_top(&d.session).await;
    proposal_not_waiting(&d.session).await;
    let mut events = d.session.store().subscribe();
    while !d.session.store().peek().and_then(|a| a.proposal).is_some_and(|p| p.waiting) {
        events.recv().await.unwrap();
    }
    assert_eq!(fake.requests().len(), 2, "no model request while the person reads");
    let top = d.session.store().peek().unwrap();
    let person = d
        .session
        .call(Actor::Person, "resolve", json!({"action": "apply", "reason": "checked", "expected_id": top.id}))
        .await;
    assert!(!person.is_error, "{person:?}");
    assert_eq!(turn.await.unwrap().unwrap(), TurnOutcome::Answered);
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3, "preview, resolve, answer: the renewed waits cost no request");
    let content = messages(&reqs[2].body).last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(content.contains("Decided by the person: applied. Reason: checked"), "{content}");
    assert!(!content.contains("has not decided yet"), "the model never saw a renewed wait: {content}");
    assert_eq!(d.read("a.ts"), "logger.debug(1);\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_made_while_the_turn_was_stopped_reaches_the_model_with_the_next_prompt() {
    let d = desk(ResolvePolicy::Human);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(None, &[("c1", "ast_edit", ast_edit_args("a.ts"))]),
        FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "apply", "reason": "ok"}))]),
        FakeReply::text("Noted."),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, None);
    let session = d.session.clone();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let turn = tokio::spawn(async move {
        let r = agent.run_turn(&session, "go", cancel, |_| {}).await;
        (agent, r)
    });
    proposal_on_top(&d.session).await;
    stop.cancel(); // the person presses Stop
    let (mut agent, r) = turn.await.unwrap();
    assert!(matches!(r, Err(AgentError::Cancelled)), "{r:?}");
    let top = d.session.store().peek().expect("still pending");
    let person = d
        .session
        .call(Actor::Person, "resolve", json!({"action": "discard", "reason": "not now", "expected_id": top.id}))
        .await;
    assert!(!person.is_error);
    let (r, _) = turn_again(&mut agent, &d.session, "what happened?").await;
    assert_eq!(r.unwrap(), TurnOutcome::Answered);
    let reqs = fake.requests();
    let user = messages(&reqs.last().unwrap().body).iter().rev().find(|m| m["role"] == "user").unwrap().clone();
    let content = user["content"].as_str().unwrap();
    assert!(content.contains("Decided by the person: discarded. Reason: not now"), "{content}");
    assert!(content.ends_with("what happened?"), "then the person's prompt: {content}");
}

async fn turn_again(
    agent: &mut AgentLoop,
    session: &Session,
    prompt: &str,
) -> (Result<TurnOutcome, AgentError>, Vec<AgentEvent>) {
    turn(agent, session, prompt).await
}
