#!/usr/bin/env bash
# Fails when an engine, protocol, agent, cli or tool crate depends on tauri (directly or not).
# Only the root package (the desktop app, src-tauri/) may.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for pkg in resolve-engine resolve-protocol resolve-agent resolve-cli resolve-journal resolve-mcp resolve-watch resolve-external resolve-tool-ast-edit resolve-tool-batch-rename resolve-scenarios; do
  if cargo tree -p "$pkg" -e normal,build --prefix none 2>/dev/null | grep -qE '^(tauri|wry|webkit2gtk)[ -]'; then
    echo "check-deps: $pkg depends on tauri/wry/webkit; only the desktop app may" >&2
    status=1
  fi
done
# The engine must not know about any particular tool.
if cargo tree -p resolve-engine -e normal --prefix none | grep -qE '^resolve-tool-'; then
  echo "check-deps: resolve-engine depends on a tool crate" >&2
  status=1
fi
[ $status -eq 0 ] && echo "check-deps: ok (no engine/tool crate depends on tauri)"
exit $status
