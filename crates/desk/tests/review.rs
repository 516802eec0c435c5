//! Reviews through the desk as the app opens it, with a real journal (SQLite) and the real
//! `ast_edit`: comments on a pending action survive closing and opening the workspace again,
//! and the review that went with a decision is kept in the history — searchable, and in the
//! export — after another restart.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use resolve_desk_core::{Desk, DeskOptions};
use resolve_engine::{
    Actor, CommentDraft, CommentSide, Resolve, ResolveAction, ResolveOutcome, ResolvePolicy, ReviewRequest,
};
use resolve_journal::{ExportFormat, HistoryQuery, Journal, Writer};
use serde_json::json;

struct Place {
    ws: tempfile::TempDir,
    data: tempfile::TempDir,
    logs: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        Place {
            ws: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
            logs: tempfile::tempdir().unwrap(),
        }
    }

    /// Opens the workspace as the app does: journal, restore, mirror (a new journal writer
    /// each time, as a new process would have).
    async fn open(&self) -> Desk {
        let journal = Arc::new(Journal::open(&self.data.path().join("journal.sqlite3")).unwrap());
        let writer = Arc::new(
            Writer::spawn(
                journal,
                Box::new(|_, r| {
                    if let Err(e) = r {
                        eprintln!("journal write failed: {e}");
                    }
                }),
            )
            .unwrap(),
        );
        let options = DeskOptions {
            policy: ResolvePolicy::Human,
            id_prefix: Some("pa-".into()),
            config_dir: None,
            log_dir: self.logs.path().to_path_buf(),
            journal: Some(writer),
            watch_files: false,
            watch_tools: false,
            never_pass_env: Vec::new(),
        };
        Desk::open(self.ws.path(), options).await.expect("the folder opens")
    }

    /// Closes the desk as the app's exit does, with every journal write done.
    fn close(&self, desk: Desk) {
        desk.close();
        if let Some(w) = desk.journal() {
            w.flush();
        }
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    fs::write(root.join(rel), text).unwrap();
}

fn draft(path: &str, line: u32, text: &str) -> CommentDraft {
    CommentDraft {
        path: path.into(),
        side: CommentSide::New,
        start_line: line,
        end_line: None,
        text: text.into(),
        replacement_id: None,
    }
}

#[tokio::test]
async fn comments_survive_a_restart_with_their_action_and_the_review_stays_in_the_history_and_export() {
    let place = Place::new();
    write(place.ws.path(), "a.ts", "log(1);\nkeep();\nlog(2);\n");
    let desk = place.open().await;
    let s = desk.session().clone();
    let r =
        s.call(Actor::Person, "ast_edit", json!({"ops": [{"pat": "log($A)", "out": "info($A)"}], "lang": "ts"})).await;
    assert!(!r.is_error, "{}", r.text_content());
    let id = s.store().peek().unwrap().id;
    s.add_comment(&id, &draft("a.ts", 3, "not this one")).unwrap();
    s.add_comment(&id, &draft("a.ts", 1, "this one is fine")).unwrap();
    s.edit_comment(&id, "c2", "this one is fine, thanks").unwrap();
    place.close(desk);

    let desk = place.open().await;
    let s = desk.session().clone();
    let top = s.store().peek().expect("the action is back");
    assert_eq!(top.id, id);
    let kept: Vec<(String, u32, String, String)> =
        top.comments.iter().map(|c| (c.id.clone(), c.start_line, c.quote.clone(), c.text.clone())).collect();
    assert_eq!(
        kept,
        vec![
            ("c2".into(), 1, "info(1);".into(), "this one is fine, thanks".into()),
            ("c1".into(), 3, "info(2);".into(), "not this one".into()),
        ],
        "the comments come back with the action, as edited, in file order"
    );
    s.delete_comment(&id, "c2").unwrap();
    let outcome = s
        .resolve(
            Actor::Person,
            Resolve {
                choice: ResolveAction::Discard,
                reason: "one of two".into(),
                expected_id: Some(id.clone()),
                leave_out: None,
                review: Some(ReviewRequest { request_changes: true, comments: Vec::new() }),
                edits: Vec::new(),
            },
        )
        .await;
    let ResolveOutcome::Decided { text, .. } = outcome else { panic!("{outcome:?}") };
    assert!(
        text.ends_with("Changes requested: 1 comment, in file order:\na.ts:3: \"info(2);\" — not this one"),
        "{text}"
    );
    place.close(desk);

    // An earlier session's decision: read from the journal's rows only.
    let desk = place.open().await;
    assert!(desk.session().store().is_empty(), "a decided action is not restored");
    let q = HistoryQuery { text: "not this one".into(), ..HistoryQuery::default() };
    let page = desk.search_history(q.clone(), 0, 10).await.unwrap();
    assert_eq!(page.total, 1, "a comment's words find the decision");
    let entry = &page.rows[0];
    assert!(entry.earlier_session);
    assert!(entry.entry.details.requests_changes(), "the journal keeps the review with the decision");
    let review = entry.entry.details.review.as_ref().unwrap();
    assert_eq!(review.comments.len(), 1);
    assert_eq!(review.comments[0].quote, "info(2);");
    let out = place.data.path().join("export.csv");
    assert_eq!(desk.export_history(q, ExportFormat::Csv, &out).await.unwrap(), 1);
    let csv = fs::read_to_string(&out).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",changes_requested,comments"), "{csv}");
    assert!(csv.contains("true,\"a.ts:3: \"\"info(2);\"\" — not this one\""), "{csv}");
    place.close(desk);
}

