//! Reviews (issue 27) on real temp dirs: the person's line comments are kept with the pending
//! action (added, edited, deleted; mirrored to the persistence hook; restored with it), and go
//! with the decision — Apply, Apply part, or Request changes (a discard carrying the review).
//! The `resolve` result is the decision line as before, the reason, then every comment as
//! `path:line: "quoted line" — comment` in file order; the details carry the same as data.

use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};

use resolve_engine::*;
use serde_json::{json, Value};

fn session(policy: ResolvePolicy) -> (tempfile::TempDir, Arc<Session>) {
    let dir = tempfile::tempdir().unwrap();
    let s = Session::with_store(dir.path(), policy, PendingActionStore::with_id_prefix("r")).unwrap();
    (dir, Arc::new(s))
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

const A: &str = "let a = 1;\nlog(a);\nlog(2);\n";
const B: &str = "one\ntwo\nthree\n";

/// Pushes an edit of `a.ts` (`log(` → `info(`, with its replacements) and of `b.txt`
/// (`two` → `2`), files written first.
fn push(s: &Session, root: &Path) -> ActionId {
    write(root, "a.ts", A);
    write(root, "b.txt", B);
    let mut cs = ChangeSet::new();
    let after_a = A.replace("log(", "info(");
    cs.edit("a.ts", A.as_bytes().to_vec(), after_a.into_bytes());
    let mut reps = Replacements::new();
    for (start, _) in A.match_indices("log(") {
        reps.push(A[..start].matches('\n').count() as u32 + 1, start, start + 4, b"info(");
    }
    assert!(cs.set_replacements("a.ts", reps));
    cs.edit("b.txt", B.as_bytes().to_vec(), B.replace("two", "2").into_bytes());
    let action = CustomToolPendingAction::from_change_set(
        "AST Edit: 3 replacements in 2 files",
        cs,
        s.workspace().clone(),
        "Applied 3 replacements in 2 files.",
    )
    .with_source_tool_name("ast_edit");
    s.api().push_pending_action(action).unwrap()
}

fn draft(path: &str, side: CommentSide, start: u32, end: u32, text: &str) -> CommentDraft {
    CommentDraft {
        path: path.into(),
        side,
        start_line: start,
        end_line: Some(end),
        text: text.into(),
        replacement_id: None,
    }
}

fn resolve(choice: ResolveAction, reason: &str, id: &str, request_changes: bool) -> Resolve {
    Resolve {
        choice,
        reason: reason.into(),
        expected_id: Some(id.into()),
        leave_out: None,
        review: request_changes.then(|| ReviewRequest { request_changes: true, comments: Vec::new() }),
        edits: Vec::new(),
    }
}

#[tokio::test]
async fn request_changes_discards_and_the_result_carries_every_comment_in_file_order() {
    let (d, s) = session(ResolvePolicy::Human);
    let id = push(&s, d.path());
    // Written out of order: b.txt first, then a.ts bottom-up.
    s.add_comment(&id, &draft("b.txt", CommentSide::New, 2, 2, "spell it out")).unwrap();
    s.add_comment(&id, &draft("a.ts", CommentSide::New, 3, 3, "keep log here")).unwrap();
    s.add_comment(&id, &draft("a.ts", CommentSide::Old, 1, 2, "why touch this?")).unwrap();
    let outcome = s.resolve(Actor::Person, resolve(ResolveAction::Discard, "not yet", &id, true)).await;
    let ResolveOutcome::Decided { details, text, .. } = outcome else { panic!("decided: {outcome:?}") };
    assert_eq!(
        text,
        "Discarded: AST Edit: 3 replacements in 2 files. Reason: not yet\n\
         Changes requested: 3 comments, in file order:\n\
         a.ts:1-2: (old side) \"let a = 1;\\nlog(a);\" — why touch this?\n\
         a.ts:3: \"info(2);\" — keep log here\n\
         b.txt:2: \"2\" — spell it out",
        "the decision line exactly as before, then the comments in the action's file order"
    );
    assert!(details.requests_changes());
    let review = details.review.expect("the details carry the review");
    let rows: Vec<(&str, CommentSide, u32, u32, &str, &str)> = review
        .comments
        .iter()
        .map(|c| (c.path.as_str(), c.side, c.start_line, c.end_line, c.quote.as_str(), c.text.as_str()))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("a.ts", CommentSide::Old, 1, 2, "let a = 1;\nlog(a);", "why touch this?"),
            ("a.ts", CommentSide::New, 3, 3, "info(2);", "keep log here"),
            ("b.txt", CommentSide::New, 2, 2, "2", "spell it out"),
        ]
    );
    assert!(!s.store().has_pending(), "Request changes is a discard: the action left the stack");
    assert_eq!(fs::read_to_string(d.path().join("a.ts")).unwrap(), A, "nothing was written");
    let h = &s.history()[0];
    assert!(h.details.requests_changes(), "the history keeps the review with the decision");
    assert!(h.text.contains("b.txt:2: \"2\" — spell it out"), "{}", h.text);
}

