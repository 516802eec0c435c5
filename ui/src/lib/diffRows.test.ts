import { describe, expect, it } from 'vitest';
import type { FileDiff, ReviewComment } from '../ipc/backend';
import { allUnfolded, splitRows, unfoldAll, unifiedAnchors, unifiedRows, withNotes, type Gap, type UnifiedRow } from './diffRows';

// Old file: 40 lines `o1`..`o40`; line 10 changed, a line inserted after 30.
const old = Array.from({ length: 40 }, (_, i) => `o${i + 1}`);
const diff: FileDiff = {
  path: 'a.ts', oldPath: null, language: 'typescript', summary: null, added: 2, removed: 1,
  hunks: [
    {
      oldStart: 9, oldLines: 3, newStart: 9, newLines: 3,
      lines: [
        { kind: 'context', oldNo: 9, newNo: 9, text: 'o9', emphasis: [] },
        { kind: 'removed', oldNo: 10, newNo: null, text: 'o10', emphasis: [] },
        { kind: 'added', oldNo: null, newNo: 10, text: 'n10', emphasis: [] },
        { kind: 'context', oldNo: 11, newNo: 11, text: 'o11', emphasis: [] },
      ],
    },
    {
      oldStart: 30, oldLines: 2, newStart: 30, newLines: 3,
      lines: [
        { kind: 'context', oldNo: 30, newNo: 30, text: 'o30', emphasis: [] },
        { kind: 'added', oldNo: null, newNo: 31, text: 'inserted', emphasis: [] },
        { kind: 'context', oldNo: 31, newNo: 32, text: 'o31', emphasis: [] },
      ],
    },
  ],
};
const gaps = (rows: UnifiedRow[]) => rows.filter((r): r is Gap => r.kind === 'gap');
const numbers = (rows: UnifiedRow[]): Array<[number | null, number | null]> =>
  rows.flatMap((r): Array<[number | null, number | null]> => (r.kind === 'line' ? [[r.line.oldNo, r.line.newNo]] : []));

describe('diff rows', () => {
  it('folds the lines before, between and (once the text is known) after the hunks', () => {
    expect(gaps(unifiedRows(diff)).map((g) => [g.index, g.hidden])).toEqual([[0, 8], [1, 18]]);
    const withText = gaps(unifiedRows(diff, old));
    expect(withText.map((g) => [g.index, g.hidden])).toEqual([[0, 8], [1, 18], [2, 9]]);
    expect(withText.map((g) => [g.canUp, g.canDown])).toEqual([[true, false], [true, true], [false, true]]);
    expect(gaps(unifiedRows(diff)).every((g) => !g.canUp && !g.canDown), 'nothing to unfold without the text').toBe(true);
  });

  it('unfolds a gap a few lines at a time from either side, with the right numbers on both sides', () => {
    const rows = unifiedRows(diff, old, { 1: { top: 2, bottom: 3 }, 2: { top: 4, bottom: 0 } });
    const middle = numbers(rows).filter(([o]) => o !== null && o >= 12 && o <= 29);
    expect(middle).toEqual([[12, 12], [13, 13], [27, 27], [28, 28], [29, 29]]);
    expect(gaps(rows).find((g) => g.index === 1)!.hidden).toBe(13);
    // After the insertion the new numbers run one ahead.
    const after = numbers(rows).filter(([o]) => o !== null && o >= 32);
    expect(after).toEqual([[32, 33], [33, 34], [34, 35], [35, 36]]);
    const texts = rows.flatMap((r) => (r.kind === 'line' && r.line.oldNo === 33 ? [r.line.text] : []));
    expect(texts).toEqual(['o33']);
  });

  it('shows the whole file when every gap is unfolded, in both modes', () => {
    const all = unfoldAll(diff, old.length);
    expect(allUnfolded(diff, old.length, all)).toBe(true);
    expect(allUnfolded(diff, old.length, {})).toBe(false);
    const rows = unifiedRows(diff, old, all);
    expect(gaps(rows)).toEqual([]);
    expect(rows.filter((r) => r.kind === 'line' && r.line.kind !== 'added')).toHaveLength(40);
    const split = splitRows(diff, old, all);
    expect(split.filter((r) => r.kind === 'gap')).toEqual([]);
    expect(split).toHaveLength(41);
  });
});

describe('comments among the rows', () => {
  const comment = (id: string, side: 'old' | 'new', start: number, end: number): ReviewComment => ({
    id, path: 'a.ts', side, startLine: start, endLine: end, quote: 'q', text: id, replacementId: null, rendered: id,
  });
  const rows: UnifiedRow[] = [
    { kind: 'line', key: 'l1', line: { kind: 'context', oldNo: 1, newNo: 1, text: 'a', emphasis: [] } },
    { kind: 'line', key: 'l2', line: { kind: 'removed', oldNo: 2, newNo: null, text: 'b', emphasis: [] } },
    { kind: 'line', key: 'l3', line: { kind: 'added', oldNo: null, newNo: 2, text: 'B', emphasis: [] } },
  ];
  const keys = (out: ReturnType<typeof withNotes<UnifiedRow>>) =>
    out.map((r) => (r.kind === 'note' ? `${r.comment.id}${r.unplaced ? '!' : ''}` : r.kind === 'composer' ? `composer${r.unplaced ? '!' : ''}` : r.key));

  it('puts each comment after the row of its last line, on its side', () => {
    const out = withNotes(rows, unifiedAnchors, [comment('old2', 'old', 2, 2), comment('new2', 'new', 1, 2), comment('ctx', 'old', 1, 1)], null);
    expect(keys(out)).toEqual(['l1', 'ctx', 'l2', 'old2', 'l3', 'new2']);
  });

  it('lists comments on folded-away lines first, and places the comment being written', () => {
    const out = withNotes(rows, unifiedAnchors, [comment('far', 'new', 40, 41)], { side: 'old', line: 2 });
    expect(keys(out)).toEqual(['far!', 'l1', 'l2', 'composer', 'l3']);
    expect(keys(withNotes(rows, unifiedAnchors, [], { side: 'new', line: 9 }))).toEqual(['composer!', 'l1', 'l2', 'l3']);
  });

  it('is the rows themselves when there is nothing to show', () => {
    expect(withNotes(rows, unifiedAnchors, [], null)).toBe(rows);
  });
});