#[tokio::test]
async fn an_agents_answer_to_request_changes_after_a_restart_is_still_the_next_round_with_the_comments() {
    let place = Place::new();
    write(place.ws.path(), "a.ts", "log(1);\nkeep();\nlog(2);\n");
    let desk = place.open().await;
    let s = desk.session().clone();
    let agent = || resolve_engine::ToolContext::new("call").with_client("claude-code");
    let r = s
        .call_with(
            Actor::Agent,
            agent(),
            "ast_edit",
            json!({"ops": [{"pat": "log($A)", "out": "info($A)"}], "lang": "ts"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text_content());
    let first = s.store().peek().unwrap();
    s.add_comment(&first.id, &draft("a.ts", 3, "warn here, not info")).unwrap();
    let outcome = s
        .resolve(
            Actor::Person,
            Resolve {
                choice: ResolveAction::Discard,
                reason: "see the comment".into(),
                expected_id: Some(first.id.clone()),
                leave_out: None,
                review: Some(ReviewRequest { request_changes: true, comments: Vec::new() }),
                edits: Vec::new(),
            },
        )
        .await;
    assert!(matches!(outcome, ResolveOutcome::Decided { .. }), "{outcome:?}");
    // The desk closes before the agent answers.
    place.close(desk);

    let desk = place.open().await;
    let s = desk.session().clone();
    assert!(s.store().is_empty(), "the discarded preview is not pending again");
    let r = s
        .call_with(
            Actor::Agent,
            agent(),
            "ast_edit",
            json!({"ops": [{"pat": "log(2)", "out": "warn(2)"}, {"pat": "log(1)", "out": "info(1)"}], "lang": "ts"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text_content());
    let second = s.store().peek().unwrap();
    let round = second.round.expect("the answer is still the next round of the review");
    assert_eq!(round.number, 2);
    assert_eq!(round.previous_id, first.id);
    assert_eq!(round.first_label, first.label);
    assert_eq!(round.earlier.len(), 1, "the person's comment comes with it");
    let earlier = &round.earlier[0];
    assert_eq!(earlier.comment.text, "warn here, not info");
    assert_eq!(earlier.now_lines, Some((3, 3)), "beside the line it was written on");
    assert!(earlier.changed, "a line the agent changed since round 1");
    let since = s.store().round_diff(&second.id, "a.ts", 3).expect("the diff since round 1");
    assert!(since.hunks.iter().flat_map(|h| &h.lines).any(|l| l.text == "warn(2);"), "{since:?}");
    place.close(desk);

    // Answered: the previous proposal is no longer kept; the round stays with its action.
    let root = fs::canonicalize(place.ws.path()).unwrap().display().to_string();
    let journal = Journal::open(&place.data.path().join("journal.sqlite3")).unwrap();
    assert!(journal.rounds(&root).unwrap().is_empty(), "the prior round was forgotten once answered");
    let desk = place.open().await;
    let back = desk.session().store().peek().expect("round 2 is pending after another restart");
    assert_eq!(back.round.map(|r| r.number), Some(2));
}
