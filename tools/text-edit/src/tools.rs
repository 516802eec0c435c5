//! The four tools: `write_file`, `edit_file`, `apply_patch` (offered to agents) and the hidden
//! `gate_edit` (an outside agent's edit hook). Each reads the folder, checks everything it
//! can, and pushes one pending action; nothing is written by any of them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use resolve_engine::params::{as_object, check_known_keys, quote};
use resolve_engine::{ChangeSet, CustomToolApi, Tool, ToolContext, ToolError, ToolResult, Workspace};
use serde_json::{json, Value};

use crate::edit::{apply_edits, TextEdit};
use crate::files::{check_no_pending_change, check_text, read_target};
use crate::patch::apply::Planned;
use crate::preview::{push, Proposal};

pub const WRITE_FILE: &str = "write_file";
pub const EDIT_FILE: &str = "edit_file";
pub const APPLY_PATCH: &str = "apply_patch";
pub const GATE_EDIT: &str = "gate_edit";

fn invalid(message: String) -> ToolError {
    ToolError::InvalidParams(message)
}

/// A required string parameter (`empty_ok`: may be `""`).
fn string(
    tool: &str,
    obj: &serde_json::Map<String, Value>,
    key: &str,
    empty_ok: bool,
    what: &str,
) -> Result<String, ToolError> {
    match obj.get(key) {
        Some(Value::String(s)) if empty_ok || !s.is_empty() => Ok(s.clone()),
        Some(other) => Err(invalid(format!("`{key}` of `{tool}` must be {what}, got {}.", quote(other)))),
        None => Err(invalid(format!("`{key}` is required by `{tool}`: {what}."))),
    }
}

fn workspace_of(api: &CustomToolApi) -> Result<Arc<Workspace>, ToolError> {
    api.workspace()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::Failed(format!("the preview stopped unexpectedly: {e}; nothing was queued")))?
}

// ---------------------------------------------------------------- write_file

/// `write_file {path, content}`: creates or replaces one file.
pub struct WriteFile {
    api: CustomToolApi,
}

impl WriteFile {
    pub fn new(api: CustomToolApi) -> Self {
        Self { api }
    }
}

fn write_params(params: &Value) -> Result<(String, String), ToolError> {
    let obj = as_object(WRITE_FILE, params)?;
    check_known_keys(WRITE_FILE, "", obj, &["path", "content"])?;
    Ok((
        string(WRITE_FILE, obj, "path", false, "a file path relative to the folder")?,
        string(WRITE_FILE, obj, "content", true, "the file's whole new text (it may be empty)")?,
    ))
}

#[async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &str {
        WRITE_FILE
    }
    fn label(&self) -> &str {
        "Write file"
    }
    fn preview_only(&self) -> bool {
        true
    }
    fn description(&self) -> &str {
        "Preview creating a file, or replacing a file's whole content. `path` is relative to the folder; \
         `content` is the complete new text. Missing folders are created on apply. Returns the diff and queues a \
         pending action: nothing is written until it is applied with the resolve tool."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "File path relative to the folder."},
                "content": {"type": "string", "description": "The file's complete new text."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }
    fn check_params(&self, params: &Value) -> Result<(), ToolError> {
        write_params(params).map(|_| ())
    }
    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let (path, content) = write_params(&params)?;
        let ws = workspace_of(&self.api)?;
        let scan_ws = ws.clone();
        let (cs, planned) = blocking(move || {
            let now = read_target(&scan_ws, WRITE_FILE, &path)?;
            check_text(&now.rel, content.as_bytes(), "would hold")?;
            let mut cs = ChangeSet::new();
            let change = match &now.bytes {
                Some(b) if b[..] == *content.as_bytes() => {
                    return Err(invalid(format!(
                        "{} already holds exactly this content; there is nothing to write, so no pending action was queued.",
                        now.rel
                    )))
                }
                Some(b) => {
                    cs.edit(now.rel.clone(), b.clone(), content.into_bytes());
                    "modified"
                }
                None => {
                    cs.create(now.rel.clone(), content.into_bytes());
                    "added"
                }
            };
            Ok((cs, vec![Planned { path: now.rel, change, from: None }]))
        })
        .await?;
        check_no_pending_change(&self.api, &[planned[0].path.clone()], None)?;
        let proposal =
            Proposal { verb: "Write", source: WRITE_FILE, change_set: cs, planned, written_by: None, extra: None };
        push(&self.api, &ctx, ws, proposal)
    }
}

