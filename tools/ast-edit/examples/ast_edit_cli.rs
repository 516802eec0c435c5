//! A one-shot command line over the library API, with the argument syntax of
//! `rdesk ast-edit` (so the benchmark can run before `rdesk` has the command):
//!
//! ```text
//! ast_edit_cli [--lang L] --pat P --out R [--pat P2 --out R2]... [--sel K] [--glob G]
//!              [--limit N] [--max-files N] [--root DIR] [--json] [--apply] PATH...
//! ```
//! Default: print every diff, then the summary. `--json`: one compact JSON object.
//! `--apply`: preview, then write it through `ChangeSet::apply` (hash-checked, atomic).
//! The workspace is `--root`, else the current directory, else (when the only PATH is a
//! directory outside it) that directory. No changed-file cap unless `--max-files` is given.

use std::io::Write;
use std::process::ExitCode;

use resolve_engine::{CancellationToken, Workspace};
use resolve_tool_ast_edit::{preview, AstEditParams, RewriteOp, ScanOptions};

struct Args {
    params: AstEditParams,
    paths: Vec<String>,
    root: Option<String>,
    json: bool,
    apply: bool,
    max_files: Option<usize>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        params: AstEditParams::default(),
        paths: Vec::new(),
        root: None,
        json: false,
        apply: false,
        max_files: None,
    };
    let mut pats = Vec::new();
    let mut outs = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--lang" | "-l" => a.params.lang = Some(val("--lang")?),
            "--pat" | "-p" => pats.push(val("--pat")?),
            "--out" | "-r" => outs.push(val("--out")?),
            "--sel" => a.params.sel = Some(val("--sel")?),
            "--glob" => a.params.glob = Some(val("--glob")?),
            "--limit" => a.params.limit = Some(val("--limit")?.parse().map_err(|_| "limit must be a positive number")?),
            "--max-files" => a.max_files = Some(val("--max-files")?.parse().map_err(|_| "--max-files needs a number")?),
            "--root" => a.root = Some(val("--root")?),
            "--json" => a.json = true,
            "--apply" | "-U" => a.apply = true,
            "--help" | "-h" => return Err("usage: ast_edit_cli [--lang L] --pat P --out R [--sel K] [--glob G] [--limit N] [--max-files N] [--root DIR] [--json] [--apply] PATH...".into()),
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown option {s}")),
            _ => a.paths.push(arg),
        }
    }
    if outs.len() > pats.len() {
        return Err("every --out needs a --pat before it".into());
    }
    outs.resize(pats.len(), String::new());
    a.params.ops = pats.into_iter().zip(outs).map(|(pat, out)| RewriteOp { pat, out }).collect();
    Ok(a)
}

fn run() -> Result<bool, String> {
    let mut args = parse_args()?;
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let root = match &args.root {
        Some(r) => r.into(),
        None => {
            let outside = args.paths.iter().any(|p| {
                std::path::Path::new(p)
                    .canonicalize()
                    .map(|c| !c.starts_with(cwd.canonicalize().unwrap_or(cwd.clone())))
                    .unwrap_or(false)
            });
            if outside && args.paths.len() == 1 && std::path::Path::new(&args.paths[0]).is_dir() {
                let dir = args.paths.remove(0);
                std::path::PathBuf::from(dir)
            } else {
                cwd
            }
        }
    };
    let ws = Workspace::open(&root).map_err(|e| e.to_string())?;
    let abs: Vec<String> = args
        .paths
        .iter()
        .map(|p| {
            let c = std::path::Path::new(p).canonicalize().unwrap_or_else(|_| p.into());
            ws.relative(&c).unwrap_or_else(|_| p.clone())
        })
        .collect();
    if !abs.is_empty() {
        args.params.path = Some(abs.join(","));
    }
    let opts = ScanOptions {
        max_changed_files: args.max_files.unwrap_or(usize::MAX),
        render_diffs: !args.json,
        keep_change_set: args.apply,
        ..ScanOptions::default()
    };
    let p = preview(&ws, &args.params, &opts, &CancellationToken::new(), None).map_err(|e| e.to_string())?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        serde_json::to_writer(&mut out, &p.to_json()).map_err(|e| e.to_string())?;
        writeln!(out).map_err(|e| e.to_string())?;
    } else {
        out.write_all(p.unified_diff().as_bytes()).map_err(|e| e.to_string())?;
        writeln!(out, "{}", p.summary_text()).map_err(|e| e.to_string())?;
    }
    if args.apply && p.replacements > 0 {
        p.change_set.apply(&ws).map_err(|e| e.to_string())?;
        writeln!(out, "{}", p.applied_text()).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())?;
    Ok(p.replacements > 0)
}

fn main() -> ExitCode {
    match run() {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
