#!/usr/bin/env bash
# Builds the Debian package of Resolve Desk with the Tauri CLI (the npm package
# @tauri-apps/cli, pinned), after the same set-up as the app. The package installs the app
# as /usr/bin/resolve-desk and the headless command (and MCP server) as /usr/bin/rdesk beside
# it. The .deb lands in $CARGO_TARGET_DIR/release/bundle/deb/resolve-desk_<version>_<arch>.deb.
# Install it with `sudo apt install ./resolve-desk_*.deb`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/resolve-desk/target}"
scripts/setup.sh
cargo build --release --quiet -p resolve-cli
# The release profile builds without debug info (`strip = "debuginfo"` in Cargo.toml), so the
# package ships the binaries as built; docs/PERFORMANCE.md gives the sizes.
RDESK_BIN="$CARGO_TARGET_DIR/release/rdesk"
# `rdesk` beside the app (bundle > linux > deb > files; the path is this build's).
EXTRA_CONFIG=$(printf '{"bundle":{"linux":{"deb":{"files":{"/usr/bin/rdesk":"%s"}}}}}' "$RDESK_BIN")
DEB_DIR="$CARGO_TARGET_DIR/release/bundle/deb"
rm -f "$DEB_DIR"/*.deb
TAURI=(npx --yes @tauri-apps/cli@2.12.5)
"${TAURI[@]}" build --no-bundle --config "$EXTRA_CONFIG" -- -p resolve-desk
"${TAURI[@]}" bundle --bundles deb --config "$EXTRA_CONFIG"
# The bundler names the file after the product name ("Resolve Desk_..."); the README and apt
# users expect the package name.
for deb in "$DEB_DIR"/*.deb; do
  target="$DEB_DIR/resolve-desk_$(basename "$deb" | sed -E 's/^.*_([^_]+_[^_]+\.deb)$/\1/')"
  [ "$deb" = "$target" ] || mv "$deb" "$target"
done
CONTENTS=$(dpkg-deb --contents "$DEB_DIR"/resolve-desk_*.deb)
for bin in rdesk resolve-desk; do
  grep -qE "usr/bin/$bin\$" <<<"$CONTENTS" \
    || { echo "package-deb: the package lacks /usr/bin/$bin" >&2; exit 1; }
done
ls -1 "$DEB_DIR"/*.deb
