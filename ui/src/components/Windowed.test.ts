// Long lists keep only the rows in view in the DOM (queue, rename table, diff rows).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import QueueColumn from './QueueColumn.svelte';
import RenameTable from './RenameTable.svelte';
import DiffView from './DiffView.svelte';
import type { ActionSummary, FileDiff, QueueSnapshot, RenameRow } from '../ipc/backend';

const snapshot = JSON.parse(
  readFileSync(resolve(__dirname, '../../../crates/protocol/fixtures/queue_snapshot.json'), 'utf8'),
) as QueueSnapshot;
const card = snapshot.actions[0]!;

describe('windowed lists', () => {
  it('a queue of 5,000 actions renders a window of cards, and the selected one', () => {
    const actions: ActionSummary[] = Array.from({ length: 5000 }, (_, i) => ({ ...card, id: `pa-x-${5000 - i}`, label: `preview ${5000 - i}`, isTop: i === 0 }));
    render(QueueColumn, { actions, selectedId: 'pa-x-5000', now: card.createdAtMs, onSelect: () => {} });
    expect(screen.getByTestId('queue-count')).toHaveTextContent('5000');
    const shown = screen.getByTestId('queue-list').querySelectorAll('li');
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(40);
    expect(shown[0]!.getAttribute('aria-posinset')).toBe('1');
    expect(shown[0]!.getAttribute('aria-setsize')).toBe('5000');
  });

  it('a rename table of 10,000 rows renders a window of rows', () => {
    const rows: RenameRow[] = Array.from({ length: 10000 }, (_, i) => ({ from: `photos/IMG_${i}.JPG`, to: `photos/holiday-${i}.jpg`, status: 'rename' }));
    render(RenameTable, { rows });
    expect(screen.getByTestId('rename-table')).toHaveTextContent('10000 renames');
    const shown = screen.getAllByTestId('rename-row');
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(80);
    expect(shown[0]).toHaveTextContent('photos/IMG_0.JPG');
  });

  it('a failed rename table load says so and offers a retry', () => {
    let retried = 0;
    render(RenameTable, { rows: [], error: 'permission denied', onRetry: () => retried++ });
    expect(screen.getByRole('alert')).toHaveTextContent('Could not load the renames: permission denied');
    screen.getByTestId('renames-retry').click();
    expect(retried).toBe(1);
  });

  it('a 25,000-row diff renders a window of rows', () => {
    const lines = Array.from({ length: 25000 }, (_, i) => ({ kind: 'added' as const, oldNo: null, newNo: i + 1, text: `line ${i + 1}`, emphasis: [] }));
    const diff: FileDiff = {
      path: 'big.ts', oldPath: null, language: 'typescript', summary: null, added: 25000, removed: 0,
      hunks: [{ oldStart: 1, oldLines: 0, newStart: 1, newLines: 25000, lines }],
    };
    render(DiffView, { diff, mode: 'unified', onToggleMode: () => {}, onExpand: () => {} });
    const table = screen.getByTestId('diff-table');
    expect(table.getAttribute('aria-rowcount')).toBe('25000');
    const shown = screen.getAllByTestId('diff-line');
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(100);
  });
});
