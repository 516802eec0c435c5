#!/usr/bin/env bash
# Installs what Resolve Desk and its tests need on a fresh Debian/Ubuntu machine, then builds
# the web UI. Idempotent: a second run only checks. Needs Rust (rustup) and root or sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

PKGS=(build-essential pkg-config curl wget file libwebkit2gtk-4.1-dev libxdo-dev libssl-dev
      libayatana-appindicator3-dev librsvg2-dev xvfb xauth webkit2gtk-driver
      # dbus-daemon, python3-dbus, python3-gi: the session bus and the stand-in notification
      # server of tests/e2e/nudge.test.js (notify-server.py runs on the system's /usr/bin/python3).
      dbus-daemon python3-dbus python3-gi
      # The API key in the Secret Service (keyring crate: libdbus), and a real Secret Service
      # for its test (gnome-keyring-daemon under dbus-run-session).
      libdbus-1-dev gnome-keyring
      # scripts/check-packages.sh reads the .rpm (rpm -qlp, rpm2cpio | cpio).
      rpm cpio)
command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || PKGS+=(python3 python3-venv)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

command -v cargo >/dev/null 2>&1 || { echo "setup: Rust is missing; install it with rustup (https://rustup.rs) and run again" >&2; exit 1; }

# WebDriver bridge for the end-to-end tests (Tauri's, 2.x). Compiled while the downloads below
# run (about two minutes of CPU on a fresh machine; the rest of setup waits on the network).
driver_pid=""
if ! command -v tauri-driver >/dev/null 2>&1; then
  echo "setup: installing tauri-driver (cargo install, once; alongside the downloads)"
  driver_log=$(mktemp)
  cargo install tauri-driver --locked --version '^2' --quiet >"$driver_log" 2>&1 &
  driver_pid=$!
fi

install_npm() {  # install_npm DIR: npm ci when package-lock.json changed since the last install
  local dir=$1
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}
install_npm ui
install_npm tests/e2e
# External tools: the Node SDK's one dependency (@sinclair/typebox) and tsx for the
# TypeScript example (crates/external's tests run both).
install_npm tools/sdk/node
install_npm examples/tools
# The MCP tests' other client: the official MCP SDK for TypeScript (crates/cli/tests/mcp_ts.rs).
install_npm crates/mcp/tests/ts

# The MCP tests' client: the official MCP SDK for Python, in a venv at .venv (pinned versions).
PY_REQS=crates/mcp/tests/python/requirements.txt
if [ ! -x .venv/bin/python ] || [ "$PY_REQS" -nt .venv/.installed ]; then
  echo "setup: installing the MCP test client (.venv, $PY_REQS)"
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r "$PY_REQS"
  touch .venv/.installed
fi

# The real agents the desk is wired to, pinned (tests/e2e/{claude-code,codex,gemini,opencode,pi}.test.js):
# Claude Code, Codex CLI, Gemini CLI, opencode and pi from npm, and fakellm (PyPI) in a venv of
# its own to play the models that speak OpenAI Chat Completions or Anthropic Messages.
install_npm tests/agents
AGENT_REQS=tests/agents/requirements.txt
if [ ! -x tests/agents/.venv/bin/fakellm ] || [ "$AGENT_REQS" -nt tests/agents/.venv/.installed ]; then
  echo "setup: installing the scripted model server (tests/agents/.venv, $AGENT_REQS)"
  python3 -m venv tests/agents/.venv
  tests/agents/.venv/bin/pip install --quiet --disable-pip-version-check -r "$AGENT_REQS"
  touch tests/agents/.venv/.installed
fi

if [ -n "$driver_pid" ]; then
  if ! wait "$driver_pid"; then
    cat "$driver_log" >&2
    echo "setup: installing tauri-driver failed (above)" >&2
    exit 1
  fi
  rm -f "$driver_log"
fi

echo "setup: building the web UI"
(cd ui && npm run --silent build >/dev/null)
echo "setup: ok"
