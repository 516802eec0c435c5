//! The `ast_edit` tool: validate, scan on the blocking pool, push the preview as a pending
//! action; and the factories a session loads it from.

use std::sync::Arc;

use async_trait::async_trait;
use resolve_engine::{CustomToolApi, CustomToolPendingAction, Tool, ToolContext, ToolError, ToolResult};
use serde_json::Value;

use crate::cache::{self, CacheStats, PreviewCache};
use crate::params::{parameters_schema, AstEditParams};
use crate::preview;
use crate::scan::{preview_cached, ScanOptions};
use crate::TOOL_NAME;

/// The `ast_edit` tool of one session, with the session's preview cache.
pub struct AstEditTool {
    api: CustomToolApi,
    options: ScanOptions,
    cache: Arc<PreviewCache>,
}

impl AstEditTool {
    /// A tool with its own cache of `options.preview_cache_bytes`.
    pub fn new(api: CustomToolApi, options: ScanOptions) -> Self {
        let cache = Arc::new(PreviewCache::new(options.preview_cache_bytes));
        Self::with_cache(api, options, cache)
    }

    /// A tool using `cache` (for example one a caller keeps to read its stats).
    pub fn with_cache(api: CustomToolApi, options: ScanOptions, cache: Arc<PreviewCache>) -> Self {
        Self { api, options, cache }
    }

    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }
}

/// A factory for [`Session::load`](resolve_engine::Session::load) with default options and
/// a preview cache bounded by `RESOLVE_DESK_PREVIEW_CACHE_MIB` (default 64; a value that is
/// not a number is reported on stderr and the default is used).
pub fn factory() -> impl FnOnce(&CustomToolApi) -> Vec<Arc<dyn Tool>> {
    let preview_cache_bytes = cache::capacity_from_env().unwrap_or_else(|message| {
        eprintln!("ast_edit: {message}; using {} MiB", cache::DEFAULT_PREVIEW_CACHE_BYTES >> 20);
        cache::DEFAULT_PREVIEW_CACHE_BYTES
    });
    factory_with(ScanOptions { preview_cache_bytes, ..ScanOptions::default() })
}

/// A factory with chosen scan options (file cap, size limit, threads, cache bound).
pub fn factory_with(options: ScanOptions) -> impl FnOnce(&CustomToolApi) -> Vec<Arc<dyn Tool>> {
    move |api: &CustomToolApi| vec![Arc::new(AstEditTool::new(api.clone(), options)) as Arc<dyn Tool>]
}

/// A factory whose tool uses `cache` (shared with the caller, who can read its stats).
pub fn factory_with_cache(
    options: ScanOptions,
    cache: Arc<PreviewCache>,
) -> impl FnOnce(&CustomToolApi) -> Vec<Arc<dyn Tool>> {
    move |api: &CustomToolApi| vec![Arc::new(AstEditTool::with_cache(api.clone(), options, cache)) as Arc<dyn Tool>]
}

#[async_trait]
impl Tool for AstEditTool {
    fn name(&self) -> &str {
        TOOL_NAME
    }

    fn label(&self) -> &str {
        "AST Edit"
    }

    /// It reads the workspace and proposes a change set; it never writes a file itself.
    fn preview_only(&self) -> bool {
        true
    }

    fn description(&self) -> &str {
        "Structural search-and-replace with ast-grep patterns over files of the workspace. \
         Shows a preview (per-file counts and unified diffs) and pushes a pending action; \
         nothing is written until it is applied with the resolve tool."
    }

    fn parameters(&self) -> Value {
        parameters_schema()
    }

    /// SPEC §5's messages (`` `ops` must include at least one op entry ``…) and unknown keys,
    /// before the session's schema check.
    fn check_params(&self, params: &Value) -> Result<(), ToolError> {
        AstEditParams::from_json(params)?.validate().map(|_| ())
    }

    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let params = AstEditParams::from_json(&params)?;
        params.validate()?;
        let ws = self.api.workspace()?;
        // No diffs while scanning: the text renders the few it shows from the change set, and
        // the details carry none (see `preview`).
        let options = ScanOptions { render_diffs: false, ..self.options.clone() };
        let context = options.context;
        let scan_ws = ws.clone();
        let scan_ctx = ctx.clone();
        let cache = self.cache.clone();
        let preview = tokio::task::spawn_blocking(move || {
            let report = |p| scan_ctx.report(p);
            preview_cached(&scan_ws, &params, &options, &scan_ctx.cancel, Some(&report), &cache)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("ast_edit stopped unexpectedly: {e}; nothing was changed")))??;
        ctx.check_cancelled()?;

        let mut details = preview.details();
        if preview.replacements == 0 {
            return Ok(ToolResult::text(preview.summary_text()).with_details(details));
        }
        let text = preview.text_with_context(preview::TEXT_DIFF_BYTES, context);
        let label = preview.label();
        let applied = preview.applied_text();
        let action_details = preview.action_details();
        let action = CustomToolPendingAction::from_change_set(label, preview.change_set, ws, applied)
            .with_source_tool_name(TOOL_NAME)
            .with_details(action_details);
        let id = self.api.push_from(&ctx, action)?;
        details["action_id"] = Value::String(id);
        Ok(ToolResult::text(text).with_details(details))
    }
}
