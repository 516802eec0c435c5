#!/usr/bin/env bash
# Checks the packages scripts/package.sh made, as a user of each distribution would meet them:
#
#   .deb       unpacked into a temporary root (dpkg-deb -x): both binaries answer --version,
#              `rdesk sdk-path` finds the SDKs installed beside it, a tool written from each
#              template with the packaged SDKs (no network) is pushed, applied and discarded
#              through `rdesk run`; the desktop entry opens folders; completions, man pages and
#              icons are there
#   .rpm       its file list (`rpm -qlp`) has the same files; unpacked (rpm2cpio), both
#              binaries answer --version
#   .AppImage  `--appimage-extract-and-run` starts the app under Xvfb (a window appears), and
#              the rdesk inside answers --version
#   SDKs       the wheel installs and imports; the npm tarball holds the SDK
#
# Usage: scripts/check-packages.sh [--if-built]
# With --if-built (CI, where the release build is not cached) it passes when nothing was built.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/resolve-desk/target}"
BUNDLE_DIR="$CARGO_TARGET_DIR/release/bundle"
IF_BUILT=0
[ "${1:-}" = "--if-built" ] && IF_BUILT=1

fail() { echo "check-packages: FAIL: $*" >&2; exit 1; }
ok() { echo "check-packages: ok: $*"; passed=$((passed + 1)); }
passed=0

