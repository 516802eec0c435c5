import { describe, expect, it, vi } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import DiffView from './DiffView.svelte';
import type { FileDiff } from '../ipc/backend';

const diff: FileDiff = {
  path: 'src/a.ts', oldPath: null, language: 'typescript', summary: null, added: 1, removed: 1,
  hunks: [
    {
      oldStart: 5, oldLines: 3, newStart: 5, newLines: 3,
      lines: [
        { kind: 'context', oldNo: 5, newNo: 5, text: 'const a = 1;', emphasis: [] },
        { kind: 'removed', oldNo: 6, newNo: null, text: 'console.log(a);', emphasis: [[0, 11]] },
        { kind: 'added', oldNo: null, newNo: 6, text: 'logger.debug(a);', emphasis: [[0, 12]] },
        { kind: 'context', oldNo: 7, newNo: 7, text: '<b>&</b>', emphasis: [] },
      ],
    },
    {
      oldStart: 20, oldLines: 1, newStart: 20, newLines: 1,
      lines: [{ kind: 'context', oldNo: 20, newNo: 20, text: 'end();', emphasis: [] }],
    },
  ],
};

describe('DiffView', () => {
  it('renders unified rows with folded gaps; unfolding waits for the file text', async () => {
    const onExpand = vi.fn();
    render(DiffView, { diff, mode: 'unified', onToggleMode: () => {}, onExpand });
    expect(screen.getAllByTestId('diff-line')).toHaveLength(5);
    const gaps = screen.getAllByTestId('expand-gap');
    expect(gaps[0]).toHaveTextContent('4 unchanged lines hidden');
    expect(gaps[1]).toHaveTextContent('12 unchanged lines hidden');
    expect(screen.queryByTestId('unfold-all'), 'no unfolding before the text is here').toBeNull();
    expect(screen.getByTestId('expand-all')).toBeDisabled();
  });

  it('unfolds N lines from either side of a gap, or the whole gap, from the file text', () => {
    const onUnfold = vi.fn();
    const old = Array.from({ length: 60 }, (_, i) => `line ${i + 1}`);
    const lines = { old, new: old, oldHtml: null, newHtml: null };
    render(DiffView, { diff, lines, mode: 'unified', onToggleMode: () => {}, onExpand: () => {}, onUnfold });
    // Gaps: 4 before, 12 between, 40 after the last hunk (the text says the file has 60 lines).
    const gaps = screen.getAllByTestId('expand-gap');
    expect(gaps.map((g) => g.textContent)).toEqual(['⋯ 4 unchanged lines hidden', '⋯ 12 unchanged lines hidden', '⋯ 40 unchanged lines hidden']);
    screen.getAllByTestId('unfold-all')[1]!.click();
    expect(onUnfold).toHaveBeenLastCalledWith(1, 'all');
    screen.getByTestId('unfold-down').click();
    expect(onUnfold).toHaveBeenLastCalledWith(2, 'down');
    expect(screen.getByTestId('expand-all')).toBeEnabled();
  });

  it('uses the whole-file highlighting of each side once it is ready', () => {
    const text = (n: number) => `<span class="hljs-comment">c${n}</span>`;
    const lines = {
      old: Array.from({ length: 20 }, (_, i) => `o${i + 1}`),
      new: Array.from({ length: 20 }, (_, i) => `n${i + 1}`),
      oldHtml: Array.from({ length: 20 }, (_, i) => text(i + 1)),
      newHtml: Array.from({ length: 20 }, (_, i) => text(100 + i + 1)),
    };
    render(DiffView, { diff, lines, mode: 'unified', onToggleMode: () => {}, onExpand: () => {} });
    const comments = [...screen.getByTestId('diff-table').querySelectorAll('.hljs-comment')].map((c) => c.textContent);
    // removed line 6 → old side; added line 6 and context lines → new side.
    expect(comments).toContain('c6');
    expect(comments).toContain('c106');
    expect(comments).toContain('c105');
  });

  it('lists a binary file with its sizes and hashes and says no diff is shown', () => {
    const binary: FileDiff = { ...diff, path: 'logo.png', language: null, summary: 'Binary file: 14.2 KiB → 13.9 KiB', hunks: [] };
    const entry = {
      path: 'logo.png', oldPath: null, change: 'modified' as const, language: null, binary: true, tooLarge: false, added: 0, removed: 0,
      oldSize: 14540, newSize: 14233, oldHash: 'ab'.repeat(32), newHash: 'cd'.repeat(32),
    };
    render(DiffView, { diff: binary, entry, mode: 'unified', onToggleMode: () => {}, onExpand: () => {} });
    expect(screen.getByTestId('diff-summary')).toHaveTextContent('No diff is shown');
    const facts = screen.getByTestId('file-facts');
    expect(facts).toHaveTextContent('14.2 KiB (14,540 bytes)');
    expect(facts).toHaveTextContent('cd'.repeat(32));
  });

  it('a failed load says so and retries', () => {
    const onRetry = vi.fn();
    render(DiffView, { diff: null, error: 'disk on fire', mode: 'unified', onToggleMode: () => {}, onExpand: () => {}, onRetry });
    expect(screen.getByRole('alert')).toHaveTextContent('disk on fire');
    screen.getByTestId('diff-retry').click();
    expect(onRetry).toHaveBeenCalledOnce();
  });

  it('renders side by side with removed left and added right on one row', () => {
    render(DiffView, { diff, mode: 'split', onToggleMode: () => {}, onExpand: () => {} });
    expect(screen.getByTestId('diff-view').dataset.mode).toBe('split');
    const pairs = screen.getAllByTestId('diff-pair');
    expect(pairs).toHaveLength(4);
    const changed = pairs[1]!;
    expect(changed.querySelector('[data-side="old"]')).toHaveTextContent('console.log(a);');
    expect(changed.querySelector('[data-side="new"]')).toHaveTextContent('logger.debug(a);');
  });

  it('marks word-level emphasis ranges and escapes the text', () => {
    render(DiffView, { diff, mode: 'unified', onToggleMode: () => {}, onExpand: () => {} });
    const marks = [...screen.getByTestId('diff-view').querySelectorAll('mark.em')].map((m) => m.textContent).join('');
    expect(marks).toContain('console.log');
    expect(marks).toContain('logger.debug');
    expect(marks).not.toContain('(a)');
    expect(screen.getByText((_, el) => !!el?.classList.contains('text') && el.textContent === '<b>&</b>')).toBeInTheDocument();
    expect(screen.getByTestId('diff-view').querySelector('b')).toBeNull();
  });

  it('the mode toggle reports clicks', () => {
    const onToggleMode = vi.fn();
    render(DiffView, { diff, mode: 'unified', onToggleMode, onExpand: () => {} });
    screen.getByTestId('diff-mode-toggle').click();
    expect(onToggleMode).toHaveBeenCalledOnce();
  });
});
