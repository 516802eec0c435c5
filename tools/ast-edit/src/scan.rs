//! The preview: list the files, compile the ops per language, scan in parallel, assemble a
//! [`Preview`]. Nothing here writes; the preview's change set is what an apply writes.
//!
//! Scheduling: every core pulls the next file from one shared queue ordered largest first
//! (so one huge file never ends the run alone), or in path order when `limit` is set (so the
//! replacements kept are the first ones in path order, as far as the parallel scan allows).
//! `limit` and the changed-file cap stop the scan early; the cut is then made in path order.
//!
//! With a [`PreviewCache`] ([`preview_cached`]), every file is still read and its bytes
//! hashed; only the parse, the matching and the diff of a file whose bytes, path and
//! preview setup were seen before are skipped. The assembly is the same either way.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ast_grep_language::SupportLang;
use resolve_engine::{diff, CancellationToken, ChangeSet, Progress, Replacements, ToolError, Workspace};

use crate::cache::{self, Cached, PreviewCache};
use crate::params::AstEditParams;
use crate::preview::{FileReport, MatchInfo, ParseIssue, PatternIssue, Preview, SkippedFile, StopReason};
use crate::rewrite::{self, FileScan, FileSkip, LangOps};
use crate::scope::{self, FileEntry};

/// Knobs of a scan. `Default` is what the agent tool uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOptions {
    /// Stop once this many files would change (SPEC §5: default 1000).
    pub max_changed_files: usize,
    /// Files larger than this are skipped with a note.
    pub max_file_bytes: u64,
    /// Worker threads; None: every core.
    pub threads: Option<usize>,
    /// Render unified diffs (and added/removed counts) while scanning. The JSON form of a
    /// command line does not need them.
    pub render_diffs: bool,
    /// Lines of context in diffs.
    pub context: usize,
    /// Keep the bytes read and the bytes to write in [`Preview::change_set`]. A command line
    /// that only prints the preview sets it to false, so memory stays at the size of the
    /// diffs instead of twice the size of every changed file.
    pub keep_change_set: bool,
    /// The bound of the preview cache a tool creates for its session, in bytes (0: no
    /// cache). Default 64 MiB; [`crate::factory`] takes it from
    /// `RESOLVE_DESK_PREVIEW_CACHE_MIB`. [`preview`] itself never caches.
    pub preview_cache_bytes: usize,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            max_changed_files: 1000,
            max_file_bytes: 8 * 1024 * 1024,
            threads: None,
            render_diffs: true,
            context: 3,
            keep_change_set: true,
            preview_cache_bytes: cache::DEFAULT_PREVIEW_CACHE_BYTES,
        }
    }
}

/// Receives progress (files scanned / total) from any thread.
pub type ProgressFn<'a> = &'a (dyn Fn(Progress) + Sync);

struct Rendered {
    after: Vec<u8>,
    diff: Option<String>,
    added: Option<u32>,
    removed: Option<u32>,
}

enum Outcome {
    Skipped(FileSkip),
    Found(FileScan, Option<Rendered>),
}

fn render(rel: &str, scan: &FileScan, n: usize, opts: &ScanOptions) -> Rendered {
    let after = scan.render(n);
    if !opts.render_diffs {
        return Rendered { after, diff: None, added: None, removed: None };
    }
    let text = diff::unified(rel, &scan.before, &after, opts.context);
    let (mut added, mut removed) = (0u32, 0u32);
    for line in text.lines().skip(2) {
        if line.starts_with('+') {
            added += 1;
        } else if line.starts_with('-') {
            removed += 1;
        }
    }
    Rendered { after, diff: Some(text), added: Some(added), removed: Some(removed) }
}

/// Computes the preview of `params` in `ws`. Writes nothing.
pub fn preview(
    ws: &Workspace,
    params: &AstEditParams,
    opts: &ScanOptions,
    cancel: &CancellationToken,
    progress: Option<ProgressFn<'_>>,
) -> Result<Preview, ToolError> {
    scan(ws, params, opts, cancel, progress, None)
}

