#!/usr/bin/env bash
# Refreshes the documentation's screenshots (docs/screenshots/): runs the end-to-end suite (the
# real app under Xvfb) with its pictures going there instead of the ignored target/screenshots/
# that a test run uses. Review the changed pictures with `git diff --stat docs/screenshots`
# and commit the ones that show what the README and docs describe.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/resolve-desk/target}"
scripts/setup.sh
cargo build -p resolve-desk -p resolve-cli -p resolve-scenarios --quiet
RD_SCREENSHOTS_DIR="$PWD/docs/screenshots" \
  RESOLVE_DESK_BIN="$CARGO_TARGET_DIR/debug/resolve-desk" RDESK_BIN="$CARGO_TARGET_DIR/debug/rdesk" \
  RD_APPLY_PROBE="$CARGO_TARGET_DIR/debug/apply-probe" \
  xvfb-run -a --server-args="-screen 0 1400x900x24" npm --prefix tests/e2e test --silent "$@"
echo "screenshots: refreshed in docs/screenshots/ ($(git status --porcelain docs/screenshots | wc -l) changed)"
