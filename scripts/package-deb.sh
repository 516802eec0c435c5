#!/usr/bin/env bash
# Builds the Debian package of Resolve Desk with the Tauri CLI (the npm package
# @tauri-apps/cli, pinned), after the same set-up as the app. The .deb lands in
# $CARGO_TARGET_DIR/release/bundle/deb/. Install it with `sudo apt install ./resolve-desk_*.deb`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/resolve-desk/target}"
scripts/setup.sh
npx --yes @tauri-apps/cli@2.12.5 build --bundles deb -- -p resolve-desk
ls -1 "$CARGO_TARGET_DIR"/release/bundle/deb/*.deb