/// [`preview`] with a cache: a file whose bytes (hashed now), path and setup are in `cache`
/// is not parsed again. The result is identical to [`preview`]'s. Writes nothing.
pub fn preview_cached(
    ws: &Workspace,
    params: &AstEditParams,
    opts: &ScanOptions,
    cancel: &CancellationToken,
    progress: Option<ProgressFn<'_>>,
    cache: &PreviewCache,
) -> Result<Preview, ToolError> {
    scan(ws, params, opts, cancel, progress, cache.is_enabled().then_some(cache))
}

fn scan(
    ws: &Workspace,
    params: &AstEditParams,
    opts: &ScanOptions,
    cancel: &CancellationToken,
    progress: Option<ProgressFn<'_>>,
    cache: Option<&PreviewCache>,
) -> Result<Preview, ToolError> {
    let valid = params.validate()?;
    let listing = scope::list_files(ws, valid.path.as_deref(), valid.glob.as_deref(), valid.lang, cancel)?;

    // Compile every op for every language present (and for `lang`, to validate it).
    let mut langs: Vec<SupportLang> = listing.files.iter().map(|f| f.lang).collect();
    langs.extend(valid.lang);
    langs.sort_by_key(|l| l.to_string());
    langs.dedup();
    let mut pattern_issues = Vec::new();
    let mut compiled: BTreeMap<String, LangOps> = BTreeMap::new();
    let mut setups: BTreeMap<String, cache::Setup> = BTreeMap::new();
    for &lang in &langs {
        let mut ops = Vec::new();
        for (i, op) in valid.ops.iter().enumerate() {
            match rewrite::compile(i, &op.pat, &op.out, valid.sel.as_deref(), lang) {
                Ok(c) => ops.push(c),
                Err(message) => {
                    if valid.lang.is_some() {
                        return Err(ToolError::InvalidParams(format!(
                            "Invalid pattern in `ops[{i}].pat` for {lang}: {message}"
                        )));
                    }
                    pattern_issues.push(PatternIssue { op: i, pat: op.pat.clone(), lang: lang.to_string(), message });
                }
            }
        }
        if !ops.is_empty() {
            compiled.insert(lang.to_string(), LangOps { lang, ops });
            setups.insert(
                lang.to_string(),
                cache::Setup::of(lang, &valid.ops, valid.sel.as_deref(), opts.render_diffs, opts.context),
            );
        }
    }
    if compiled.is_empty() && !langs.is_empty() {
        let list: Vec<String> =
            pattern_issues.iter().map(|p| format!("ops[{}] for {}: {}", p.op, p.lang, p.message)).collect();
        return Err(ToolError::InvalidParams(format!(
            "No pattern compiles for the languages of the files in scope: {}",
            list.join("; ")
        )));
    }

    let mut files: Vec<&FileEntry> =
        listing.files.iter().filter(|f| compiled.contains_key(&f.lang.to_string())).collect();
    let uncompiled = listing.files.len() - files.len();
    if valid.limit.is_none() {
        files.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.rel.cmp(&b.rel)));
    }
    let total = files.len();
    let threads = opts
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
        .clamp(1, total.max(1));

    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let found_replacements = AtomicUsize::new(0);
    let found_files = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let limit = valid.limit.unwrap_or(usize::MAX);
    // Without a change set and without a limit (which may re-render a file), the bytes are
    // dropped as soon as the diff is rendered.
    let drop_bytes = !opts.keep_change_set && valid.limit.is_none();
    let by_lang: Vec<(&LangOps, cache::Setup)> =
        files.iter().map(|f| (&compiled[&f.lang.to_string()], setups[&f.lang.to_string()])).collect();

    let worker = || {
        let mut out: Vec<(usize, Outcome)> = Vec::new();
        loop {
            if stop.load(Ordering::Relaxed) || cancel.is_cancelled() {
                break;
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= total {
                break;
            }
            let f = files[i];
            let (ops, setup) = by_lang[i];
            let outcome = scan_one(f, ops, opts, drop_bytes, cache.map(|c| (c, setup)));
            if let Some(Outcome::Found(scan, _)) = &outcome {
                if !scan.edits.is_empty() {
                    let r = found_replacements.fetch_add(scan.edits.len(), Ordering::Relaxed) + scan.edits.len();
                    let n = found_files.fetch_add(1, Ordering::Relaxed) + 1;
                    if r >= limit || n > opts.max_changed_files {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            if let Some(o) = outcome {
                out.push((i, o));
            }
            let d = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = progress {
                if d.is_multiple_of(64) || d == total {
                    p(Progress {
                        done: d as u64,
                        total: Some(total as u64),
                        message: Some(format!("{d}/{total} files scanned")),
                    });
                }
            }
        }
        out
    };
    let mut results: Vec<(usize, Outcome)> = if threads <= 1 {
        worker()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|_| s.spawn(worker)).collect();
            handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
        })
    };
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled("ast_edit was cancelled while scanning; nothing was changed".into()));
    }
    let scanned = done.load(Ordering::Relaxed);
    results.sort_by(|a, b| files[a.0].rel.cmp(&files[b.0].rel));

    // Assemble in path order, cutting at `limit` and the file cap.
    let mut preview =
        Preview { files_listed: listing.files.len(), files_scanned: scanned, pattern_issues, ..Preview::default() };
    let mut change_set = ChangeSet::new();
    let mut remaining = limit;
    for (i, outcome) in results {
        let f = files[i];
        match outcome {
            Outcome::Skipped(why) => {
                preview.skipped_files.push(SkippedFile { path: f.rel.clone(), reason: why.to_string() })
            }
            Outcome::Found(scan, rendered) => {
                preview.matches_found += scan.parse_skipped.len();
                if !scan.parse_skipped.is_empty() {
                    preview.parse_issues.push(ParseIssue {
                        path: f.rel.clone(),
                        line: scan.parse_skipped[0],
                        count: scan.parse_skipped.len(),
                        lines: scan.parse_skipped.clone(),
                    });
                }
                if scan.edits.is_empty() {
                    continue;
                }
                if remaining == 0 {
                    preview.stopped.get_or_insert(StopReason::Limit { limit });
                    continue;
                }
                if preview.files.len() >= opts.max_changed_files {
                    preview.stopped.get_or_insert(StopReason::FileCap { cap: opts.max_changed_files });
                    continue;
                }
                let n = scan.edits.len().min(remaining);
                let rendered = match rendered {
                    Some(r) if n == scan.edits.len() => r,
                    _ => render(&f.rel, &scan, n, opts),
                };
                if n < scan.edits.len() {
                    preview.stopped.get_or_insert(StopReason::Limit { limit });
                }
                remaining -= n;
                preview.replacements += n;
                preview.nested_skipped += scan.nested_skipped;
                preview.overlap_skipped += scan.overlap_skipped;
                preview.files.push(FileReport {
                    path: f.rel.clone(),
                    lang: f.lang.to_string(),
                    replacements: n,
                    added: rendered.added,
                    removed: rendered.removed,
                    nested_skipped: scan.nested_skipped,
                    overlap_skipped: scan.overlap_skipped,
                    matches: scan.edits[..n]
                        .iter()
                        .map(|e| MatchInfo { line: e.line, column: e.column, op: e.op })
                        .collect(),
                });
                preview.diffs.push(rendered.diff);
                preview.matches_found += scan.edits.len() + scan.nested_skipped + scan.overlap_skipped;
                if opts.keep_change_set {
                    // Each replacement, so a person can leave out single ones (partial apply).
                    let offset = if scan.bom { rewrite::BOM.len() } else { 0 };
                    let mut replacements = Replacements::new();
                    for e in &scan.edits[..n] {
                        let line = e.line.min(u32::MAX as usize) as u32;
                        replacements.push(line, e.start + offset, e.end + offset, &scan.inserts[e.insert.clone()]);
                    }
                    change_set.edit(f.rel.clone(), scan.before, rendered.after);
                    change_set.set_replacements(&f.rel, replacements);
                }
            }
        }
    }
    if scanned < total {
        let why = if preview.replacements >= limit {
            format!("the limit of {limit} replacements was reached")
        } else {
            format!("the cap of {} changed files was reached", opts.max_changed_files)
        };
        if preview.stopped.is_none() {
            preview.stopped = Some(if preview.replacements >= limit {
                StopReason::Limit { limit }
            } else {
                StopReason::FileCap { cap: opts.max_changed_files }
            });
        }
        preview
            .notes
            .push(format!("Scan stopped early: {why}; {} of {total} files were not scanned.", total - scanned));
    }
    if uncompiled > 0 {
        preview
            .notes
            .push(format!("{uncompiled} files skipped: no op compiles for their language (see pattern issues)."));
    }
    if listing.symlinks_skipped > 0 {
        preview.notes.push(format!("{} symlinks skipped (links are never followed).", listing.symlinks_skipped));
    }
    preview.notes.extend(listing.notes);
    preview.change_set = change_set;
    crate::alloc::release_freed();
    Ok(preview)
}

