//! The preview cache: what scanning one file found, kept per session so that re-running a
//! preview after one file changed parses only that file.
//!
//! Invariants:
//! - a file's bytes are read on every preview and hashed (BLAKE3); the key holds that hash,
//!   so a file whose bytes changed is a miss, whatever its size or modification time. The
//!   change set is always built from the bytes read now, never from cached bytes (the cache
//!   keeps no file bytes at all);
//! - the key also holds everything else the per-file result depends on: the path (it is in
//!   the diff headers), the language, every op (`pat`, `out`), `sel`, whether diffs are
//!   rendered and their context lines. Two previews that differ in any of them never share
//!   an entry;
//! - a hit gives exactly what a miss computes (the edits, skipped counts, parse issues, the
//!   unified diff and its line counts), so a warm preview is byte-identical to a cold one;
//! - the cache is bounded by an estimate of the bytes its entries hold; the least recently
//!   used entries go first. A capacity of 0 disables it (nothing is hashed or kept).
//!
//! Only files that need a parse are cached: binary, non-UTF-8 and files the literal
//! prefilter rules out are cheaper to check again than to hash.

use std::sync::{Arc, Mutex, MutexGuard};

use ast_grep_language::SupportLang;
use lru::LruCache;
use serde::Serialize;

use crate::params::RewriteOp;
use crate::rewrite::{Edit, FileScan};

/// The environment variable that bounds the cache of each session's `ast_edit`, in MiB
/// (0 disables it). Read by [`crate::factory`].
pub const PREVIEW_CACHE_ENV: &str = "RESOLVE_DESK_PREVIEW_CACHE_MIB";
/// The bound when the environment says nothing: 64 MiB.
pub const DEFAULT_PREVIEW_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Bookkeeping of one entry besides its contents (the LRU node, the map slot, the `Arc`).
const ENTRY_OVERHEAD: usize = 96;

/// The bound given by [`PREVIEW_CACHE_ENV`]: the default when unset, or an error naming the
/// value and what to set instead.
pub fn capacity_from_env() -> Result<usize, String> {
    match std::env::var(PREVIEW_CACHE_ENV) {
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_PREVIEW_CACHE_BYTES),
        Err(std::env::VarError::NotUnicode(v)) => Err(format!(
            "{PREVIEW_CACHE_ENV}={v:?} is not a number of MiB; set a whole number such as 64, or 0 to disable the preview cache"
        )),
        Ok(v) => parse_mib(&v),
    }
}

fn parse_mib(v: &str) -> Result<usize, String> {
    v.trim()
        .parse::<usize>()
        .ok()
        .and_then(|mib| mib.checked_mul(1024 * 1024))
        .ok_or_else(|| {
            format!(
                "{PREVIEW_CACHE_ENV}={v:?} is not a number of MiB; set a whole number such as 64, or 0 to disable the preview cache"
            )
        })
}

/// Everything besides the file's bytes and path that a file's result depends on, hashed:
/// the language, the ops, `sel` and the diff options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Setup([u8; 32]);

