#!/usr/bin/env bash
# Times `rdesk ast-edit --apply` of a dense rewrite (`$X.unwrap()` → `$X.expect("checked")`)
# for one or more rdesk binaries, side by side: each run restores the corpus first (untimed),
# runs are interleaved between binaries, the median wall time of RUNS is printed.
# Usage: scripts/bench-apply.sh CORPUS RUNS BIN [BIN...]
set -euo pipefail
corpus=$1 runs=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A times
for ((r = 0; r < runs; r++)); do
  for bin in "$@"; do
    rm -rf "$work/tree" && cp -a "$corpus" "$work/tree" && sync
    start=$(date +%s%N)
    "$bin" ast-edit --lang rust --pat '$X.unwrap()' --out '$X.expect("checked")' --apply "$work/tree" > /dev/null
    end=$(date +%s%N)
    times[$bin]+="$(((end - start) / 1000000)) "
  done
done
for bin in "$@"; do
  sorted=$(tr ' ' '\n' <<< "${times[$bin]}" | grep . | sort -n)
  median=$(sed -n "$(((runs + 1) / 2))p" <<< "$sorted")
  echo "$bin: median ${median} ms over $runs runs (all: $(tr '\n' ' ' <<< "$sorted"))"
done
