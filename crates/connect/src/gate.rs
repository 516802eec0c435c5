//! Holding one edit of an outside agent in the desk until it is decided: the agent's hook
//! sends the exact bytes its tool would write (`gate_edit`), then waits for the decision on
//! that action (`await_decision`), and gets a [`Verdict`].
//!
//! Which desk: under the `human` policy the window that has the folder open, started when none
//! has; under `agent` the window if one has it open, else a desk opened in this process with
//! the window's journal (so History and undo cover the edit), decided at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::client::{Answer, Link, SocketLink};

/// Who decides an agent's edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// The person, in the window (started if needed).
    Human,
    /// Nobody: each edit is recorded and allowed at once (CI, scripted runs).
    Agent,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Human => "human",
            Policy::Agent => "agent",
        }
    }
}

/// One file of an edit, as the agent's tool would leave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateFile {
    /// Workspace-relative path.
    pub path: String,
    /// BLAKE3 (hex) of the bytes the hook read (`None`: the file does not exist).
    pub before: Option<String>,
    /// What the agent's tool writes; `None`: it deletes the file.
    pub after: Option<String>,
}

/// One edit of an agent's tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// `Claude Code`.
    pub agent: String,
    /// `Edit`, `Write`.
    pub tool: String,
    pub files: Vec<GateFile>,
}

/// A file of an approved edit: what it may hold afterwards (`None`: deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved {
    pub path: String,
    pub after: Option<String>,
    /// The person changed it (took part of it, or edited it) before applying.
    pub changed: bool,
}

/// What the desk decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Applied: the agent may write exactly `files`. `text` is the decision as the desk words it.
    Approved { text: String, files: Vec<Approved> },
    /// Discarded, sent back with Request changes, or refused before review (another pending
    /// action changes the file, it changed since the agent read it…): `text` says why.
    Refused { text: String },
    /// The wait ended before the person decided; the action stays pending.
    Undecided { text: String, action_id: String },
}

/// Where and how to reach the desk.
#[derive(Debug, Clone)]
pub struct Reach {
    pub root: PathBuf,
    pub policy: Policy,
    /// The longest wait for the person (below the agent's hook time-out).
    pub wait: Duration,
    /// The name the desk shows as who pushed (`Claude Code`).
    pub client: String,
}

/// The link to the folder's desk (see the module's doc).
pub async fn open_link(reach: &Reach) -> Result<(Link, Option<Arc<resolve_journal::Writer>>), String> {
    if let Some(stream) = crate::join::connect(&reach.root).await? {
        return Ok((Link::Socket(SocketLink::open(stream, &reach.client, reach.wait).await?), None));
    }
    match reach.policy {
        Policy::Human => {
            let stream = crate::join::start_desk(&reach.root, None).await?;
            Ok((Link::Socket(SocketLink::open(stream, &reach.client, reach.wait).await?), None))
        }
        Policy::Agent => {
            let data_dir = resolve_desk_core::journal::default_data_dir();
            let report = Box::new(|path: &Path, result: Result<(), &resolve_journal::JournalError>| {
                if let Err(e) = result {
                    eprintln!("rdesk hook: could not write to the journal {}: {e}", path.display());
                }
            });
            let journal = resolve_desk_core::journal::open_writer(&data_dir, report).map_err(|e| e.to_string())?;
            let mut options = resolve_desk_core::DeskOptions::new(resolve_engine::ResolvePolicy::Agent);
            options.journal = Some(journal.clone());
            let desk = resolve_desk_core::Desk::open(&reach.root, options).await.map_err(|e| e.to_string())?;
            Ok((Link::Local { desk: Box::new(desk), client: reach.client.clone(), wait: reach.wait }, Some(journal)))
        }
    }
}

/// Holds `gate` in the desk and waits for its decision.
pub async fn hold(link: &mut Link, gate: &Gate) -> Result<Verdict, String> {
    let files: Vec<Value> = gate
        .files
        .iter()
        .map(|f| match &f.after {
            Some(after) => json!({"path": f.path, "expect_blake3": f.before, "content": after}),
            None => json!({"path": f.path, "expect_blake3": f.before, "delete": true}),
        })
        .collect();
    let pushed = link
        .call(resolve_tool_text_edit::GATE_EDIT, json!({"agent": gate.agent, "tool": gate.tool, "files": files}))
        .await?;
    if pushed.is_error {
        return Ok(Verdict::Refused { text: pushed.text });
    }
    let Some(action_id) = pushed.details.get("action_id").and_then(Value::as_str).map(str::to_string) else {
        return Err(format!("the desk pushed the edit but did not say its action id: {}", pushed.text));
    };
    let paths: Vec<&str> = gate.files.iter().map(|f| f.path.as_str()).collect();
    let reason = format!("{} wants to {} {}", gate.agent, gate.tool, paths.join(", "));
    let decided =
        link.call(resolve_engine::AWAIT_DECISION_TOOL_NAME, json!({"action_id": action_id, "reason": reason})).await?;
    Ok(verdict(decided, &action_id))
}

/// The verdict an `await_decision` answer says.
fn verdict(answer: Answer, action_id: &str) -> Verdict {
    let d = &answer.details;
    if d.get("waiting").and_then(Value::as_bool) == Some(true)
        || d.get("snoozed").and_then(Value::as_bool) == Some(true)
    {
        return Verdict::Undecided { text: answer.text, action_id: action_id.to_string() };
    }
    if answer.is_error {
        return Verdict::Refused { text: answer.text };
    }
    match d.get("action").and_then(Value::as_str) {
        Some("apply") => {
            let files = d
                .get("approved")
                .and_then(Value::as_array)
                .map(|files| {
                    files
                        .iter()
                        .map(|f| Approved {
                            path: f.get("path").and_then(Value::as_str).unwrap_or_default().to_string(),
                            after: f.get("content").and_then(Value::as_str).map(str::to_string),
                            changed: f.get("content").is_some_and(|c| !c.is_null()),
                        })
                        .collect()
                })
                .unwrap_or_default();
            Verdict::Approved { text: answer.text, files }
        }
        _ => Verdict::Refused { text: answer.text },
    }
}
