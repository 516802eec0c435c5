#!/usr/bin/env bash
# Runs every test: Rust (engine, tools, cli, scenarios, the shell on Tauri's mock runtime),
# the UI's unit tests (vitest), and the end-to-end suite (the real app under Xvfb, driven
# through tauri-driver + WebKitWebDriver).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/resolve-desk/target}"

scripts/setup.sh

echo "== cargo test (workspace, including the desktop shell)"
cargo test --workspace --quiet

echo "== UI unit tests (vitest)"
(cd ui && npm test --silent)

echo "== end to end (real app under Xvfb; rdesk and apply-probe are the ones cargo test built)"
cargo build -p resolve-desk --quiet
RESOLVE_DESK_BIN="$CARGO_TARGET_DIR/debug/resolve-desk" RDESK_BIN="$CARGO_TARGET_DIR/debug/rdesk" \
  RD_APPLY_PROBE="$CARGO_TARGET_DIR/debug/apply-probe" xvfb-run -a --server-args="-screen 0 1400x900x24" \
  npm --prefix tests/e2e test --silent
