#!/usr/bin/env bash
# run-bench.sh CORPUS_DIR [RESULTS_DIR] — the structural-rewrite anchor (../shared/bench) with
# `rdesk ast-edit` as the candidate, in the same hyperfine calls as ast-grep.
#
#   bash tools/ast-edit/bench/run-bench.sh /root/bench-corpus bench-results/
#   SIZES=full RUNS=3 ROUNDS=1 MODES="preview json" AST_GREP=/path/to/ast-grep bash tools/ast-edit/bench/run-bench.sh ...
#
# Run from anywhere; paths are taken relative to the repository root, which sits beside
# shared/ (so the anchor script is ../shared/bench/bench-anchor.sh from the root).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$ROOT"
CORPUS=$(cd "${1:?usage: run-bench.sh CORPUS_DIR [RESULTS_DIR]}" && pwd)
RES=${2:-bench-results-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RES"; RES=$(cd "$RES" && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
cargo build --release -p resolve-cli
BIN="$TARGET/release/rdesk ast-edit"
# No changed-file cap on the command line (ast-grep has none): --max-files is not passed.
export CANDIDATE_PREVIEW="$BIN --lang {lang} --pat {pattern} --out {rewrite} {dir}"
export CANDIDATE_JSON="$BIN --lang {lang} --pat {pattern} --out {rewrite} --json {dir}"
export CANDIDATE_APPLY="$BIN --lang {lang} --pat {pattern} --out {rewrite} --apply {dir}"
exec bash "$ROOT/../shared/bench/bench-anchor.sh" "$CORPUS" "$RES"