// ---------------------------------------------------------------- edit_file

/// `edit_file {path, edits: [{oldText, newText}], replaceAll?}`.
pub struct EditFile {
    api: CustomToolApi,
}

impl EditFile {
    pub fn new(api: CustomToolApi) -> Self {
        Self { api }
    }
}

struct EditParams {
    path: String,
    edits: Vec<TextEdit>,
    replace_all: bool,
}

fn edit_params(params: &Value) -> Result<EditParams, ToolError> {
    let obj = as_object(EDIT_FILE, params)?;
    check_known_keys(EDIT_FILE, "", obj, &["path", "edits", "replaceAll", "dryRun"])?;
    let path = string(EDIT_FILE, obj, "path", false, "a file path relative to the folder")?;
    const SHAPE: &str = "[{\"oldText\": \"exact text in the file\", \"newText\": \"what replaces it\"}]";
    let items = match obj.get("edits") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(other) => {
            return Err(invalid(format!("`edits` must be a non-empty list like {SHAPE}, got {}.", quote(other))))
        }
        None => return Err(invalid(format!("`edits` is required by `{EDIT_FILE}`: a list like {SHAPE}."))),
    };
    let mut edits = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::Object(e) = item else {
            return Err(invalid(format!("`edits[{i}]` must be an object like {SHAPE}, got {}.", quote(item))));
        };
        check_known_keys(EDIT_FILE, &format!("edits[{i}]"), e, &["oldText", "newText"])?;
        let old = string(EDIT_FILE, e, "oldText", true, "the exact text to replace").map_err(|err| at(i, err))?;
        let new = string(EDIT_FILE, e, "newText", true, "the text that replaces it").map_err(|err| at(i, err))?;
        edits.push(TextEdit { old, new });
    }
    let flag = |key: &str| match obj.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(invalid(format!("`{key}` must be true or false, got {}.", quote(other)))),
    };
    let replace_all = flag("replaceAll")?;
    // `dryRun` (the official server's): every call here is a preview; accepted, changes nothing.
    flag("dryRun")?;
    Ok(EditParams { path, edits, replace_all })
}

fn at(i: usize, err: ToolError) -> ToolError {
    invalid(format!("`edits[{i}]`: {err}"))
}

#[async_trait]
impl Tool for EditFile {
    fn name(&self) -> &str {
        EDIT_FILE
    }
    fn label(&self) -> &str {
        "Edit file"
    }
    fn preview_only(&self) -> bool {
        true
    }
    fn description(&self) -> &str {
        "Preview replacing exact text in a file. `edits` are applied in order, each to the text the earlier ones \
         left: `oldText` must occur exactly once (copy it exactly, spaces and line ends included) unless `replaceAll` \
         is true, which replaces every occurrence. Returns the diff and queues a pending action: nothing is written \
         until it is applied with the resolve tool."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "File path relative to the folder."},
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {"type": "string", "description": "Exact text to replace."},
                            "newText": {"type": "string", "description": "Text that replaces it."}
                        },
                        "required": ["oldText", "newText"],
                        "additionalProperties": false
                    }
                },
                "replaceAll": {"type": "boolean", "description": "Replace every occurrence of each oldText (default false: it must occur once)."},
                "dryRun": {"type": "boolean", "description": "Accepted for compatibility; every call is a preview."}
            },
            "required": ["path", "edits"],
            "additionalProperties": false
        })
    }
    fn check_params(&self, params: &Value) -> Result<(), ToolError> {
        edit_params(params).map(|_| ())
    }
    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let p = edit_params(&params)?;
        let ws = workspace_of(&self.api)?;
        let scan_ws = ws.clone();
        let (cs, planned) = blocking(move || {
            let now = read_target(&scan_ws, EDIT_FILE, &p.path)?;
            let Some(bytes) = now.bytes else {
                return Err(ToolError::NotFound(format!(
                    "{} (edit_file changes an existing file; to create it, use write_file)",
                    now.rel
                )));
            };
            let text = std::str::from_utf8(&bytes).map_err(|_| invalid(format!("{} is not UTF-8 text.", now.rel)))?;
            let after = apply_edits(&now.rel, text, &p.edits, p.replace_all)?;
            check_text(&now.rel, after.as_bytes(), "would hold")?;
            let mut cs = ChangeSet::new();
            cs.edit(now.rel.clone(), bytes.clone(), after.into_bytes());
            Ok((cs, vec![Planned { path: now.rel, change: "modified", from: None }]))
        })
        .await?;
        check_no_pending_change(&self.api, &[planned[0].path.clone()], None)?;
        let proposal =
            Proposal { verb: "Edit", source: EDIT_FILE, change_set: cs, planned, written_by: None, extra: None };
        push(&self.api, &ctx, ws, proposal)
    }
}