#[tokio::test]
async fn comments_go_with_an_apply_and_an_apply_part_after_the_reason() {
    let (d, s) = session(ResolvePolicy::Human);
    let id = push(&s, d.path());
    s.add_comment(&id, &draft("b.txt", CommentSide::New, 3, 3, "fine, but note the casing")).unwrap();
    let mut r = resolve(ResolveAction::Apply, "good enough", &id, false);
    r.leave_out = Some(LeaveOut { files: vec!["a.ts".into()], ..Default::default() });
    let outcome = s.resolve(Actor::Person, r).await;
    let ResolveOutcome::Decided { details, text, .. } = outcome else { panic!("decided: {outcome:?}") };
    assert_eq!(
        text,
        "Applied: AST Edit: 3 replacements in 2 files.\nLeft out 1 of 2 files: a.ts\n\
         Reason: good enough\nReview: 1 comment, in file order:\nb.txt:3: \"three\" — fine, but note the casing"
    );
    assert!(!details.requests_changes());
    assert_eq!(fs::read_to_string(d.path().join("b.txt")).unwrap(), "one\n2\nthree\n");
    assert_eq!(fs::read_to_string(d.path().join("a.ts")).unwrap(), A, "left out");

    // A whole apply with a comment on one replacement.
    let id = push(&s, d.path());
    let on_rep = CommentDraft {
        path: "a.ts".into(),
        text: "info is too loud".into(),
        replacement_id: Some(2),
        ..Default::default()
    };
    let c = s.add_comment(&id, &on_rep).unwrap();
    assert_eq!((c.side, c.start_line, c.end_line, c.quote.as_str()), (CommentSide::New, 3, 3, "info(2);"));
    let outcome = s.resolve(Actor::Person, resolve(ResolveAction::Apply, "ship", &id, false)).await;
    let ResolveOutcome::Decided { text, .. } = outcome else { panic!("decided: {outcome:?}") };
    assert_eq!(
        text,
        "Applied 3 replacements in 2 files.\nReason: ship\nReview: 1 comment, in file order:\n\
         a.ts:3: (replacement 2) \"info(2);\" — info is too loud"
    );
}

