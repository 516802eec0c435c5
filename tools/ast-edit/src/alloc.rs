//! Parsing with mimalloc.
//!
//! Most of a preview's time is tree-sitter parsing, and about a tenth of that is spent in
//! `malloc` and `free` (subtrees and parse-stack nodes, allocated and released by the million).
//! With mimalloc behind tree-sitter the same previews take 8–13% less time (measured in
//! `docs/PERFORMANCE.md`, "the cold path"). Only tree-sitter's own allocations move:
//! the rest of the process keeps the system allocator.
//!
//! mimalloc commits its arena only as it is used, and each scan hands what it freed back when
//! its workers are done (`release_freed`): with mimalloc's defaults (an eagerly committed
//! arena, freed memory purged only after 1 s and only on later allocator activity, which an idle
//! window never has) the app kept about 5 MiB more after a preview; with these its resident
//! memory is what it was with malloc. (Purging at once on every free instead cost the dense
//! previews 15%.)

use libmimalloc_sys::mi_option_t;

/// `mi_option_arena_eager_commit` in mimalloc.h's `mi_option_e` (the crate exports no
/// constant for it); checked against its documented default by a test.
const ARENA_EAGER_COMMIT: mi_option_t = 4;

/// Makes tree-sitter allocate with mimalloc for the rest of the process, unless
/// `RESOLVE_DESK_PARSE_ALLOCATOR=system` is set (then nothing changes: to compare, or to rule
/// the allocator out when chasing a problem).
///
/// # Safety
///
/// Call it first in `main`: before any tree-sitter call (a tree allocated with one allocator
/// must never be freed with the other) and before a second thread exists (the switch is not
/// thread-safe). Never call it twice.
pub unsafe fn parse_with_mimalloc() {
    if std::env::var_os("RESOLVE_DESK_PARSE_ALLOCATOR").is_some_and(|v| v == "system") {
        return;
    }
    // SAFETY: the four functions are one allocator family, never return null for a non-zero
    // size (mimalloc aborts on out-of-memory like malloc's callers expect), and align like
    // malloc; the caller guarantees no tree-sitter object exists yet and no other thread runs.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        }));
    }
}

/// Gives what mimalloc holds freed back to the system now (the scan calls it once its workers
/// are done). Without [`parse_with_mimalloc`] mimalloc holds nothing and this costs nothing.
pub(crate) fn release_freed() {
    // SAFETY: mi_collect only returns free memory; it touches no live allocation.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_numbers_are_mimallocs() {
        // mimalloc's default (src/options.c): arena_eager_commit = 2, "only on an OS that has
        // overcommit". A version that renumbered its options fails here.
        // SAFETY: reading an option has no side effect on allocations.
        let eager = unsafe { libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT) };
        assert_eq!(eager, 2, "mimalloc's option numbers moved: see mimalloc.h `mi_option_e`");
    }
}