// ---------------------------------------------------------------- apply_patch

/// `apply_patch {patch}`: a `*** Begin Patch` patch or a unified diff.
pub struct ApplyPatch {
    api: CustomToolApi,
}

impl ApplyPatch {
    pub fn new(api: CustomToolApi) -> Self {
        Self { api }
    }
}

fn patch_param(params: &Value) -> Result<String, ToolError> {
    let obj = as_object(APPLY_PATCH, params)?;
    check_known_keys(APPLY_PATCH, "", obj, &["patch"])?;
    string(APPLY_PATCH, obj, "patch", false, "a `*** Begin Patch` patch or a unified diff")
}

#[async_trait]
impl Tool for ApplyPatch {
    fn name(&self) -> &str {
        APPLY_PATCH
    }
    fn label(&self) -> &str {
        "Apply patch"
    }
    fn preview_only(&self) -> bool {
        true
    }
    fn description(&self) -> &str {
        "Preview a patch over one or more files. `patch` is either the `*** Begin Patch` format (`*** Add File: p` \
         with `+` lines, `*** Delete File: p`, `*** Update File: p` with optional `*** Move to: q` and `@@` hunks of \
         ` `/`-`/`+` lines, `*** End Patch`) or a unified diff (`git diff` output, new, deleted and renamed files \
         included). Every hunk must match the file as it is now. Returns the diff and queues one pending action: \
         nothing is written until it is applied with the resolve tool."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"patch": {"type": "string", "minLength": 1, "description": "The patch text."}},
            "required": ["patch"],
            "additionalProperties": false
        })
    }
    fn check_params(&self, params: &Value) -> Result<(), ToolError> {
        let patch = patch_param(params)?;
        crate::patch::parse(&patch).map(|_| ())
    }
    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let patch = patch_param(&params)?;
        let ws = workspace_of(&self.api)?;
        let scan_ws = ws.clone();
        let cancel = ctx.clone();
        let (cs, planned) = blocking(move || {
            let format = crate::patch::detect(&patch)?;
            let files = crate::patch::parse(&patch)?;
            cancel.check_cancelled()?;
            crate::patch::apply::change_set(&scan_ws, APPLY_PATCH, &files, format)
        })
        .await?;
        ctx.check_cancelled()?;
        let mut paths: Vec<String> = planned.iter().map(|p| p.path.clone()).collect();
        paths.extend(planned.iter().filter_map(|p| p.from.clone()));
        check_no_pending_change(&self.api, &paths, None)?;
        let proposal =
            Proposal { verb: "Edit", source: APPLY_PATCH, change_set: cs, planned, written_by: None, extra: None };
        push(&self.api, &ctx, ws, proposal)
    }
}

// ---------------------------------------------------------------- gate_edit