#[tokio::test]
async fn a_waiting_agent_receives_the_decision_who_decided_then_exactly_the_comments() {
    let (d, s) = session(ResolvePolicy::Human);
    let id = push(&s, d.path());
    s.add_comment(&id, &draft("a.ts", CommentSide::New, 2, 2, "use the logger")).unwrap();
    s.add_comment(&id, &draft("b.txt", CommentSide::New, 1, 1, "capitalise")).unwrap();
    let waiting = {
        let s = s.clone();
        tokio::spawn(async move {
            let ctx = ToolContext::new(s.new_call_id()).with_client("claude-code");
            s.call_with(Actor::Agent, ctx, "resolve", json!({"action": "apply", "reason": "done"})).await
        })
    };
    let mut events = s.store().subscribe();
    while s.store().peek().and_then(|a| a.proposal).is_none() {
        events.recv().await.unwrap();
    }
    let outcome = s.resolve(Actor::Person, resolve(ResolveAction::Discard, "two things", &id, true)).await;
    assert!(matches!(outcome, ResolveOutcome::Decided { .. }), "{outcome:?}");
    let r = waiting.await.unwrap();
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        r.text_content(),
        "Discarded: AST Edit: 3 replacements in 2 files. Reason: two things\n\
         Decided by the person: discarded. Reason: two things\n\
         Changes requested: 2 comments, in file order:\n\
         a.ts:2: \"info(a);\" — use the logger\n\
         b.txt:1: \"one\" — capitalise"
    );
    let details = r.details.unwrap();
    assert_eq!(details["review"]["request_changes"], true);
    let comments = details["review"]["comments"].as_array().unwrap();
    assert_eq!(comments.len(), 2);
    assert_eq!(
        comments[0],
        json!({"id": "c1", "path": "a.ts", "side": "new", "start_line": 2, "end_line": 2, "quote": "info(a);", "text": "use the logger"})
    );
}

#[tokio::test]
async fn comments_can_be_edited_and_deleted_until_the_decision_and_bad_ones_change_nothing() {
    let (d, s) = session(ResolvePolicy::Human);
    let id = push(&s, d.path());
    let c1 = s.add_comment(&id, &draft("a.ts", CommentSide::New, 1, 1, "first")).unwrap();
    let c2 = s.add_comment(&id, &draft("a.ts", CommentSide::New, 2, 3, "second")).unwrap();
    assert_eq!((c1.id.as_str(), c2.id.as_str()), ("c1", "c2"));
    let edited = s.edit_comment(&id, "c1", "first, edited").unwrap();
    assert_eq!((edited.text.as_str(), edited.quote.as_str()), ("first, edited", "let a = 1;"), "the anchor stays");
    s.delete_comment(&id, "c2").unwrap();
    let c3 = s.add_comment(&id, &draft("b.txt", CommentSide::Old, 2, 2, "third")).unwrap();
    assert_eq!(c3.id, "c3", "ids are never reused");
    let revision = s.store().revision();
    let bad = [
        s.add_comment(&id, &draft("zzz.ts", CommentSide::New, 1, 1, "x")).unwrap_err().to_string(),
        s.add_comment(&id, &draft("a.ts", CommentSide::New, 9, 9, "x")).unwrap_err().to_string(),
        s.add_comment(&id, &draft("a.ts", CommentSide::New, 1, 1, " ")).unwrap_err().to_string(),
        s.edit_comment(&id, "c2", "again").unwrap_err().to_string(),
        s.delete_comment(&id, "c9").unwrap_err().to_string(),
        s.add_comment("r-nope", &draft("a.ts", CommentSide::New, 1, 1, "x")).unwrap_err().to_string(),
    ];
    assert!(bad[0].contains("\"zzz.ts\": it is not one of the action's files (a.ts, b.txt)"), "{}", bad[0]);
    assert!(bad[1].contains("which has 3 lines"), "{}", bad[1]);
    assert!(bad[2].contains("needs some text"), "{}", bad[2]);
    assert!(bad[3].contains("has no comment c2"), "{}", bad[3]);
    assert!(bad[4].contains("has no comment c9"), "{}", bad[4]);
    assert!(bad[5].contains("No pending action r-nope"), "{}", bad[5]);
    assert_eq!(s.store().revision(), revision, "a refused change publishes nothing");
    let kept: Vec<String> = s.store().peek().unwrap().comments.into_iter().map(|c| c.text).collect();
    assert_eq!(kept, vec!["first, edited", "third"]);
}

