#!/usr/bin/env bash
# Fails when a crate imports what ARCHITECTURE.md says it never imports: crate level with
# cargo tree (only the root package, the desktop app, may depend on tauri), file level with grep.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for pkg in resolve-engine resolve-desk-core resolve-protocol resolve-agent resolve-cli resolve-journal resolve-mcp resolve-watch resolve-external resolve-tool-ast-edit resolve-tool-batch-rename resolve-tool-text-edit resolve-connect resolve-userfile resolve-scenarios; do
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
# The protocol is the ground floor: the engine and everything above share its words, and it
# depends on no crate of ours.
if cargo tree -p resolve-protocol -e normal --prefix none | grep -v '^resolve-protocol ' | grep -qE '^resolve-'; then
  echo "check-deps: resolve-protocol depends on a crate of ours; it is the ground floor" >&2
  status=1
fi
# The user-file module is below everything: it depends on no crate of ours.
if cargo tree -p resolve-userfile -e normal --prefix none | grep -v '^resolve-userfile ' | grep -qE '^resolve-'; then
  echo "check-deps: resolve-userfile depends on a crate of ours; it is below them all" >&2
  status=1
fi
# File-level rules (ARCHITECTURE.md's "never imports" column), so the map cannot drift.
never() {  # never WHAT PATTERN PATH...: fails when a file under PATH names PATTERN
  local what=$1 pattern=$2; shift 2
  local hits
  hits=$(grep -rnE --include='*.rs' --include='*.ts' --include='*.svelte' "$pattern" "$@" 2>/dev/null | grep -vE '^[^:]+:[0-9]+:\s*(//|\*)' || true)
  if [ -n "$hits" ]; then
    echo "check-deps: $what:" >&2
    echo "$hits" >&2
    status=1
  fi
}
never "the change set never names the session, the stack or resolve (it writes files, nothing more)" \
  'crate::(session|pending|resolve|registry|waits|stored|staleness|custom)\b' crates/engine/src/changeset
never "nothing below the shell uses tauri" '(^|[^a-z_])(use tauri|tauri::)' crates tools tests/tests
never "the desk never uses a front end (mcp, cli, connect)" 'resolve_(mcp|cli|connect)::' crates/desk/src
never "the engine and the tools know no outside agent" 'resolve_connect::|Claude' crates/engine/src tools/ast-edit/src tools/batch-rename/src
never "the journal, watcher, external tools and agent never use the desk" 'resolve_desk_core::' crates/journal crates/watch crates/external crates/agent crates/mcp
never "below the session, the engine's modules never name the session (it is the top: calls, relays, restores, undo)" \
  'crate::session\b' crates/engine/src/{changeset,pending.rs,stored.rs,undo.rs,review.rs,rounds.rs,staleness.rs,waits.rs,resolve.rs,decide.rs,custom.rs,tool.rs,vocab.rs,workspace.rs}
never "the shell's state never reaches up to the desktop wiring (wiring.rs looks the state up, not the reverse)" \
  'crate::wiring' src-tauri/src/{state.rs,join.rs,leave.rs,nudge.rs,tray.rs,events.rs,notices.rs,agent.rs}
# No two modules of a crate import each other (directly or around a circle).
python3 scripts/check-cycles.py crates/*/src tools/*/src src-tauri/src tests/src || status=1
never "only ui/src/ipc talks to Tauri" "@tauri-apps/" $(find ui/src -path ui/src/ipc -prune -o -type f -print)
[ $status -eq 0 ] && echo "check-deps: ok (crate and file boundaries as ARCHITECTURE.md says)"
exit $status