impl Setup {
    pub fn of(lang: SupportLang, ops: &[RewriteOp], sel: Option<&str>, render_diffs: bool, context: usize) -> Self {
        let mut h = blake3::Hasher::new();
        let mut text = |s: &str| {
            h.update(&(s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        };
        text(&lang.to_string());
        for op in ops {
            text(&op.pat);
            text(&op.out);
        }
        match sel {
            Some(sel) => {
                text("sel");
                text(sel);
            }
            None => text("no sel"),
        }
        h.update(&[u8::from(render_diffs)]);
        h.update(&(context as u64).to_le_bytes());
        h.update(&(ops.len() as u64).to_le_bytes());
        Self(*h.finalize().as_bytes())
    }
}

/// One file's key: the hash of the bytes read now, the setup and the path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    content: [u8; 32],
    setup: Setup,
    path: Box<str>,
}

impl Key {
    pub fn new(bytes: &[u8], setup: Setup, path: &str) -> Self {
        Self { content: *blake3::hash(bytes).as_bytes(), setup, path: path.into() }
    }
}

/// What scanning one file's bytes gave, without the bytes.
#[derive(Debug)]
pub(crate) enum Cached {
    /// Parsed; no op matched.
    NoMatch,
    /// `scan.before` is empty: the bytes read now are put back on a hit.
    Found { scan: FileScan, diff: Option<String>, added: Option<u32>, removed: Option<u32> },
}

impl Cached {
    fn estimated_bytes(&self, key: &Key) -> usize {
        let own = match self {
            Cached::NoMatch => 0,
            Cached::Found { scan, diff, .. } => {
                scan.edits.len() * std::mem::size_of::<Edit>()
                    + scan.inserts.len()
                    + scan.parse_skipped.len() * std::mem::size_of::<usize>()
                    + diff.as_ref().map_or(0, String::len)
            }
        };
        ENTRY_OVERHEAD + std::mem::size_of::<Key>() + key.path.len() + std::mem::size_of::<Cached>() + own
    }
}

/// Counters and sizes of a [`PreviewCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CacheStats {
    /// Files served from the cache (not parsed).
    pub hits: u64,
    /// Files parsed with the cache enabled (not found, or their bytes changed).
    pub misses: u64,
    pub entries: usize,
    /// The estimated bytes the entries hold; never above `capacity`.
    pub bytes: usize,
    /// The bound in bytes (0: disabled).
    pub capacity: usize,
}

struct Inner {
    map: LruCache<Key, Arc<Cached>>,
    bytes: usize,
    hits: u64,
    misses: u64,
}

/// A bounded LRU cache of per-file scan results, shared by the previews of one session
/// (see the module documentation for what a key holds). Safe to use from several threads.
pub struct PreviewCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for PreviewCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreviewCache").field("stats", &self.stats()).finish()
    }
}

impl PreviewCache {
    /// A cache holding at most `capacity_bytes` (estimated); 0 disables it.
    pub fn new(capacity_bytes: usize) -> Self {
        Self {
            capacity: capacity_bytes,
            inner: Mutex::new(Inner { map: LruCache::unbounded(), bytes: 0, hits: 0, misses: 0 }),
        }
    }

    /// A cache bounded by [`PREVIEW_CACHE_ENV`] (see [`capacity_from_env`]).
    pub fn from_env() -> Result<Self, String> {
        capacity_from_env().map(Self::new)
    }

    pub fn is_enabled(&self) -> bool {
        self.capacity > 0
    }

    pub fn stats(&self) -> CacheStats {
        let inner = self.lock();
        CacheStats {
            hits: inner.hits,
            misses: inner.misses,
            entries: inner.map.len(),
            bytes: inner.bytes,
            capacity: self.capacity,
        }
    }

