#!/usr/bin/env bash
# Starts Resolve Desk: `scripts/run.sh [WORKSPACE] [--script FILE]`. Without a workspace it
# opens the built-in demo. Installs what it needs on first use (see scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/resolve-desk/target}"
scripts/setup.sh
cargo build -p resolve-desk --release --quiet
args=()
for a in "$@"; do
  # Relative workspace and script paths are taken from where the command was typed.
  if [ -e "$OLDPWD/$a" ] && [[ $a != /* ]]; then args+=("$OLDPWD/$a"); else args+=("$a"); fi
done
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "run: no display found; starting under Xvfb (screenshots only). Set DISPLAY to see the window." >&2
  exec xvfb-run -a "$CARGO_TARGET_DIR/release/resolve-desk" "${args[@]}"
fi
exec "$CARGO_TARGET_DIR/release/resolve-desk" "${args[@]}"
