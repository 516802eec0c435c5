// Turns hunks into rows for the two diff modes. Between hunks (and before the first and after
// the last) unchanged lines are folded into gaps; a gap can be unfolded a few lines at a time
// from either side, or whole, from the file's text (`oldLines`), never by asking the backend for
// a bigger diff.
import type { CommentSide, DiffLine, EarlierComment, FileDiff, HiddenChar, ReviewComment } from '../ipc/backend';

/** The hidden characters of the old file's lines, by 1-based line number (from `FileTexts`). */
export type LineHiddenMap = ReadonlyMap<number, HiddenChar[]>;

/** How much of a gap is unfolded: lines shown below the hunk above it, and above the hunk below it. */
export type Unfold = { top: number; bottom: number };

/** A folded run of unchanged lines (`hidden` of them). */
export type Gap = {
  kind: 'gap';
  key: string;
  /** 0 before the first hunk … `hunks.length` after the last. */
  index: number;
  hidden: number;
  /** Where unfolding can grow from: `up` reveals the lines just above the next hunk. */
  canUp: boolean;
  canDown: boolean;
};
export type UnifiedRow = { kind: 'line'; line: DiffLine; key: string } | Gap;
export type SplitRow =
  | { kind: 'pair'; left: DiffLine | null; right: DiffLine | null; key: string }
  | Gap;

/** Lines each Expand click unfolds. */
export const UNFOLD_STEP = 20;

type GapSpan = { index: number; start: number; end: number | null; offset: number };

/** The old-file line range `[start, end)` of every gap and the old → new line offset in it. */
export function gapSpans(diff: FileDiff, oldTotal: number | null): GapSpan[] {
  const h = diff.hunks;
  if (h.length === 0) return [];
  const spans: GapSpan[] = [];
  for (let i = 0; i <= h.length; i++) {
    const prev = h[i - 1];
    const next = h[i];
    const start = prev ? prev.oldStart + prev.oldLines : 1;
    const end = next ? next.oldStart : oldTotal === null ? null : oldTotal + 1;
    const offset = next ? next.newStart - next.oldStart : prev!.newStart + prev!.newLines - (prev!.oldStart + prev!.oldLines);
    spans.push({ index: i, start, end, offset });
  }
  return spans;
}

function contextLine(oldNo: number, offset: number, text: string, hidden?: HiddenChar[]): DiffLine {
  const line: DiffLine = { kind: 'context', oldNo, newNo: oldNo + offset, text, emphasis: [] };
  if (hidden) line.hidden = hidden;
  return line;
}

/**
 * The gap's rows: unfolded lines from the top, the fold (if anything is still hidden), unfolded
 * lines from the bottom. Without `oldLines` nothing can be unfolded.
 */
function gapRows(span: GapSpan, unfold: Unfold | undefined, oldLines: string[] | null, hunks: number, oldHidden?: LineHiddenMap): Array<DiffLine | Gap> {
  // The lines after the last hunk are known only with the file's text.
  if (span.end === null) return [];
  const size = Math.max(0, span.end - span.start);
  if (size === 0) return [];
  const canUnfold = oldLines !== null;
  const top = canUnfold ? Math.min(unfold?.top ?? 0, size) : 0;
  const bottom = canUnfold ? Math.min(unfold?.bottom ?? 0, size - top) : 0;
  const out: Array<DiffLine | Gap> = [];
  const line = (n: number) => contextLine(n, span.offset, oldLines![n - 1] ?? '', oldHidden?.get(n));
  for (let n = span.start; n < span.start + top; n++) out.push(line(n));
  const hidden = size - top - bottom;
  if (hidden !== 0) {
    out.push({
      kind: 'gap',
      key: `g${span.index}`,
      index: span.index,
      hidden,
      canDown: canUnfold && span.index > 0,
      canUp: canUnfold && span.index < hunks,
    });
  }
  for (let n = span.end - bottom; n < span.end; n++) out.push(line(n));
  return out;
}

export function unifiedRows(diff: FileDiff, oldLines: string[] | null = null, unfolds: Record<number, Unfold> = {}, oldHidden?: LineHiddenMap): UnifiedRow[] {
  const rows: UnifiedRow[] = [];
  const spans = gapSpans(diff, oldLines ? oldLines.length : null);
  const pushGap = (i: number) => {
    const span = spans[i];
    if (!span) return;
    for (const r of gapRows(span, unfolds[i], oldLines, diff.hunks.length, oldHidden)) {
      if ('kind' in r && r.kind === 'gap') rows.push(r);
      else rows.push({ kind: 'line', line: r as DiffLine, key: `c${(r as DiffLine).oldNo}` });
    }
  };
  diff.hunks.forEach((h, i) => {
    pushGap(i);
    h.lines.forEach((line, j) => rows.push({ kind: 'line', line, key: `${i}:${j}` }));
  });
  pushGap(diff.hunks.length);
  return rows;
}

