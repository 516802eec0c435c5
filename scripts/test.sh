#!/usr/bin/env bash
# Runs every test: Rust (engine, tools, cli, scenarios, the shell on Tauri's mock runtime),
# the UI's unit tests (vitest), and the end-to-end suite (the real app under Xvfb, driven
# through tauri-driver + WebKitWebDriver).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/resolve-desk/target}"

# --quick [ARGS...]: only the Rust tests a change to a crate needs, without the desktop shell,
# the UI and the end-to-end suite (`scripts/test.sh --quick -p resolve-engine` for one crate;
# ARGS go to `cargo test`). CI runs the full command.
if [ "${1:-}" = "--quick" ]; then
  shift
  scripts/setup.sh
  echo "== cargo test (quick: ${*:-every crate but the desktop shell})"
  exec cargo test --quiet "$@"
fi

scripts/setup.sh

# contained CMD...: runs CMD in its own session and, once it ends, stops whatever it left running
# (a child process of a test, a WebKit process of a killed app), naming it. A leftover process
# would otherwise keep the caller's output open and the run would never end. Returns CMD's status.
contained() {
  local rc=0
  setsid "$@" &
  local sid=$!
  wait "$sid" || rc=$?
  local left
  # Zombies (stat Z) have already exited and hold nothing open; they are the init's to reap.
  left=$(ps -eo pid=,sid=,stat= | awk -v s="$sid" '$2 == s && $1 != s && $3 !~ /^Z/ { print $1 }')
  if [ -n "$left" ]; then
    echo "test.sh: stopping what \`$1\` left running:" >&2
    ps -o pid=,args= -p "$(echo $left | tr ' ' ',')" >&2 || true
    kill -KILL $left 2>/dev/null || true
  fi
  return "$rc"
}

echo "== cargo test (workspace, including the desktop shell)"
contained cargo test --workspace --quiet

echo "== UI unit tests (vitest)"
contained npm --prefix ui test --silent

# The app, rdesk and apply-probe are the binaries `cargo test --workspace` built (for the
# shell's and the cli's integration tests). Building the app again with `cargo build` would
# rebuild Tauri and everything above it without the dev-dependencies' features (`tauri/test`,
# `resolve-agent/fake-llm`): 133 s of a cold run for the same code.
echo "== end to end (real app under Xvfb; the app, rdesk and apply-probe are the ones cargo test built)"
# A hang becomes a failure with its output (30 minutes; the suite takes about two).
RESOLVE_DESK_BIN="$CARGO_TARGET_DIR/debug/resolve-desk" RDESK_BIN="$CARGO_TARGET_DIR/debug/rdesk" \
  RD_APPLY_PROBE="$CARGO_TARGET_DIR/debug/apply-probe" contained timeout --kill-after=30 1800 xvfb-run -a --server-args="-screen 0 1400x900x24" \
  npm --prefix tests/e2e test --silent
