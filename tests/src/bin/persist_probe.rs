//! A real process that opens a workspace with the journal, as the app does, for the restart
//! tests (`tests/persist.rs`).
//!
//! `persist-probe WORKSPACE JOURNAL [STEP...]` opens a session on `WORKSPACE` with the
//! built-in tools, restores the pending actions `JOURNAL` keeps for it (printing the restore
//! summary on stderr), mirrors every later push and decision to the journal (its writer
//! thread), runs the steps in order, and prints the queue (top first) as one JSON line on
//! stdout: `[{"id", "label", "status", "message"}]`. Steps:
//! - `edit`: `ast_edit` rewriting `console.log($A)` to `logger.debug($A)` in the workspace;
//! - `rename`: `batch_rename_preview` of `photos/*.PNG`, `^img_(\d+)\.PNG$` → `photo-$1.png`;
//! - `closure`: a custom action whose apply is a closure (comes back orphaned);
//! - `apply` / `discard`: a person's resolve of the top action (its result text goes to
//!   stderr as `RESULT <error?> <text>`).
//!
//! Nothing is ever applied but by an `apply` step. Exit code 2 on bad arguments.

use std::process::ExitCode;
use std::sync::Arc;

use resolve_engine::{
    Actor, CustomToolPendingAction, Resolve, ResolveAction, ResolveOutcome, ResolvePolicy, Session, ToolResult,
};
use serde_json::json;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: persist-probe WORKSPACE JOURNAL [edit|rename|closure|apply|discard]...");
        return ExitCode::from(2);
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime starts");
    runtime.block_on(run(&args[0], &args[1], &args[2..]))
}

async fn run(workspace: &str, journal: &str, steps: &[String]) -> ExitCode {
    let session = Session::open(workspace, ResolvePolicy::Human).expect("the workspace opens");
    session.load(resolve_tool_ast_edit::factory()).expect("ast_edit loads");
    session.load(resolve_tool_batch_rename::factory()).expect("batch_rename_preview loads");
    let journal = Arc::new(resolve_journal::Journal::open(journal.as_ref()).expect("the journal opens"));
    let report = journal.restore_pending(&session).expect("the journal is readable");
    eprintln!("persist-probe: {}", report.summary());
    let writer = Arc::new(
        resolve_journal::Writer::spawn(
            journal,
            Box::new(|path, r| {
                if let Err(e) = r {
                    eprintln!("persist-probe: journal {}: {e}", path.display());
                }
            }),
        )
        .expect("the writer starts"),
    );
    let root = session.workspace().root().display().to_string();
    session.store().set_persistence(writer.persistence(&root));
    let w = writer.clone();
    session.observe(move |entry| {
        if let Some(h) = resolve_engine::HistoryEntry::from_transcript(entry) {
            w.record(resolve_journal::Decision::of(&root, &h));
        }
    });
    for step in steps {
        let result: Option<(bool, String)> = match step.as_str() {
            "edit" => {
                let r = session
                    .call(
                        Actor::Script,
                        "ast_edit",
                        json!({"ops": [{"pat": "console.log($A)", "out": "logger.debug($A)"}], "lang": "ts"}),
                    )
                    .await;
                Some((r.is_error, r.text_content()))
            }
            "rename" => {
                let r = session
                    .call(
                        Actor::Script,
                        "batch_rename_preview",
                        json!({"files": ["photos/*.PNG"], "find": "^img_(\\d+)\\.PNG$", "replace": "photo-$1.png"}),
                    )
                    .await;
                Some((r.is_error, r.text_content()))
            }
            "closure" => {
                let action =
                    CustomToolPendingAction::new("Mail: notify the team", |_| async { Ok(ToolResult::text("sent")) });
                session.api().push_pending_action(action).expect("the store takes it");
                None
            }
            "apply" | "discard" => {
                let choice = if step == "apply" { ResolveAction::Apply } else { ResolveAction::Discard };
                let outcome = session
                    .resolve(
                        Actor::Person,
                        Resolve {
                            choice,
                            reason: format!("{step} after a restart"),
                            expected_id: None,
                            leave_out: None,
                            review: None,
                            edits: Vec::new(),
                        },
                    )
                    .await;
                Some(match outcome {
                    ResolveOutcome::Decided { text, .. } => (false, text),
                    ResolveOutcome::ApplyFailed { text, .. } => (true, text),
                    ResolveOutcome::Refused { message, .. } => (true, message),
                })
            }
            other => {
                eprintln!("persist-probe: unknown step `{other}`; use edit, rename, closure, apply or discard");
                return ExitCode::from(2);
            }
        };
        if let Some((is_error, text)) = result {
            eprintln!("RESULT {} {}", if is_error { "error" } else { "ok" }, text.replace('\n', " "));
        }
    }
    let queue: Vec<_> = session
        .store()
        .list()
        .into_iter()
        .map(|a| {
            let message = match &a.status {
                resolve_engine::ActionStatus::Pending => String::new(),
                resolve_engine::ActionStatus::Stale { message, .. }
                | resolve_engine::ActionStatus::Orphaned { message } => message.clone(),
                resolve_engine::ActionStatus::Failed { error } => error.clone(),
            };
            json!({"id": a.id, "label": a.label, "status": a.status.as_str(), "message": message})
        })
        .collect();
    println!("{}", serde_json::Value::Array(queue));
    // Everything queued is written before the process ends (as the app's writer does on exit).
    writer.flush();
    ExitCode::SUCCESS
}