/// The hidden `gate_edit`: an outside agent's own edit, held by its hook. The hook sends the
/// exact bytes the agent's tool would write; the desk reads each file, checks it still holds
/// what the hook read (`expect_blake3`), and pushes an action the agent writes itself once
/// approved. The same edit sent again joins its pending action; once decided while nobody
/// waited, the next identical call is told so (`state: "decided"`, then `await_decision`
/// gives the decision), and a call after that proposes it anew.
pub struct GateEdit {
    api: CustomToolApi,
    /// Gate key → the action it pushed (for joining and late decisions).
    pushed: Mutex<HashMap<String, String>>,
}

impl GateEdit {
    pub fn new(api: CustomToolApi) -> Self {
        Self { api, pushed: Mutex::new(HashMap::new()) }
    }
}

/// One file of a gated edit.
struct GateFile {
    path: String,
    /// `Some(None)`: must not exist; `Some(Some(h))`: must hold bytes of BLAKE3 `h`; `None`: not checked.
    expect: Option<Option<String>>,
    /// `None`: deleted.
    content: Option<String>,
}

struct GateParams {
    agent: String,
    tool: String,
    files: Vec<GateFile>,
}

fn gate_params(params: &Value) -> Result<GateParams, ToolError> {
    let obj = as_object(GATE_EDIT, params)?;
    check_known_keys(GATE_EDIT, "", obj, &["agent", "tool", "files"])?;
    let agent = string(GATE_EDIT, obj, "agent", false, "the agent's name, e.g. \"Claude Code\"")?;
    let tool = string(GATE_EDIT, obj, "tool", false, "the agent's tool, e.g. \"Edit\"")?;
    let Some(Value::Array(items)) = obj.get("files").filter(|v| v.as_array().is_some_and(|a| !a.is_empty())) else {
        return Err(invalid(format!(
            "`files` of `{GATE_EDIT}` must list the files the agent writes: [{{\"path\", \"expect_blake3\", \"content\"}}]."
        )));
    };
    let mut files = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(f) = item else {
            return Err(invalid(format!("`files[{i}]` must be an object, got {}.", quote(item))));
        };
        check_known_keys(GATE_EDIT, &format!("files[{i}]"), f, &["path", "expect_blake3", "content", "delete"])?;
        let path =
            string(GATE_EDIT, f, "path", false, "a file path").map_err(|e| invalid(format!("`files[{i}]`: {e}")))?;
        let expect = match f.get("expect_blake3") {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::String(h)) if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Some(Some(h.to_ascii_lowercase()))
            }
            Some(other) => {
                return Err(invalid(format!(
                    "`files[{i}].expect_blake3` must be a BLAKE3 hex hash or null, got {}.",
                    quote(other)
                )))
            }
        };
        let delete = matches!(f.get("delete"), Some(Value::Bool(true)));
        let content = match (f.get("content"), delete) {
            (Some(Value::String(c)), false) => Some(c.clone()),
            (None, true) => None,
            _ => {
                return Err(invalid(format!(
                    "`files[{i}]` needs either `content` (the bytes to write) or `\"delete\": true`."
                )))
            }
        };
        files.push(GateFile { path, expect, content });
    }
    Ok(GateParams { agent, tool, files })
}

