// Line diff for the fake backend's demo data: LCS over lines, hunks with a
// given context, word-level emphasis from common prefix/suffix of paired lines.
import type { DiffLine, FileDiff, Hunk } from './generated/protocol';
import { languageForPath } from '../lib/language';

type Op = { kind: DiffLine['kind']; text: string; oldNo: number | null; newNo: number | null };

function lineOps(oldLines: string[], newLines: string[]): Op[] {
  const n = oldLines.length;
  const m = newLines.length;
  // lcs[i][j] = LCS length of old[i..] and new[j..]
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i]!;
    const below = lcs[i + 1]!;
    for (let j = m - 1; j >= 0; j--) {
      row[j] = oldLines[i] === newLines[j] ? below[j + 1]! + 1 : Math.max(below[j]!, row[j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && oldLines[i] === newLines[j]) {
      ops.push({ kind: 'context', text: oldLines[i]!, oldNo: i + 1, newNo: j + 1 });
      i++; j++;
    } else if (j < m && (i >= n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      ops.push({ kind: 'added', text: newLines[j]!, oldNo: null, newNo: j + 1 });
      j++;
    } else {
      ops.push({ kind: 'removed', text: oldLines[i]!, oldNo: i + 1, newNo: null });
      i++;
    }
  }
  // Put removals before additions inside each change block (unified style).
  const sorted: Op[] = [];
  let block: Op[] = [];
  const flush = () => {
    sorted.push(...block.filter((o) => o.kind === 'removed'), ...block.filter((o) => o.kind === 'added'));
    block = [];
  };
  for (const op of ops) {
    if (op.kind === 'context') { flush(); sorted.push(op); } else block.push(op);
  }
  flush();
  return sorted;
}

const WORD = /[\p{L}\p{N}_]/u;

/** Changed range of `a` vs `b`, widened to word boundaries. */
function changedRange(a: string, b: string): [number, number] {
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  let start = p;
  let end = a.length - s;
  while (start > 0 && WORD.test(a[start - 1]!)) start--;
  while (end < a.length && WORD.test(a[end]!)) end++;
  return [start, end];
}

function addEmphasis(lines: DiffLine[]): void {
  let k = 0;
  while (k < lines.length) {
    if (lines[k]!.kind !== 'removed') { k++; continue; }
    const removed: DiffLine[] = [];
    while (k < lines.length && lines[k]!.kind === 'removed') removed.push(lines[k++]!);
    const added: DiffLine[] = [];
    while (k < lines.length && lines[k]!.kind === 'added') added.push(lines[k++]!);
    for (let x = 0; x < Math.min(removed.length, added.length); x++) {
      const r = removed[x]!;
      const a = added[x]!;
      const [rs, re] = changedRange(r.text, a.text);
      const [as, ae] = changedRange(a.text, r.text);
      if (re > rs && re - rs < r.text.length) r.emphasis = [[rs, re]];
      if (ae > as && ae - as < a.text.length) a.emphasis = [[as, ae]];
    }
  }
}

export function makeFileDiff(
  path: string,
  oldLines: string[],
  newLines: string[],
  context: number,
  oldPath: string | null = null,
): FileDiff {
  const ops = lineOps(oldLines, newLines);
  const changed = ops.map((o, idx) => (o.kind === 'context' ? -1 : idx)).filter((i) => i >= 0);
  const hunks: Hunk[] = [];
  let added = 0;
  let removed = 0;
  for (const o of ops) {
    if (o.kind === 'added') added++;
    if (o.kind === 'removed') removed++;
  }
  // Ranges of op indexes to show.
  const ranges: [number, number][] = [];
  for (const idx of changed) {
    const from = Math.max(0, idx - context);
    const to = Math.min(ops.length - 1, idx + context);
    const last = ranges[ranges.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else ranges.push([from, to]);
  }
  // Old/new line counters before each op.
  const before: { old: number; new: number }[] = [];
  let o = 0;
  let n = 0;
  for (const op of ops) {
    before.push({ old: o, new: n });
    if (op.kind !== 'added') o++;
    if (op.kind !== 'removed') n++;
  }
  for (const [from, to] of ranges) {
    const slice = ops.slice(from, to + 1);
    const lines: DiffLine[] = slice.map((op) => ({
      kind: op.kind, oldNo: op.oldNo, newNo: op.newNo, text: op.text, emphasis: [],
    }));
    addEmphasis(lines);
    const oldLinesCount = slice.filter((x) => x.kind !== 'added').length;
    const newLinesCount = slice.filter((x) => x.kind !== 'removed').length;
    const b = before[from]!;
    hunks.push({
      oldStart: oldLinesCount === 0 ? b.old : b.old + 1,
      oldLines: oldLinesCount,
      newStart: newLinesCount === 0 ? b.new : b.new + 1,
      newLines: newLinesCount,
      lines,
    });
  }
  return { path, oldPath, language: languageForPath(path), summary: null, hunks, added, removed };
}