    /// Drops every entry (the counters stay).
    pub fn clear(&self) {
        let mut inner = self.lock();
        inner.map.clear();
        inner.bytes = 0;
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data (every update is complete
        // before the next statement), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The entry of `key`, counted as a hit or a miss.
    pub(crate) fn get(&self, key: &Key) -> Option<Arc<Cached>> {
        let mut inner = self.lock();
        let found = inner.map.get(key).cloned();
        if found.is_some() {
            inner.hits += 1;
        } else {
            inner.misses += 1;
        }
        found
    }

    /// Keeps `value` under `key`, evicting the least recently used entries to stay under
    /// the bound. An entry larger than the whole bound is not kept.
    pub(crate) fn put(&self, key: Key, value: Cached) {
        let size = value.estimated_bytes(&key);
        if size > self.capacity {
            return;
        }
        let mut inner = self.lock();
        if let Some(old) = inner.map.put(key.clone(), Arc::new(value)) {
            inner.bytes -= old.estimated_bytes(&key);
        }
        inner.bytes += size;
        while inner.bytes > self.capacity {
            match inner.map.pop_lru() {
                Some((k, v)) => inner.bytes -= v.estimated_bytes(&k),
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(pat: &str, out: &str) -> RewriteOp {
        RewriteOp { pat: pat.into(), out: out.into() }
    }

    #[test]
    fn the_setup_changes_with_every_input() {
        let ts = SupportLang::TypeScript;
        let base = Setup::of(ts, &[op("a($A)", "b($A)")], None, true, 3);
        let others = [
            Setup::of(SupportLang::Tsx, &[op("a($A)", "b($A)")], None, true, 3),
            Setup::of(ts, &[op("a($A)", "c($A)")], None, true, 3),
            Setup::of(ts, &[op("a($B)", "b($A)")], None, true, 3),
            Setup::of(ts, &[op("a($A)", "b($A)")], Some("call_expression"), true, 3),
            Setup::of(ts, &[op("a($A)", "b($A)")], None, false, 3),
            Setup::of(ts, &[op("a($A)", "b($A)")], None, true, 5),
            Setup::of(ts, &[op("a($A)", "b($A)"), op("x", "y")], None, true, 3),
            // Moving text between `pat` and `out` must not collide.
            Setup::of(ts, &[op("a($A)b", "($A)")], None, true, 3),
        ];
        for (i, o) in others.iter().enumerate() {
            assert_ne!(&base, o, "variant {i} must not share the setup of the base preview");
        }
        assert_eq!(base, Setup::of(ts, &[op("a($A)", "b($A)")], None, true, 3), "the setup is deterministic");
    }

    #[test]
    fn the_environment_value_is_mib_or_a_clear_error() {
        assert_eq!(parse_mib("0"), Ok(0));
        assert_eq!(parse_mib(" 2 "), Ok(2 * 1024 * 1024));
        let err = parse_mib("lots").unwrap_err();
        assert!(err.contains("RESOLVE_DESK_PREVIEW_CACHE_MIB=\"lots\"") && err.contains("0 to disable"), "{err}");
        assert!(parse_mib("-1").is_err(), "a negative size is refused");
    }

    #[test]
    fn eviction_keeps_the_estimate_under_the_bound() {
        let setup = Setup::of(SupportLang::TypeScript, &[op("a", "b")], None, true, 3);
        let found = |n: usize| Cached::Found {
            scan: FileScan::default(),
            diff: Some("x".repeat(n)),
            added: Some(1),
            removed: Some(1),
        };
        let one = found(1000).estimated_bytes(&Key::new(b"0", setup, "f0.ts"));
        let cache = PreviewCache::new(one * 3 + one / 2);
        for i in 0..10 {
            cache.put(Key::new(i.to_string().as_bytes(), setup, &format!("f{i}.ts")), found(1000));
            let s = cache.stats();
            assert!(s.bytes <= s.capacity, "after {i} puts the estimate {} is above the bound {}", s.bytes, s.capacity);
        }
        let s = cache.stats();
        assert_eq!(s.entries, 3, "three entries fit in three and a half entries' worth");
        assert!(cache.get(&Key::new(b"9", setup, "f9.ts")).is_some(), "the most recent entry is kept");
        assert!(cache.get(&Key::new(b"0", setup, "f0.ts")).is_none(), "the oldest entry was evicted");
        cache.put(Key::new(b"big", setup, "big.ts"), found(10 * one));
        assert!(cache.get(&Key::new(b"big", setup, "big.ts")).is_none(), "an entry larger than the bound is not kept");
        assert_eq!(cache.stats().entries, 3, "a refused entry evicts nothing");
    }

    #[test]
    fn replacing_an_entry_does_not_count_it_twice() {
        let setup = Setup::of(SupportLang::TypeScript, &[op("a", "b")], None, true, 3);
        let cache = PreviewCache::new(1 << 20);
        let key = Key::new(b"same", setup, "f.ts");
        cache.put(key.clone(), Cached::NoMatch);
        let once = cache.stats().bytes;
        cache.put(key, Cached::NoMatch);
        assert_eq!(cache.stats().bytes, once, "the old entry's size is given back");
        assert_eq!(cache.stats().entries, 1);
    }
}