#[async_trait]
impl Tool for GateEdit {
    fn name(&self) -> &str {
        GATE_EDIT
    }
    fn label(&self) -> &str {
        "Gate an agent's edit"
    }
    fn hidden(&self) -> bool {
        true
    }
    fn preview_only(&self) -> bool {
        true
    }
    fn description(&self) -> &str {
        "For outside agents' edit hooks (`rdesk hook`), never offered to a model: holds the agent's own edit as a \
         pending action that the agent writes itself once the person applies it."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "minLength": 1},
                "tool": {"type": "string", "minLength": 1},
                "files": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "minLength": 1},
                            "expect_blake3": {"type": ["string", "null"]},
                            "content": {"type": "string"},
                            "delete": {"type": "boolean"}
                        },
                        "required": ["path"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["agent", "tool", "files"],
            "additionalProperties": false
        })
    }
    fn check_params(&self, params: &Value) -> Result<(), ToolError> {
        gate_params(params).map(|_| ())
    }
    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let p = gate_params(&params)?;
        let ws = workspace_of(&self.api)?;
        let scan_ws = ws.clone();
        let (agent, tool) = (p.agent.clone(), p.tool.clone());
        let (cs, planned, key) = blocking(move || {
            let mut cs = ChangeSet::new();
            let mut planned = Vec::new();
            let mut key = blake3::Hasher::new();
            key.update(p.agent.as_bytes()).update(b"\0").update(p.tool.as_bytes());
            for f in &p.files {
                let now = read_target(&scan_ws, GATE_EDIT, &f.path)?;
                let now_hash = now.bytes.as_ref().map(|b| blake3::hash(b).to_hex().to_string());
                if let Some(expected) = &f.expect {
                    if *expected != now_hash {
                        return Err(ToolError::Stale {
                            files: vec![now.rel.clone()],
                            message: format!(
                                "{} changed after {} read it (it {} now); nothing was queued. Let the agent read it again.",
                                now.rel,
                                p.agent,
                                if now.bytes.is_some() { "holds other bytes" } else { "does not exist" }
                            ),
                        });
                    }
                }
                key.update(b"\0").update(now.rel.as_bytes()).update(b"\0").update(now_hash.as_deref().unwrap_or("-").as_bytes());
                let change = match (&f.content, &now.bytes) {
                    (Some(c), _) => {
                        check_text(&now.rel, c.as_bytes(), "would hold")?;
                        key.update(b"\0").update(blake3::hash(c.as_bytes()).as_bytes());
                        match &now.bytes {
                            Some(b) if b[..] == *c.as_bytes() => {
                                return Err(invalid(format!(
                                    "{} already holds exactly what {} would write; there is nothing to review.",
                                    now.rel, p.agent
                                )))
                            }
                            Some(b) => {
                                cs.edit(now.rel.clone(), b.clone(), c.clone().into_bytes());
                                "modified"
                            }
                            None => {
                                cs.create(now.rel.clone(), c.clone().into_bytes());
                                "added"
                            }
                        }
                    }
                    (None, Some(b)) => {
                        key.update(b"\0deleted");
                        cs.delete(now.rel.clone(), b.clone());
                        "deleted"
                    }
                    (None, None) => {
                        return Err(ToolError::NotFound(format!("{} ({} deletes it, but it does not exist)", now.rel, p.agent)))
                    }
                };
                planned.push(Planned { path: now.rel, change, from: None });
            }
            Ok((cs, planned, key.finalize().to_hex().to_string()))
        })
        .await?;
        let verb = format!("{agent} {tool}");
        // The same edit again: join its action while it is pending; tell once that it was decided.
        let known = self.pushed.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
        if let (Some(id), Some(store)) = (known, self.api.store()) {
            if let Some(info) = store.info(&id) {
                return Ok(ToolResult::text(format!(
                    "Joined the pending action {id} (\"{}\"): the same edit, still waiting.",
                    info.label
                ))
                .with_details(json!({"action_id": id, "state": "pending", "label": info.label})));
            }
            self.pushed.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
            return Ok(ToolResult::text(format!(
                "{id} was decided while {agent} was not waiting; ask for its decision."
            ))
            .with_details(json!({"action_id": id, "state": "decided"})));
        }
        let paths: Vec<String> = planned.iter().map(|p| p.path.clone()).collect();
        check_no_pending_change(&self.api, &paths, None)?;
        let extra = json!({"gate_key": key, "agent": agent, "agent_tool": tool});
        let proposal = Proposal {
            verb: &verb,
            source: GATE_EDIT,
            change_set: cs,
            planned,
            written_by: Some(&agent),
            extra: Some(extra),
        };
        let mut result = push(&self.api, &ctx, ws, proposal)?;
        if let Some(Value::Object(d)) = result.details.as_mut() {
            d.insert("state".into(), json!("pushed"));
            if let Some(Value::String(id)) = d.get("action_id") {
                self.pushed.lock().unwrap_or_else(|e| e.into_inner()).insert(key, id.clone());
            }
        }
        Ok(result)
    }
}