DEB=$(ls "$BUNDLE_DIR"/deb/*.deb 2>/dev/null | head -1 || true)
RPM=$(ls "$BUNDLE_DIR"/rpm/*.rpm 2>/dev/null | head -1 || true)
APPIMAGE=$(ls "$BUNDLE_DIR"/appimage/*.AppImage 2>/dev/null | head -1 || true)
if [ -z "$DEB$RPM$APPIMAGE" ]; then
  if [ $IF_BUILT = 1 ]; then
    echo "check-packages: no packages in $BUNDLE_DIR (run scripts/package.sh); skipped."
    exit 0
  fi
  fail "no packages in $BUNDLE_DIR; run scripts/package.sh first"
fi

TMP=$(mktemp -d)
XVFB_PID=""
APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null || true
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

# The files every package installs (paths without the leading /).
EXPECTED=(
  usr/bin/resolve-desk
  usr/bin/rdesk
  usr/share/resolve-desk/sdk/node/run.js
  usr/share/resolve-desk/sdk/node/index.js
  usr/share/resolve-desk/sdk/node/node_modules/@sinclair/typebox/package.json
  usr/share/resolve-desk/sdk/python/run.py
  usr/share/resolve-desk/sdk/python/resolve_desk_tool/__init__.py
  usr/share/bash-completion/completions/rdesk
  usr/share/zsh/vendor-completions/_rdesk
  usr/share/fish/vendor_completions.d/rdesk.fish
  usr/share/man/man1/rdesk.1
  usr/share/man/man1/rdesk-tools.1
  "usr/share/applications/Resolve Desk.desktop"
  usr/share/icons/hicolor/128x128/apps/resolve-desk.png
)

has_all() { # $1: a file list, one path a line
  for f in "${EXPECTED[@]}"; do
    grep -qE "(^|/| )$f\$" <<<"$1" || fail "$2 lacks /$f"
  done
}

# A tool from each template, with the SDK of the unpacked root, through `rdesk run`.
template_round() { # $1: the rdesk to use; $2: which package (names its folders)
  local rdesk=$1 lang home ws out
  for lang in js python; do
    home="$TMP/$2-home-$lang"; ws="$TMP/$2-ws-$lang"
    mkdir -p "$home" "$ws"
    XDG_CONFIG_HOME="$home/config" XDG_STATE_HOME="$home/state" \
      "$rdesk" tools new add_line --lang "$lang" --user >/dev/null
    out=$(printf '%s\n' \
      '{"tool":"add_line","params":{"path":"n.txt","line":"one"}}' \
      '{"tool":"resolve","params":{"action":"apply","reason":"checked"}}' \
      '{"tool":"add_line","params":{"path":"n.txt","line":"two"}}' \
      '{"tool":"resolve","params":{"action":"discard","reason":"no"}}' |
      XDG_CONFIG_HOME="$home/config" XDG_STATE_HOME="$home/state" "$rdesk" run - -w "$ws")
    [ "$(grep -c '"is_error":false' <<<"$out")" = 4 ] || fail "the $lang template through rdesk run: $out"
    [ "$(cat "$ws/n.txt")" = "one" ] || fail "the $lang template: n.txt is $(cat "$ws/n.txt")"
    grep -q "$(dirname "$(dirname "$rdesk")")/share/resolve-desk/sdk" "$home/config/resolve-desk/tools/add_line/tool.json" \
      || fail "the $lang template does not point at the packaged SDK"
  done
}

if [ -n "$DEB" ]; then
  root="$TMP/deb-root"
  dpkg-deb -x "$DEB" "$root"
  has_all "$(dpkg-deb --contents "$DEB")" "$(basename "$DEB")"
  "$root/usr/bin/rdesk" --version | grep -q '^rdesk ' || fail ".deb: rdesk --version"
  "$root/usr/bin/resolve-desk" --version | grep -q '^resolve-desk ' || fail ".deb: resolve-desk --version"
  [ "$("$root/usr/bin/rdesk" sdk-path)" = "$(realpath "$root/usr/share/resolve-desk/sdk")" ] \
    || fail ".deb: rdesk sdk-path printed $("$root/usr/bin/rdesk" sdk-path)"
  # The bundler names the entry after the product name.
  desktop="$root/usr/share/applications/Resolve Desk.desktop"
  grep -qE '^Exec=resolve-desk %F$' "$desktop" || fail ".deb: the desktop entry's Exec takes folders: $(grep Exec "$desktop")"
  grep -q '^MimeType=inode/directory;' "$desktop" || fail ".deb: the desktop entry opens folders (MimeType)"
  for sub in run tools agent mcp; do
    grep -q "$sub" "$root/usr/share/bash-completion/completions/rdesk" || fail ".deb: bash completion lacks $sub"
  done
  template_round "$root/usr/bin/rdesk" deb
  # Its dependencies resolve on this system: what `apt install ./resolve-desk_*.deb` would do.
  apt-get install -s "$DEB" >"$TMP/apt.log" 2>&1 || fail ".deb: apt cannot install it: $(tail -3 "$TMP/apt.log")"
  grep -q '^Inst resolve-desk ' "$TMP/apt.log" || fail ".deb: apt would not install it: $(tail -3 "$TMP/apt.log")"
  ok ".deb $(basename "$DEB"): apt would install it, files, --version of both, sdk-path, desktop entry, js and python templates through rdesk run"
fi

if [ -n "$RPM" ]; then
  list=$(rpm -qlp "$RPM" 2>/dev/null)
  has_all "$list" "$(basename "$RPM")"
  root="$TMP/rpm-root"
  mkdir -p "$root"
  # Debian's rpm2cpio exits 1 on an unsigned package after writing the whole payload; the
  # digests are checked by rpm -K, and the binaries below must run.
  rpm -K --nosignature "$RPM" >/dev/null || fail ".rpm: its digests do not match (rpm -K)"
  rpm2cpio "$RPM" >"$TMP/rpm.cpio" || true
  (cd "$root" && cpio -idm --quiet <"$TMP/rpm.cpio")
  "$root/usr/bin/rdesk" --version | grep -q '^rdesk ' || fail ".rpm: rdesk --version"
  "$root/usr/bin/resolve-desk" --version | grep -q '^resolve-desk ' || fail ".rpm: resolve-desk --version"
  [ "$("$root/usr/bin/rdesk" sdk-path)" = "$(realpath "$root/usr/share/resolve-desk/sdk")" ] \
    || fail ".rpm: rdesk sdk-path printed $("$root/usr/bin/rdesk" sdk-path)"
  template_round "$root/usr/bin/rdesk" rpm
  ok ".rpm $(basename "$RPM"): digests, rpm -qlp lists every file, --version of both, sdk-path, js and python templates through rdesk run"
fi

if [ -n "$APPIMAGE" ]; then
  chmod +x "$APPIMAGE"
  (cd "$TMP" && "$APPIMAGE" --appimage-extract >/dev/null)
  "$TMP/squashfs-root/usr/bin/rdesk" --version | grep -q '^rdesk ' || fail "AppImage: its rdesk --version"
  display=":$((90 + RANDOM % 100))"
  Xvfb "$display" -screen 0 1400x900x24 -nolisten tcp >/dev/null 2>&1 &
  XVFB_PID=$!
  for _ in $(seq 50); do xdpyinfo -display "$display" >/dev/null 2>&1 && break; sleep 0.2; done
  ws="$TMP/appimage-ws"; mkdir -p "$ws"
  DISPLAY="$display" "$APPIMAGE" --appimage-extract-and-run "$ws" --data-dir "$TMP/appimage-data" \
    --config-dir "$TMP/appimage-config" >"$TMP/appimage.log" 2>&1 &
  APP_PID=$!
  shown=0
  for _ in $(seq 150); do
    if xwininfo -display "$display" -root -tree 2>/dev/null | grep -q '"Resolve Desk"'; then shown=1; break; fi
    kill -0 "$APP_PID" 2>/dev/null || break
    sleep 0.2
  done
  [ $shown = 1 ] || fail "AppImage: no \"Resolve Desk\" window within 30 s; its output: $(tail -5 "$TMP/appimage.log")"
  ok "AppImage $(basename "$APPIMAGE"): the window opened under Xvfb (--appimage-extract-and-run); its rdesk answers --version"
fi

WHEEL=$(ls "$BUNDLE_DIR"/sdk/*.whl 2>/dev/null | head -1 || true)
TGZ=$(ls "$BUNDLE_DIR"/sdk/*.tgz 2>/dev/null | head -1 || true)
if [ -n "$WHEEL" ]; then
  python3 -m pip install --quiet --no-deps --target "$TMP/py" "$WHEEL"
  PYTHONPATH="$TMP/py" python3 -c 'import resolve_desk_tool as t; assert t.PROTOCOL == 1' || fail "the wheel does not import"
  ok "wheel $(basename "$WHEEL") installs and imports (protocol 1)"
fi
if [ -n "$TGZ" ]; then
  contents=$(tar tzf "$TGZ")
  for f in package/index.js package/run.js package/index.d.ts package/package.json; do
    grep -qx "$f" <<<"$contents" || fail "$(basename "$TGZ") lacks $f"
  done
  ok "npm tarball $(basename "$TGZ") holds the SDK"
fi
echo "check-packages: $passed passed, 0 failed"
