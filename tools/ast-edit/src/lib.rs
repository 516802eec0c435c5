//! # resolve-tool-ast-edit
//!
//! The built-in producer `ast_edit` (SPEC §5): structural rewrites with ast-grep over a
//! workspace, previewed first and written only when the pending action is applied.
//!
//! Why it is shaped this way: the preview computes the complete new content of every file it
//! would change and hands it to a [`ChangeSet`](resolve_engine::ChangeSet), pinned to the
//! bytes it read. Apply never searches again: it writes exactly what was shown, after the
//! hash check, or nothing. The same [`preview()`] function serves the agent tool
//! ([`factory`]) and a one-shot command line (`rdesk ast-edit`).
//!
//! Modules, in reading order:
//! - [`params`]: parameters, JSON Schema, validation with the exact SPEC messages
//! - `scope`: which files a call looks at (paths, globs, ignore files, workspace checks)
//! - `rewrite`: one file — parse, match, overlap rules, BOM and CRLF
//! - [`scan`]: the parallel, cancellable scan that builds a [`Preview`]
//! - [`alloc`]: tree-sitter on mimalloc (the binaries switch it on first in `main`)
//! - [`cache`]: the per-session [`PreviewCache`] (a re-run parses only the files that
//!   changed; bounded by `RESOLVE_DESK_PREVIEW_CACHE_MIB`)
//! - [`preview`](mod@preview): the preview and its renderings (text, JSON, UI details)
//!
//! - `tool`: the tool itself ([`AstEditTool`], [`factory`]): validate, scan on the blocking
//!   pool, push.

pub mod alloc;
pub mod cache;
pub mod params;
pub mod preview;
mod rewrite;
pub mod scan;
mod scope;
mod tool;

pub use cache::{CacheStats, PreviewCache};
pub use params::{parameters_schema, parse_lang, supported_languages, AstEditParams, RewriteOp, ValidParams};
pub use preview::{FileReport, MatchInfo, ParseIssue, PatternIssue, Preview, SkippedFile, StopReason};
pub use scan::{preview, preview_cached, ProgressFn, ScanOptions};
pub use tool::{factory, factory_with, factory_with_cache, AstEditTool};

/// The tool's name (exact, SPEC §5) and the pending action's `source_tool_name`.
pub const TOOL_NAME: &str = "ast_edit";
