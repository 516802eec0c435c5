// Turns hunks into rows for the two diff modes, with folded gaps between them.
import type { DiffLine, FileDiff } from '../ipc/backend';

export type Gap = { kind: 'gap'; hidden: number | null; key: string };
export type UnifiedRow = { kind: 'line'; line: DiffLine; key: string } | Gap;
export type SplitRow =
  | { kind: 'pair'; left: DiffLine | null; right: DiffLine | null; key: string }
  | Gap;

/** Number of unchanged lines hidden before hunk `i` (null when unknown). */
function gapBefore(diff: FileDiff, i: number): number | null {
  const h = diff.hunks[i]!;
  if (i === 0) return h.oldStart > 1 ? h.oldStart - 1 : 0;
  const prev = diff.hunks[i - 1]!;
  return Math.max(0, h.oldStart - (prev.oldStart + prev.oldLines));
}

export function unifiedRows(diff: FileDiff): UnifiedRow[] {
  const rows: UnifiedRow[] = [];
  diff.hunks.forEach((h, i) => {
    const hidden = gapBefore(diff, i);
    if (hidden !== 0) rows.push({ kind: 'gap', hidden, key: `g${i}` });
    h.lines.forEach((line, j) => rows.push({ kind: 'line', line, key: `${i}:${j}` }));
  });
  return rows;
}

export function splitRows(diff: FileDiff): SplitRow[] {
  const rows: SplitRow[] = [];
  diff.hunks.forEach((h, i) => {
    const hidden = gapBefore(diff, i);
    if (hidden !== 0) rows.push({ kind: 'gap', hidden, key: `g${i}` });
    let k = 0;
    const lines = h.lines;
    while (k < lines.length) {
      const line = lines[k]!;
      if (line.kind === 'context') {
        rows.push({ kind: 'pair', left: line, right: line, key: `${i}:${k}` });
        k++;
        continue;
      }
      const removed: DiffLine[] = [];
      const added: DiffLine[] = [];
      const start = k;
      while (k < lines.length && lines[k]!.kind === 'removed') removed.push(lines[k++]!);
      while (k < lines.length && lines[k]!.kind === 'added') added.push(lines[k++]!);
      for (let x = 0; x < Math.max(removed.length, added.length); x++) {
        rows.push({ kind: 'pair', left: removed[x] ?? null, right: added[x] ?? null, key: `${i}:${start}:${x}` });
      }
    }
  });
  return rows;
}
