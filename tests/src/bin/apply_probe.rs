//! A real process that applies a change set, for the kill tests (`tests/crash.rs`).
//!
//! `apply-probe apply WORKSPACE PLAN.json` reads the plan (a list of changes, see
//! [`resolve_scenarios::plan`]), previews it against the disk as a tool would (reading each
//! file's current bytes), and applies it. With `RDESK_TEST_PAUSE_AT=phase:index` it stops
//! there (the engine's test hook prints `RDESK_PAUSED …` on stderr and waits on stdin).
//! Prints `APPLIED` or `ERROR <message>` on stdout.
//!
//! `apply-probe resolve WORKSPACE PLAN.json whole|part|edited` pushes the plan as a pending
//! action (labelled `Kill test: through resolve`) on a session there and applies it with the
//! session's typed `resolve` as a script would: whole, leaving out its first file, or with
//! the first edited file's text changed (the person's edit). Same pause and output.
//!
//! `apply-probe open WORKSPACE` opens a session there, as every program does at start, and
//! prints what it recovered as JSON (`null` when nothing).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("apply") if args.len() == 4 => {
            let ws = resolve_engine::Workspace::open(&args[2]).expect("the workspace opens");
            let plan = std::fs::read_to_string(&args[3]).expect("the plan is readable");
            let cs = resolve_scenarios::plan::change_set(&ws, &plan).expect("the plan is valid");
            let context = resolve_engine::ApplyContext {
                action_id: "a1".into(),
                label: "Kill test: many files".into(),
                source_tool_name: "apply-probe".into(),
                actor: Some(resolve_engine::Actor::Script),
                client: None,
            };
            match cs.apply_with_context(&ws, Some(context)) {
                Ok(_) => println!("APPLIED"),
                Err(e) => println!("ERROR {e}"),
            }
            ExitCode::SUCCESS
        }
        Some("resolve") if args.len() == 5 => {
            use resolve_engine::*;
            let session = Session::open(&args[2], ResolvePolicy::Human).expect("the workspace opens");
            let plan = std::fs::read_to_string(&args[3]).expect("the plan is readable");
            let cs = resolve_scenarios::plan::change_set(session.workspace(), &plan).expect("the plan is valid");
            let first = cs.changes().first().map(|c| c.path().to_string()).expect("a change");
            let edited = cs.changes().iter().find_map(|c| match c {
                Change::Edit { path, after, .. } => Some(PersonEdit {
                    path: path.clone(),
                    text: format!("{}// edited\n", String::from_utf8_lossy(after)),
                }),
                _ => None,
            });
            let action = CustomToolPendingAction::from_change_set(
                "Kill test: through resolve",
                cs,
                session.workspace().clone(),
                "Applied.",
            )
            .with_source_tool_name("apply-probe");
            let id = session.api().push_pending_action(action).expect("the action is pushed");
            let mut resolve = Resolve {
                choice: ResolveAction::Apply,
                reason: "kill test".into(),
                expected_id: Some(id),
                leave_out: None,
                review: None,
                edits: Vec::new(),
            };
            match args[4].as_str() {
                "whole" => {}
                "part" => resolve.leave_out = Some(LeaveOut { files: vec![first], ..Default::default() }),
                "edited" => resolve.edits = vec![edited.expect("the plan edits a file")],
                other => panic!("unknown mode {other}: whole, part or edited"),
            }
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            match runtime.block_on(session.resolve(Actor::Script, resolve)) {
                ResolveOutcome::Decided { .. } => println!("APPLIED"),
                other => println!("ERROR {other:?}"),
            }
            ExitCode::SUCCESS
        }
        Some("open") if args.len() == 3 => {
            let session = resolve_engine::Session::open(&args[2], resolve_engine::ResolvePolicy::Human)
                .expect("the workspace opens");
            println!("{}", serde_json::to_string(&session.recovery()).expect("a recovery serialises"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "usage: apply-probe apply WORKSPACE PLAN.json | apply-probe resolve WORKSPACE PLAN.json whole|part|edited | apply-probe open WORKSPACE"
            );
            ExitCode::from(2)
        }
    }
}
