#!/usr/bin/env bash
# largest-candidate.sh CORPUS_DIR — the floor of a preview's wall time that no scheduling can
# beat: the time `rdesk ast-edit` takes on the largest file it must parse, alone.
#
# For each rewrite of ../shared/bench/bench-anchor.sh and each corpus size, the candidates are
# the files that hold every literal the prefilter requires (the pattern's word-like terminals,
# as `ast_edit` computes them; listed below by hand); the largest of them is previewed alone,
# with hyperfine (RUNS runs, median). Compare with the whole corpus's preview in summary.md of
# run-bench.sh: a ratio near 1 means one file bounds the run.
#
#   CARGO_TARGET_DIR=... bash tools/ast-edit/bench/largest-candidate.sh /root/bench-corpus
#   SIZES="h1 full" RUNS=5 ...
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
CORPUS=$(cd "${1:?usage: largest-candidate.sh CORPUS_DIR}" && pwd)
SIZES=${SIZES:-h1 full}
RUNS=${RUNS:-5}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
(cd "$ROOT" && cargo build --release --quiet -p resolve-cli)
RDESK=$TARGET/release/rdesk

# id | lang | pattern | rewrite | the prefilter's literals (space-separated) | rg file type
REWRITES=(
  'ts-console|ts|console.log($$$A)|logger.debug($$$A)|console log|ts'
  'ts-newerror|ts|new Error($$$A)|new AppError($$$A)|new Error|ts'
  'ts-undef|ts|$A === undefined|$A == null|undefined ===|ts'
  'rs-println|rust|println!($$$A)|tracing::info!($$$A)|println|rust'
  'rs-reterr|rust|return Err($A)|return Err($A.into())|return Err|rust'
  'rs-unwrap|rust|$A.unwrap()|$A.expect("todo")|unwrap|rust'
)

printf '| rewrite | corpus | candidates | largest candidate | bytes | preview of it alone (median of %s) |\n|---|---|---:|---|---:|---:|\n' "$RUNS"
for size in $SIZES; do
  for spec in "${REWRITES[@]}"; do
    IFS='|' read -r id lang pat rw lits type <<< "$spec"
    dir=$CORPUS/$lang; [[ $size == full ]] || dir=$CORPUS/$lang-$size
    # Files holding every literal (plain substrings, as the prefilter looks for them).
    mapfile -t files < <(cd "$dir" && rg -l -F -t "$type" "${lits%% *}" . | sort)
    for lit in ${lits#* }; do
      [[ $lit == "${lits%% *}" ]] && continue
      mapfile -t files < <(cd "$dir" && printf '%s\0' "${files[@]}" | xargs -0 rg -l -F "$lit" | sort)
    done
    largest=$(cd "$dir" && printf '%s\0' "${files[@]}" | xargs -0 stat -c '%s %n' | sort -n | tail -1)
    bytes=${largest%% *}; file=${largest#* }
    json=$(mktemp)
    hyperfine --style none --runs "$RUNS" --warmup 1 --output=pipe --export-json "$json" \
      "$(printf '%q ' "$RDESK" ast-edit --workspace "$dir" --lang "$lang" --pat "$pat" --out "$rw" "$dir/${file#./}")" > /dev/null
    ms=$(python3 -c 'import json,sys; print("%.0f ms" % (json.load(open(sys.argv[1]))["results"][0]["median"] * 1000))' "$json")
    rm -f "$json"
    printf '| %s | %s | %s | `%s` | %s | %s |\n' "$id" "$lang-$size" "${#files[@]}" "${file#./}" "$bytes" "$ms"
  done
done