export function splitRows(diff: FileDiff, oldLines: string[] | null = null, unfolds: Record<number, Unfold> = {}, oldHidden?: LineHiddenMap): SplitRow[] {
  const rows: SplitRow[] = [];
  const spans = gapSpans(diff, oldLines ? oldLines.length : null);
  const pushGap = (i: number) => {
    const span = spans[i];
    if (!span) return;
    for (const r of gapRows(span, unfolds[i], oldLines, diff.hunks.length, oldHidden)) {
      if ('kind' in r && r.kind === 'gap') rows.push(r);
      else {
        const l = r as DiffLine;
        rows.push({ kind: 'pair', left: l, right: l, key: `c${l.oldNo}` });
      }
    }
  };
  diff.hunks.forEach((h, i) => {
    pushGap(i);
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
  pushGap(diff.hunks.length);
  return rows;
}

/** Every gap unfolded whole ("Show whole file"). */
export function unfoldAll(diff: FileDiff, oldTotal: number): Record<number, Unfold> {
  const all: Record<number, Unfold> = {};
  for (const span of gapSpans(diff, oldTotal)) {
    const size = Math.max(0, (span.end ?? span.start) - span.start);
    all[span.index] = span.index === 0 ? { top: 0, bottom: size } : { top: size, bottom: 0 };
  }
  return all;
}

/** True when nothing is folded any more. */
export function allUnfolded(diff: FileDiff, oldTotal: number | null, unfolds: Record<number, Unfold>): boolean {
  if (oldTotal === null) return false;
  return gapSpans(diff, oldTotal).every((span) => {
    const size = Math.max(0, (span.end ?? span.start) - span.start);
    const u = unfolds[span.index];
    return size === 0 || (u !== undefined && u.top + u.bottom >= size);
  });
}

/** A place in a file a comment can be on: a side and a 1-based line of it. */
export type Anchor = { side: CommentSide; line: number };

/** A comment shown in the diff, after the last line it is on (`unplaced`: its lines are folded away). */
export type NoteRow =
  | { kind: 'note'; comment: ReviewComment; key: string; unplaced: boolean }
  | { kind: 'earlier'; note: EarlierNote; key: string; unplaced: boolean }
  | { kind: 'composer'; key: string; unplaced: boolean };

/**
 * A comment of an earlier round of the review, read-only, shown after the line `at` of this
 * diff (`null`: it has no place here, so it is shown on top with its quote).
 */
export type EarlierNote = { earlier: EarlierComment; at: Anchor | null };

/** The earlier comments of `path` placed on this round's diff of the whole proposal. */
export function earlierOnProposal(earlier: EarlierComment[], path: string): EarlierNote[] {
  return earlier
    .filter((e) => e.comment.path === path)
    .map((e) => ({ earlier: e, at: e.nowEndLine === null ? null : { side: e.comment.side, line: e.nowEndLine } }));
}

/**
 * The earlier comments of `path` placed on the diff of the previous round's proposal (−) to
 * this one (+): a comment on a proposed line is on that diff's old side, where it was written;
 * one on the original has no place there.
 */
export function earlierOnRoundDiff(earlier: EarlierComment[], path: string): EarlierNote[] {
  return earlier
    .filter((e) => e.comment.path === path)
    .map((e) => ({ earlier: e, at: e.comment.side === 'new' ? { side: 'old' as const, line: e.comment.endLine } : null }));
}

/** Where a unified row's line can be commented on: a removed line's old side, an added line's new side, both for context. */
export function unifiedAnchors(row: UnifiedRow): Anchor[] {
  if (row.kind !== 'line') return [];
  const l = row.line;
  const out: Anchor[] = [];
  if (l.kind !== 'removed' && l.newNo !== null) out.push({ side: 'new', line: l.newNo });
  if (l.kind !== 'added' && l.oldNo !== null) out.push({ side: 'old', line: l.oldNo });
  return out;
}

/** A side-by-side row: its left line's old side, its right line's new side. */
export function splitAnchors(row: SplitRow): Anchor[] {
  if (row.kind !== 'pair') return [];
  const out: Anchor[] = [];
  if (row.right && row.right.newNo !== null) out.push({ side: 'new', line: row.right.newNo });
  if (row.left && row.left.oldNo !== null) out.push({ side: 'old', line: row.left.oldNo });
  return out;
}

/**
 * The rows with each comment after the row of its last line (and the comment being written,
 * `composer`, after the row of its last line). Comments whose lines are folded away come
 * first, marked `unplaced`, so every comment of the file is on screen.
 */
export function withNotes<R extends { key: string }>(
  rows: R[],
  anchors: (row: R) => Anchor[],
  comments: ReviewComment[],
  composer: Anchor | null,
  earlier: EarlierNote[] = [],
): Array<R | NoteRow> {
  if (comments.length === 0 && composer === null && earlier.length === 0) return rows;
  const at = (a: Anchor) => `${a.side}:${a.line}`;
  const byEnd = new Map<string, NoteRow[]>();
  const head: NoteRow[] = [];
  for (const e of earlier) {
    const row: NoteRow = { kind: 'earlier', note: e, key: `earlier-${e.earlier.round}-${e.earlier.comment.id}`, unplaced: false };
    if (e.at === null) head.push({ ...row, unplaced: true });
    else byEnd.set(at(e.at), [...(byEnd.get(at(e.at)) ?? []), row]);
  }
  for (const c of comments) {
    const k = at({ side: c.side, line: c.endLine });
    byEnd.set(k, [...(byEnd.get(k) ?? []), { kind: 'note', comment: c, key: `note-${c.id}`, unplaced: false }]);
  }
  const placed = new Set<string>();
  let composerPlaced = false;
  const body: Array<R | NoteRow> = [];
  for (const row of rows) {
    body.push(row);
    for (const a of anchors(row)) {
      const k = at(a);
      if (placed.has(k)) continue;
      const here = byEnd.get(k);
      if (here) {
        placed.add(k);
        body.push(...here);
      }
      if (!composerPlaced && composer && at(composer) === k) {
        composerPlaced = true;
        body.push({ kind: 'composer', key: 'composer', unplaced: false });
      }
    }
  }
  for (const [k, list] of byEnd) {
    if (!placed.has(k)) for (const n of list) head.push({ ...n, unplaced: true });
  }
  if (composer && !composerPlaced) head.push({ kind: 'composer', key: 'composer', unplaced: true });
  return head.length === 0 ? body : [...head, ...body];
}
