//! `rdesk ast-edit`: the `ast_edit` tool outside any session — a codemod with a preview and
//! atomic, hash-checked writes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use resolve_engine::{CancellationToken, Workspace};
use resolve_tool_ast_edit::{preview, AstEditParams, RewriteOp, ScanOptions};

#[derive(Args)]
pub struct AstEditArgs {
    /// Language of the files (aliases like ts, rs, py); default: each file's own, by extension.
    #[arg(long, short = 'l')]
    lang: Option<String>,
    /// Pattern to find (ast-grep syntax: `$A` one node, `$$$A` many). Repeat with --out for several ops.
    #[arg(long = "pat", short = 'p', required = true)]
    pats: Vec<String>,
    /// Rewrite for the --pat before it (may be empty: deletes the match).
    #[arg(long = "out", short = 'r', allow_hyphen_values = true)]
    outs: Vec<String>,
    /// Node kind to rewrite when the pattern is contextual (e.g. method_definition).
    #[arg(long)]
    sel: Option<String>,
    /// Extra filter relative to PATH (`*` does not cross `/`, `**` does).
    #[arg(long)]
    glob: Option<String>,
    /// At most this many replacements.
    #[arg(long)]
    limit: Option<usize>,
    /// Stop after this many changed files (default: no cap).
    #[arg(long)]
    max_files: Option<usize>,
    /// The workspace root every path must stay inside (default: the current folder, or
    /// the single folder PATH when it lies outside the current folder).
    #[arg(long, short = 'w')]
    workspace: Option<PathBuf>,
    /// Print one compact JSON object (summary and per-file matches) instead of diffs.
    #[arg(long)]
    json: bool,
    /// Write the previewed changes (all files or none; refused if a file changed meanwhile).
    #[arg(long, short = 'U')]
    apply: bool,
    /// Files, folders or globs to search (default: the workspace).
    paths: Vec<String>,
}

pub fn run(mut args: AstEditArgs) -> ExitCode {
    match run_inner(&mut args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rdesk ast-edit: {}", crate::terminal::safe(&e));
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: &mut AstEditArgs) -> Result<(), String> {
    if args.outs.len() > args.pats.len() {
        return Err("every --out needs a --pat before it".into());
    }
    let mut outs = std::mem::take(&mut args.outs);
    outs.resize(args.pats.len(), String::new());
    let mut params = AstEditParams {
        ops: args.pats.iter().cloned().zip(outs).map(|(pat, out)| RewriteOp { pat, out }).collect(),
        lang: args.lang.clone(),
        glob: args.glob.clone(),
        sel: args.sel.clone(),
        limit: args.limit,
        ..AstEditParams::default()
    };
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
    let root = match &args.workspace {
        Some(w) => w.clone(),
        None => default_root(&cwd, &mut args.paths),
    };
    let ws = Workspace::open(&root).map_err(|e| e.to_string())?;
    if args.apply {
        // An apply interrupted here by a killed process is finished before this one is planned.
        crate::recovery::report(resolve_engine::recover(&ws).as_ref());
    }
    let rel: Vec<String> = args
        .paths
        .iter()
        .map(|p| {
            let abs = Path::new(p).canonicalize().unwrap_or_else(|_| p.into());
            ws.relative(&abs).unwrap_or_else(|_| p.clone())
        })
        .collect();
    if !rel.is_empty() {
        params.path = Some(rel.join(","));
    }
    let opts = ScanOptions {
        max_changed_files: args.max_files.unwrap_or(usize::MAX),
        render_diffs: !args.json,
        // Only an apply needs the new contents kept; a preview streams (lower peak memory).
        keep_change_set: args.apply,
        ..ScanOptions::default()
    };
    let p = preview(&ws, &params, &opts, &CancellationToken::new(), None).map_err(|e| e.to_string())?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let io = |e: std::io::Error| format!("cannot write the output: {e}");
    if args.json {
        serde_json::to_writer(&mut out, &p.to_json()).map_err(|e| e.to_string())?;
        writeln!(out).map_err(io)?;
    } else {
        // Diffs and summaries quote the files: escaped, so a file cannot drive the terminal.
        out.write_all(crate::terminal::safe(&p.unified_diff()).as_bytes()).map_err(io)?;
        writeln!(out, "{}", crate::terminal::safe(&p.summary_text())).map_err(io)?;
    }
    if args.apply && p.replacements > 0 {
        out.flush().map_err(io)?;
        p.change_set.apply(&ws).map_err(|e| e.to_string())?;
        writeln!(out, "{}", crate::terminal::safe(&p.applied_text())).map_err(io)?;
    }
    out.flush().map_err(io)
}

/// The current folder, unless the only PATH is a folder outside it: then that folder.
fn default_root(cwd: &Path, paths: &mut Vec<String>) -> PathBuf {
    if let [only] = paths.as_slice() {
        let p = Path::new(only);
        let cwd_c = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        if let Ok(c) = p.canonicalize() {
            if c.is_dir() && !c.starts_with(&cwd_c) {
                paths.clear();
                return c;
            }
        }
    }
    cwd.to_path_buf()
}