fn scan_one(
    f: &FileEntry,
    ops: &LangOps,
    opts: &ScanOptions,
    drop_bytes: bool,
    cache: Option<(&PreviewCache, cache::Setup)>,
) -> Option<Outcome> {
    if f.size > opts.max_file_bytes {
        return Some(Outcome::Skipped(FileSkip::TooLarge(f.size)));
    }
    let bytes = match std::fs::read(&f.abs) {
        Ok(b) => b,
        Err(e) => return Some(Outcome::Skipped(FileSkip::Unreadable(e.to_string()))),
    };
    if bytes.len() as u64 > opts.max_file_bytes {
        return Some(Outcome::Skipped(FileSkip::TooLarge(bytes.len() as u64)));
    }
    if let Some(skip) = rewrite::check_bytes(&bytes) {
        return Some(Outcome::Skipped(skip));
    }
    // Cheaper to check again than to hash (see `cache`).
    if !ops.may_match(&bytes) {
        return None;
    }
    let key = match cache {
        Some((cache, setup)) => {
            let key = cache::Key::new(&bytes, setup, &f.rel);
            if let Some(hit) = cache.get(&key) {
                return from_cache(&hit, bytes, opts, drop_bytes);
            }
            Some((cache, key))
        }
        None => None,
    };
    let Some(mut scan) = rewrite::scan_text(bytes, ops) else {
        if let Some((cache, key)) = key {
            cache.put(key, Cached::NoMatch);
        }
        return None;
    };
    if scan.edits.is_empty() {
        scan.before = Vec::new(); // only its parse issues are kept
    }
    // Without diffs and without a change set, the new bytes are never needed.
    let needed = opts.render_diffs || !drop_bytes;
    let mut rendered = (!scan.edits.is_empty()).then(|| {
        if needed {
            render(&f.rel, &scan, scan.edits.len(), opts)
        } else {
            Rendered { after: Vec::new(), diff: None, added: None, removed: None }
        }
    });
    if let Some((cache, key)) = key {
        let (diff, added, removed) = match &rendered {
            Some(r) => (r.diff.clone(), r.added, r.removed),
            None => (None, None, None),
        };
        cache.put(key, Cached::Found { scan: scan.without_bytes(), diff, added, removed });
    }
    if drop_bytes {
        scan.before = Vec::new();
        if let Some(r) = rendered.as_mut() {
            r.after = Vec::new();
        }
    }
    Some(Outcome::Found(scan, rendered))
}

