//! The `batch_rename_preview` tool: parameters, preview text, and the pending action it
//! pushes. This is the part a custom tool author copies.

use async_trait::async_trait;
use resolve_engine::changeset::plural;
use resolve_engine::params::{as_object, check_known_keys, quote};
use resolve_engine::{CustomToolApi, CustomToolPendingAction, Tool, ToolContext, ToolError, ToolResult};
use serde_json::{json, Value};

use crate::plan::{self, RenamePlan};
use crate::select;

/// The tool's name (also the `source_tool_name` of the actions it pushes).
pub const TOOL_NAME: &str = "batch_rename_preview";

/// The parameters the tool takes.
const PARAM_KEYS: [&str; 3] = ["files", "find", "replace"];

struct Params {
    /// One path or glob, or a list of them (never empty).
    files: Vec<String>,
    find: String,
    replace: String,
}

fn invalid(message: String) -> ToolError {
    ToolError::InvalidParams(message)
}

impl Params {
    /// Reads the parameters by hand, so every message names the field and quotes the bad
    /// value, and an unknown key is refused by name (the session runs this before the schema).
    fn parse(params: &Value) -> Result<Self, ToolError> {
        let obj = as_object(TOOL_NAME, params)?;
        check_known_keys(TOOL_NAME, "", obj, &PARAM_KEYS)?;
        let files = match obj.get("files") {
            None | Some(Value::Null) => return Err(invalid(
                "`files` is required: one path or glob relative to the workspace (`photos/*.jpg`), or a list of them."
                    .into(),
            )),
            Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
            Some(Value::Array(items)) if items.is_empty() => {
                return Err(invalid("`files` must name at least one path or glob, got [].".into()))
            }
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) if !s.is_empty() => Ok(s.clone()),
                    other => {
                        Err(invalid(format!("`files[{i}]` must be a non-empty path or glob, got {}.", quote(other))))
                    }
                })
                .collect::<Result<Vec<_>, _>>()?,
            Some(other) => {
                return Err(invalid(format!(
                    "`files` must be a path or glob, or a list of them, got {}.",
                    quote(other)
                )))
            }
        };
        let find = match obj.get("find") {
            None => {
                return Err(invalid(
                    "`find` is required: a regular expression matched against each file name, e.g. `^IMG_(\\d+)`."
                        .into(),
                ))
            }
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(s)) => {
                return Err(invalid(format!(
                    "`find` must be a non-empty regular expression, got {}.",
                    quote(&json!(s))
                )))
            }
            Some(other) => {
                return Err(invalid(format!("`find` must be a string (a regular expression), got {}.", quote(other))))
            }
        };
        let replace = match obj.get("replace") {
            None => return Err(invalid(
                "`replace` is required: the replacement for every match (may be empty; `$1` inserts a capture group)."
                    .into(),
            )),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(invalid(format!("`replace` must be a string (it may be empty), got {}.", quote(other))))
            }
        };
        Ok(Self { files, find, replace })
    }
}

/// Previews a batch rename and pushes it as a pending action; nothing is renamed until the
/// action is applied.
pub struct BatchRenamePreview {
    api: CustomToolApi,
}

impl BatchRenamePreview {
    /// A tool that pushes its previews through `api`.
    pub fn new(api: CustomToolApi) -> Self {
        Self { api }
    }
}

/// `Batch rename: 1 file`, `Batch rename: 3 files` (exact, SPEC §8).
pub fn label(count: usize) -> String {
    format!("Batch rename: {}", plural(count, "file", "files"))
}

#[async_trait]
impl Tool for BatchRenamePreview {
    fn name(&self) -> &str {
        TOOL_NAME
    }

    fn label(&self) -> &str {
        "Batch rename"
    }

    /// It reads the workspace and proposes a change set; it never writes a file itself.
    fn preview_only(&self) -> bool {
        true
    }

    fn description(&self) -> &str {
        "Preview renaming many files at once. Each selected file's name (not its folder) is matched \
         against the regular expression `find`; every match is replaced by `replace` ($1 or ${name} insert \
         capture groups, $$ is a literal $; start `find` with (?i) to ignore case). Files stay in their folders; folders are never renamed; \
         symlinks are renamed as links. Returns an old → new table and queues a pending action: nothing \
         is renamed until it is applied with the resolve tool."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "files": {
                    "description": "Files to consider: paths or globs relative to the workspace (`photos/*.jpg`, `docs/**/*.md`; `*` does not cross `/`, `**` does). One string or a list.",
                    "anyOf": [
                        {"type": "string", "minLength": 1},
                        {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
                    ]
                },
                "find": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Regular expression (Rust regex syntax) matched against each file name, e.g. `^IMG_(\\d+)`."
                },
                "replace": {
                    "type": "string",
                    "description": "Replacement for every match; `$1` / `${name}` insert capture groups (write `${1}_x`, not `$1_x`), `$$` is a literal `$`. May be empty."
                }
            },
            "required": ["files", "find", "replace"],
            "additionalProperties": false
        })
    }

    fn check_params(&self, params: &Value) -> Result<(), ToolError> {
        Params::parse(params).map(|_| ())
    }

    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let params = Params::parse(&params)?;
        let patterns = params.files;
        let find = plan::compile(&params.find, &params.replace)?;
        let ws = self.api.workspace()?;

        // 1. Preview: select files and compute the checked plan (reads the disk, writes nothing).
        let (plan, notes) = {
            let (ws, cancel, replace) = (ws.clone(), ctx.cancel.clone(), params.replace.clone());
            tokio::task::spawn_blocking(move || -> Result<_, plan::RenameError> {
                let selection = select::select(&ws, &patterns, &cancel)?;
                let plan = RenamePlan::compute(&ws, selection.entries, &find, &replace, &patterns)?;
                Ok((plan, selection.notes))
            })
            .await
            .map_err(|e| ToolError::Failed(format!("the preview stopped unexpectedly: {e}; nothing was queued")))??
        };
        let count = plan.count();
        let mut text = format!("Batch rename preview: {}.\n\n{}", plan.summary(), plan.table());
        if !notes.is_empty() {
            text.push('\n');
        }
        for note in &notes {
            text.push_str(&format!("Note: {note}\n"));
        }
        if count == 0 {
            text.push_str(
                "\n`find` changes no file name, so there is nothing to rename and no pending action was queued.",
            );
            return Ok(ToolResult::text(text).with_details(plan.details()));
        }

        // 2. Push the pending action: its change set, its table, reject, details, source.
        //
        // The renames go to the engine as a change set through the public API: on apply the
        // engine re-checks every source (still there, same type, same content hash) and every
        // target (still free), then renames through temporary names in the same folder and
        // undoes everything on any failure. A stale source keeps the action, marked stale.
        // The engine sees the change set (its files, its counts) and reports apply warnings.
        let details = plan.details();
        let action = CustomToolPendingAction::from_change_set(
            label(count),
            plan.change_set(),
            ws,
            format!("Renamed {}.", plural(count, "file", "files")),
        )
        .with_renames(plan.rename_rows())
        // A discard text, not a closure: it is stored with the action and survives a restart.
        .with_discard_text(format!("Discarded batch rename of {}.", plural(count, "file", "files")))
        .with_details(details.clone())
        .with_source_tool_name(TOOL_NAME);
        let id = self.api.push_from(&ctx, action)?;

        text.push_str(&format!(
            "\nNothing has been renamed yet: apply the pending action \"{}\" to rename, or discard it.",
            label(count)
        ));
        let mut result_details = details;
        result_details["action_id"] = json!(id);
        Ok(ToolResult::text(text).with_details(result_details))
    }
}
