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
  it('renders unified rows with folded gaps and an Expand control', async () => {
    const onExpand = vi.fn();
    render(DiffView, { diff, mode: 'unified', onToggleMode: () => {}, onExpand });
    expect(screen.getAllByTestId('diff-line')).toHaveLength(5);
    const gaps = screen.getAllByTestId('expand-gap');
    expect(gaps[0]).toHaveTextContent('4 unchanged lines hidden');
    expect(gaps[1]).toHaveTextContent('12 unchanged lines hidden');
    gaps[1]!.click();
    expect(onExpand).toHaveBeenCalled();
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
    expect(screen.getByText((_, el) => el?.tagName === 'TD' && el.textContent === '<b>&</b>')).toBeInTheDocument();
    expect(screen.getByTestId('diff-view').querySelector('b')).toBeNull();
  });

  it('the mode toggle reports clicks', () => {
    const onToggleMode = vi.fn();
    render(DiffView, { diff, mode: 'unified', onToggleMode, onExpand: () => {} });
    screen.getByTestId('diff-mode-toggle').click();
    expect(onToggleMode).toHaveBeenCalledOnce();
  });
});