/// What [`scan_one`] gives for `bytes` when their result is cached: the same outcome, with
/// the bytes read now as `before` and the new bytes rebuilt from them.
fn from_cache(hit: &Cached, bytes: Vec<u8>, opts: &ScanOptions, drop_bytes: bool) -> Option<Outcome> {
    let Cached::Found { scan: cached, diff, added, removed } = hit else {
        return None;
    };
    let mut scan = cached.without_bytes();
    if scan.edits.is_empty() {
        return Some(Outcome::Found(scan, None));
    }
    let rendered = if drop_bytes {
        // Neither the bytes read nor the new bytes are kept; the diff (if any) is cached.
        Rendered { after: Vec::new(), diff: diff.clone(), added: *added, removed: *removed }
    } else {
        scan.before = bytes;
        let after = scan.render(scan.edits.len());
        Rendered { after, diff: diff.clone(), added: *added, removed: *removed }
    };
    debug_assert_eq!(opts.render_diffs, diff.is_some(), "the setup holds `render_diffs`");
    Some(Outcome::Found(scan, Some(rendered)))
}

impl std::fmt::Display for FileSkip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileSkip::Binary => write!(f, "binary file"),
            FileSkip::NotUtf8 => write!(f, "not UTF-8"),
            FileSkip::TooLarge(n) => write!(f, "too large ({n} bytes; raise the size limit to include it)"),
            FileSkip::Unreadable(e) => write!(f, "unreadable: {e}"),
        }
    }
}
