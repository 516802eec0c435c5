//! A real process that applies a change set, for the kill tests (`tests/crash.rs`).
//!
//! `apply-probe apply WORKSPACE PLAN.json` reads the plan (a list of changes, see
//! [`resolve_scenarios::plan`]), previews it against the disk as a tool would (reading each
//! file's current bytes), and applies it. With `RDESK_TEST_PAUSE_AT=phase:index` it stops
//! there (the engine's test hook prints `RDESK_PAUSED …` on stderr and waits on stdin).
//! Prints `APPLIED` or `ERROR <message>` on stdout.
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
        Some("open") if args.len() == 3 => {
            let session = resolve_engine::Session::open(&args[2], resolve_engine::ResolvePolicy::Human)
                .expect("the workspace opens");
            println!("{}", serde_json::to_string(&session.recovery()).expect("a recovery serialises"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: apply-probe apply WORKSPACE PLAN.json | apply-probe open WORKSPACE");
            ExitCode::from(2)
        }
    }
}