#[tokio::test]
async fn every_comment_change_is_mirrored_and_a_restore_puts_the_comments_back() {
    let (d, s) = session(ResolvePolicy::Human);
    let saved: Arc<Mutex<Vec<Persist>>> = Arc::default();
    let sink = saved.clone();
    s.store().set_persistence(Box::new(move |p| sink.lock().unwrap().push(p)));
    let id = push(&s, d.path());
    s.add_comment(&id, &draft("b.txt", CommentSide::New, 1, 1, "one")).unwrap();
    s.add_comment(&id, &draft("a.ts", CommentSide::New, 1, 1, "two")).unwrap();
    s.delete_comment(&id, "c1").unwrap();
    let events = saved.lock().unwrap().clone();
    let mut stored = match &events[0] {
        Persist::Save(a) => a.clone(),
        other => panic!("a push is saved first: {other:?}"),
    };
    let lists: Vec<Vec<String>> = events[1..]
        .iter()
        .map(|p| match p {
            Persist::Comments { id: cid, comments } => {
                assert_eq!(cid, &id);
                comments.iter().map(|c| c.id.clone()).collect()
            }
            other => panic!("only comment changes: {other:?}"),
        })
        .collect();
    assert_eq!(
        lists,
        vec![vec!["c1"], vec!["c2", "c1"], vec!["c2"]],
        "each change sends the whole list, in file order"
    );
    let Persist::Comments { comments, .. } = events.last().unwrap().clone() else { unreachable!() };
    stored.comments = comments;

    // Another session of the same workspace (a restart) restores the action with its comments.
    let fresh = Session::with_store(d.path(), ResolvePolicy::Human, PendingActionStore::with_id_prefix("r")).unwrap();
    let report = fresh.restore(vec![stored]);
    assert_eq!(report.restored.len(), 1);
    let back = fresh.store().peek().unwrap();
    assert_eq!(back.comments.len(), 1);
    assert_eq!((back.comments[0].id.as_str(), back.comments[0].text.as_str()), ("c2", "two"));
    let next = fresh.add_comment(&id, &draft("a.ts", CommentSide::New, 2, 2, "three")).unwrap();
    assert_eq!(next.id, "c3", "ids continue after the restored ones");
    let outcome = fresh.resolve(Actor::Person, resolve(ResolveAction::Discard, "redo", &id, true)).await;
    let ResolveOutcome::Decided { text, .. } = outcome else { panic!("{outcome:?}") };
    assert!(text.ends_with("a.ts:1: \"let a = 1;\" — two\na.ts:2: \"info(a);\" — three"), "{text}");
}

async fn call(s: &Session, params: Value) -> ToolResult {
    s.call(Actor::Agent, "resolve", params).await
}

