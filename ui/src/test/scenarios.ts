// Scenarios for the test double, built from the protocol fixtures that the Rust tests
// round-trip (crates/protocol/fixtures) plus a generated 1,000-file action for the
// virtualised list. Only wire values: nothing here computes a diff or a label.
import type { ActionSummary, FileDiff, FileEntry, HistoryEntry, QueueSnapshot, RenameRow, ScriptStep, SessionInfo, ToolInfo } from '../ipc/backend';
import type { Scenario } from './fakeBackend';
import QUEUE from '../../../crates/protocol/fixtures/queue_snapshot.json';
import FILES from '../../../crates/protocol/fixtures/file_entries.json';
import DIFF from '../../../crates/protocol/fixtures/file_diff.json';
import RENAMES from '../../../crates/protocol/fixtures/rename_rows.json';
import HISTORY from '../../../crates/protocol/fixtures/history.json';
import SESSION from '../../../crates/protocol/fixtures/session_info.json';
import TOOLS from '../../../crates/protocol/fixtures/tools.json';
import SCRIPT_STEPS from '../../../crates/protocol/fixtures/script_steps.json';

const line = (kind: 'context' | 'added' | 'removed', oldNo: number | null, newNo: number | null, text: string) =>
  ({ kind, oldNo, newNo, text, emphasis: [] as [number, number][] });

/** A one-hunk diff that swaps `console.log(` for `logger.debug(` on the given lines. */
function swapDiff(path: string, rows: string[]): FileDiff {
  const lines: FileDiff['hunks'][number]['lines'] = [];
  let n = 1;
  for (const r of rows) {
    if (r.includes('console.log(')) {
      lines.push(line('removed', n, null, r), line('added', null, n, r.replace('console.log(', 'logger.debug(')));
    } else {
      lines.push(line('context', n, n, r));
    }
    n++;
  }
  const changed = rows.filter((r) => r.includes('console.log(')).length;
  return {
    path, oldPath: null, language: 'typescript', summary: null, added: changed, removed: changed,
    hunks: [{ oldStart: 1, oldLines: rows.length, newStart: 1, newLines: rows.length, lines }],
  };
}

const FORMAT_DIFF = swapDiff('src/util/format.ts', [
  'export function formatDate(ms: number): string {',
  '  const d = new Date(ms);',
  "  console.log('formatting', ms);",
  '  return d.toISOString().slice(0, 10);',
  '}',
]);

/** `fileCount` files with `perFile` rewritten lines each. */
function bulk(id: string, fileCount: number, perFile: number, createdAtMs: number) {
  const areas = ['checkout', 'catalog', 'orders', 'returns', 'search', 'account', 'admin', 'shipping'];
  const files: FileEntry[] = [];
  const diffs: Record<string, FileDiff> = {};
  for (let i = 0; i < fileCount; i++) {
    const n = String(i + 1).padStart(4, '0');
    const area = areas[i % areas.length]!;
    const path = `src/${area}/steps/step-${n}.ts`;
    const rows = [`export function step${n}(input: Record<string, unknown>): number {`];
    for (let k = 0; k < perFile; k++) rows.push(`  console.log('${area} ${n} field${k}', input['field${k}']);`);
    rows.push('  return 0;', '}');
    diffs[path] = swapDiff(path, rows);
    files.push({ path, oldPath: null, change: 'modified', language: 'typescript', binary: false, tooLarge: false, added: perFile, removed: perFile, oldSize: null, newSize: null, oldHash: null, newHash: null });
  }
  const action: ActionSummary = {
    id, label: `AST Edit: ${fileCount * perFile} replacements in ${fileCount} files`, sourceToolName: 'ast_edit', pushedBy: null,
    badge: 'AST Edit', summary: `${fileCount * perFile} replacements in ${fileCount} files`,
    filesText: `${fileCount} files`, renamesText: '0 renames',
    createdAtMs, status: { kind: 'pending' }, isTop: false, kind: 'changeSet',
    counts: { files: fileCount, added: fileCount * perFile, removed: fileCount * perFile, renames: 0 },
    origin: { tool: 'ast_edit', params: { ops: [{ pat: 'console.log($$$A)', out: 'logger.debug($$$A)' }], path: 'src', glob: '**/steps/*.ts' } },
    proposal: null,
    comments: [],
    viewed: [],
  };
  return { action, files, diffs };
}

/**
 * Four pending actions, top first: an ast_edit of two files, a stale batch rename, 1,000
 * files of ast_edit, a custom action whose apply failed; and the fixture history.
 */
export function reviewScenario(): Scenario {
  const q = structuredClone(QUEUE) as QueueSnapshot;
  const [edit, rename, custom] = q.actions as [ActionSummary, ActionSummary, ActionSummary];
  edit.proposal = null;
  const big = bulk('act-0010', 1000, 5, rename.createdAtMs - 60_000);
  const entries = FILES as FileEntry[];
  return {
    session: structuredClone(SESSION) as SessionInfo,
    tools: structuredClone(TOOLS) as ToolInfo[],
    queue: { revision: q.revision, actions: [edit, rename, big.action, custom] },
    files: { [edit.id]: entries.slice(0, 2), [big.action.id]: big.files },
    diffs: { [edit.id]: { 'src/api/client.ts': DIFF as FileDiff, 'src/util/format.ts': FORMAT_DIFF }, [big.action.id]: big.diffs },
    renames: { [rename.id]: RENAMES as RenameRow[] },
    history: structuredClone(HISTORY) as HistoryEntry[],
    scriptSteps: structuredClone(SCRIPT_STEPS) as ScriptStep[],
    sincePreview: {
      [rename.id]: {
        'assets/img_001.PNG': {
          path: 'assets/img_001.PNG',
          why: 'content changed',
          diff: {
            path: 'assets/img_001.PNG', oldPath: null, language: null, hunks: [], added: 0, removed: 0,
            summary: 'Content changed since the preview (a rename keeps only the hash of the previewed content, so no diff can be shown)',
          },
        },
      },
    },
  };
}

import HIDDEN_QUEUE from '../../../crates/protocol/fixtures/queue_snapshot_hidden.json';
import HIDDEN_FILES from '../../../crates/protocol/fixtures/file_entries_hidden.json';
import HIDDEN_DIFF from '../../../crates/protocol/fixtures/file_diff_hidden.json';
import HIDDEN_TEXTS from '../../../crates/protocol/fixtures/file_texts_hidden.json';
import HIDDEN_RENAMES from '../../../crates/protocol/fixtures/rename_rows_hidden.json';
import type { FileTexts } from '../ipc/backend';

/**
 * examples/hidden-unicode as the shell serves it (the `*_hidden.json` protocol fixtures, written
 * by src-tauri/tests/shell.rs): a Trojan Source ast_edit on top, a look-alike batch rename below.
 */
export function hiddenScenario(): Scenario {
  const q = structuredClone(HIDDEN_QUEUE) as QueueSnapshot;
  const [edit, rename] = q.actions as [ActionSummary, ActionSummary];
  const diff = HIDDEN_DIFF as FileDiff;
  const texts = HIDDEN_TEXTS as FileTexts;
  return {
    session: structuredClone(SESSION) as SessionInfo,
    tools: structuredClone(TOOLS) as ToolInfo[],
    queue: q,
    files: { [edit.id]: HIDDEN_FILES as FileEntry[] },
    diffs: { [edit.id]: { [diff.path]: diff } },
    texts: { [edit.id]: { [texts.path]: texts } },
    renames: { [rename.id]: HIDDEN_RENAMES as RenameRow[] },
    history: [],
    scriptSteps: [],
  };
}