#[tokio::test]
async fn an_agent_can_send_a_review_in_the_call_and_bad_reviews_are_refused_with_the_action_kept() {
    let (d, s) = session(ResolvePolicy::Agent);
    push(&s, d.path());
    for (review, action, expected) in [
        (json!({"request_changes": true}), "apply", "`review.request_changes` goes with \"discard\""),
        (json!({"comments": [{"path": "a.ts", "text": "x"}]}), "discard", "`review.comments[0]` needs `start_line`"),
        (
            json!({"comments": [{"path": "a.ts", "start_line": 7, "text": "x"}]}),
            "discard",
            "`review.comments[0]`: Lines 7-7 are not in the new side of a.ts, which has 3 lines",
        ),
        (json!({"comments": [{"path": "a.ts", "line": 1, "text": "x"}]}), "discard", "`line`"),
        (json!({"comments": [{"path": "a.ts", "start_line": 1, "side": "left", "text": "x"}]}), "discard", "\"new\""),
        (json!("fix it"), "discard", "`review` must be an object"),
    ] {
        let r = call(&s, json!({"action": action, "reason": "r", "review": review})).await;
        assert!(r.is_error, "refused: {review}");
        assert!(r.text_content().contains(expected), "{review}: {}", r.text_content());
        assert!(s.store().has_pending(), "a refused review keeps the action");
    }
    let r = call(
        &s,
        json!({"action": "discard", "reason": "again please", "review": {"request_changes": true, "comments": [
            {"path": "b.txt", "start_line": 2, "text": "words, not digits"},
            {"path": "a.ts", "side": "old", "start_line": 2, "end_line": 3, "text": "these were fine"}
        ]}}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(
        r.text_content(),
        "Discarded: AST Edit: 3 replacements in 2 files. Reason: again please\n\
         Changes requested: 2 comments, in file order:\n\
         a.ts:2-3: (old side) \"log(a);\\nlog(2);\" — these were fine\n\
         b.txt:2: \"2\" — words, not digits"
    );
}

#[tokio::test]
async fn a_failed_apply_keeps_the_comments_with_the_action() {
    let (d, s) = session(ResolvePolicy::Human);
    let id = push(&s, d.path());
    s.add_comment(&id, &draft("a.ts", CommentSide::New, 1, 1, "still here after a stale apply")).unwrap();
    write(d.path(), "a.ts", "changed meanwhile\n");
    let outcome = s.resolve(Actor::Person, resolve(ResolveAction::Apply, "go", &id, false)).await;
    assert!(matches!(outcome, ResolveOutcome::ApplyFailed { .. }), "{outcome:?}");
    let top = s.store().peek().unwrap();
    assert_eq!(top.status.as_str(), "stale");
    assert_eq!(top.comments.len(), 1, "the comments stay with the action until it is decided");
}

#[tokio::test]
async fn a_custom_action_without_files_takes_no_line_comments() {
    let (_d, s) = session(ResolvePolicy::Human);
    let id = s
        .api()
        .push_pending_action(CustomToolPendingAction::new("Mail: notify", |_| async { Ok(ToolResult::text("sent")) }))
        .unwrap();
    let err = s.add_comment(&id, &draft("a.ts", CommentSide::New, 1, 1, "x")).unwrap_err();
    assert!(err.to_string().contains("has no file list to comment on"), "{err}");
    // Request changes without comments still says so.
    let outcome = s.resolve(Actor::Person, resolve(ResolveAction::Discard, "not now", &id, true)).await;
    let ResolveOutcome::Decided { text, details, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!(text, "Discarded: Mail: notify. Reason: not now\nChanges requested (no line comments).");
    assert!(details.requests_changes());
}

#[tokio::test]
async fn the_preview_answering_request_changes_is_round_2_with_its_unchanged_files_named() {
    let (d, s) = session(ResolvePolicy::Human);
    let first = push(&s, d.path());
    assert_eq!(s.store().info(&first).unwrap().round, None, "a first preview is no round");
    let outcome = s.resolve(Actor::Person, resolve(ResolveAction::Discard, "not like this", &first, true)).await;
    assert!(matches!(outcome, ResolveOutcome::Decided { .. }), "{outcome:?}");

    // The answer changes b.txt only; a.ts is proposed exactly as before.
    write(d.path(), "b.txt", B);
    let mut cs = ChangeSet::new();
    cs.edit("a.ts", A.as_bytes().to_vec(), A.replace("log(", "info(").into_bytes());
    cs.edit("b.txt", B.as_bytes().to_vec(), B.replace("two", "TWO").into_bytes());
    let action = CustomToolPendingAction::from_change_set("AST Edit: again", cs, s.workspace().clone(), "Applied.");
    let second = s.api().push_pending_action(action).unwrap();
    let round = s.store().info(&second).unwrap().round.expect("the answer is the next round");
    assert_eq!(round.number, 2);
    assert_eq!(round.first_label, "AST Edit: 3 replacements in 2 files", "the review's first preview");
    assert_eq!(round.previous_id, first);
    assert_eq!(round.unchanged, vec!["a.ts".to_string()], "only a.ts is proposed as in round 1");
    // What changed since round 1: b.txt's proposal, `2` → `TWO`; a.ts not at all.
    let since = s.store().round_diff(&second, "b.txt", 3).expect("a diff against round 1");
    let lines: Vec<(DiffLineKind, &str)> =
        since.hunks.iter().flat_map(|h| h.lines.iter()).map(|l| (l.kind, l.text.as_str())).collect();
    assert!(
        lines.contains(&(DiffLineKind::Removed, "2")) && lines.contains(&(DiffLineKind::Added, "TWO")),
        "{lines:?}"
    );
    assert_eq!((since.added, since.removed), (1, 1));
    let same = s.store().round_diff(&second, "a.ts", 3).unwrap();
    assert!(same.hunks.is_empty(), "a.ts is proposed as in round 1");
    assert!(s.store().round_diff(&first, "b.txt", 3).is_none(), "round 1 was decided");

    // Changes requested again: the one after is round 3 of the same review.
    let outcome = s.resolve(Actor::Person, resolve(ResolveAction::Discard, "closer", &second, true)).await;
    assert!(matches!(outcome, ResolveOutcome::Decided { .. }), "{outcome:?}");
    let third = push(&s, d.path());
    let round = s.store().info(&third).unwrap().round.expect("round 3");
    assert_eq!((round.number, round.first_label.as_str()), (3, "AST Edit: 3 replacements in 2 files"));
    assert_eq!(round.unchanged, vec!["a.ts".to_string()], "b.txt differs from round 2's");

    // A plain discard ends the review: the next preview starts afresh.
    let outcome = s.resolve(Actor::Person, resolve(ResolveAction::Discard, "enough", &third, false)).await;
    assert!(matches!(outcome, ResolveOutcome::Decided { .. }), "{outcome:?}");
    let fourth = push(&s, d.path());
    assert_eq!(s.store().info(&fourth).unwrap().round, None);
}

/// Where an earlier comment is in this round (first and last line).
type Lines = Option<(u32, u32)>;

#[tokio::test]
async fn the_next_round_shows_earlier_comments_on_their_lines_keeps_viewed_marks_and_survives_a_restart() {
    let (d, s) = session(ResolvePolicy::Human);
    let saved: Arc<Mutex<Vec<Persist>>> = Arc::default();
    let sink = saved.clone();
    s.store().set_persistence(Box::new(move |p| sink.lock().unwrap().push(p)));
    let first = push(&s, d.path());
    // a.ts proposes `info(a);` on line 2 and `info(2);` on line 3; b.txt `2` on line 2.
    s.add_comment(&first, &draft("a.ts", CommentSide::New, 2, 2, "keep log here")).unwrap();
    s.add_comment(&first, &draft("a.ts", CommentSide::New, 3, 3, "fine")).unwrap();
    s.add_comment(&first, &draft("b.txt", CommentSide::New, 2, 2, "spell it out")).unwrap();
    s.set_viewed(&first, "a.ts", true).unwrap();
    s.set_viewed(&first, "b.txt", true).unwrap();
    assert_eq!(s.store().info(&first).unwrap().viewed, vec!["a.ts", "b.txt"]);
    let err = s.set_viewed(&first, "elsewhere.ts", true).unwrap_err();
    assert!(err.to_string().contains("\"elsewhere.ts\"") && err.to_string().contains("not one of the files"), "{err}");
    let outcome = s.resolve(Actor::Person, resolve(ResolveAction::Discard, "see comments", &first, true)).await;
    assert!(matches!(outcome, ResolveOutcome::Decided { .. }), "{outcome:?}");

    // Round 2: a.ts gains a header line and keeps line 2 as `log(a);`; b.txt as before.
    let mut cs = ChangeSet::new();
    let a2 = "// reviewed\nlet a = 1;\nlog(a);\ninfo(2);\n";
    cs.edit("a.ts", A.as_bytes().to_vec(), a2.as_bytes().to_vec());
    cs.edit("b.txt", B.as_bytes().to_vec(), B.replace("two", "2").into_bytes());
    let second = s
        .api()
        .push_pending_action(CustomToolPendingAction::from_change_set(
            "AST Edit: again",
            cs,
            s.workspace().clone(),
            "Applied.",
        ))
        .unwrap();
    let info = s.store().info(&second).unwrap();
    let round = info.round.clone().expect("round 2");
    let placed: Vec<(&str, Lines, bool)> =
        round.earlier.iter().map(|e| (e.comment.text.as_str(), e.now_lines, e.changed)).collect();
    assert_eq!(
        placed,
        vec![
            ("keep log here", Some((3, 3)), true),
            ("fine", Some((4, 4)), false),
            ("spell it out", Some((2, 2)), false),
        ],
        "each earlier comment on this round's line, marked changed where the agent changed it"
    );
    assert!(round.earlier.iter().all(|e| e.round == 1));
    assert_eq!(info.viewed, vec!["b.txt"], "a.ts's proposal changed: its viewed mark is cleared");

    // A restart: the kept action comes back as round 2 with its comments, marks and interdiff.
    let events = saved.lock().unwrap().clone();
    let stored = events
        .iter()
        .find_map(|p| match p {
            Persist::Save(a) if a.id == second => Some(a.clone()),
            _ => None,
        })
        .expect("round 2 is saved");
    let fresh = Session::with_store(d.path(), ResolvePolicy::Human, PendingActionStore::with_id_prefix("r")).unwrap();
    assert_eq!(fresh.restore(vec![stored]).restored.len(), 1);
    let back = fresh.store().info(&second).unwrap();
    assert_eq!(back.round, info.round, "the round, with its earlier comments, survives the restart");
    assert_eq!(back.viewed, vec!["b.txt"]);
    let since = fresh.store().round_diff(&second, "a.ts", 3).expect("the interdiff survives too");
    let lines: Vec<(DiffLineKind, &str)> =
        since.hunks.iter().flat_map(|h| h.lines.iter()).map(|l| (l.kind, l.text.as_str())).collect();
    assert!(
        lines.contains(&(DiffLineKind::Removed, "info(a);")) && lines.contains(&(DiffLineKind::Added, "log(a);")),
        "{lines:?}"
    );
    assert!(fresh.store().round_diff(&second, "b.txt", 3).unwrap().hunks.is_empty());
    // A mark given after the restart is kept through the hook like any other.
    let kept: Arc<Mutex<Vec<Persist>>> = Arc::default();
    let sink = kept.clone();
    fresh.store().set_persistence(Box::new(move |p| sink.lock().unwrap().push(p)));
    fresh.set_viewed(&second, "a.ts", true).unwrap();
    let last = kept.lock().unwrap().last().cloned();
    let Some(Persist::Review { id, state }) = last else { panic!("a viewed mark is persisted: {last:?}") };
    assert_eq!((id.as_str(), state.viewed_paths()), (second.as_str(), vec!["a.ts".to_string(), "b.txt".to_string()]));
    assert_eq!(state.round, info.round, "the round is kept with the marks");

    // Changes requested again with one new comment: round 3 shows it and round 1's comments
    // still on round 2's lines, each with the round it was written in.
    fresh.add_comment(&second, &draft("a.ts", CommentSide::New, 1, 1, "drop this header")).unwrap();
    let outcome = fresh.resolve(Actor::Person, resolve(ResolveAction::Discard, "again", &second, true)).await;
    assert!(matches!(outcome, ResolveOutcome::Decided { .. }), "{outcome:?}");
    let mut cs = ChangeSet::new();
    cs.edit("a.ts", A.as_bytes().to_vec(), "let a = 1;\nlog(a);\ninfo(2);\n".as_bytes().to_vec());
    let third = fresh
        .api()
        .push_pending_action(CustomToolPendingAction::from_change_set(
            "AST Edit: third",
            cs,
            fresh.workspace().clone(),
            "Applied.",
        ))
        .unwrap();
    let round = fresh.store().info(&third).unwrap().round.expect("round 3");
    let placed: Vec<(u32, &str, Lines, bool)> =
        round.earlier.iter().map(|e| (e.round, e.comment.text.as_str(), e.now_lines, e.changed)).collect();
    assert_eq!(
        placed,
        vec![
            (1, "keep log here", Some((2, 2)), false),
            (1, "fine", Some((3, 3)), false),
            (1, "spell it out", None, true),
            (2, "drop this header", Some((1, 1)), true),
        ],
        "round 1's comments follow their lines again; b.txt left the change, so its comment has no place"
    );
}
