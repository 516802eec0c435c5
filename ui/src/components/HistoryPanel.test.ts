import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import HistoryPanel from './HistoryPanel.svelte';
import type { Backend, HistoryEntry } from '../ipc/backend';
import { HistorySearch } from '../state/history.svelte';
import HISTORY from '../../../crates/protocol/fixtures/history.json';

afterEach(() => cleanup());

const entries = () => structuredClone(HISTORY) as HistoryEntry[];

/** A search over `list`, read once. */
async function searchOf(list: HistoryEntry[]) {
  const search = new HistorySearch({
    searchHistory: async (_q: unknown, offset: number, limit: number) => ({ entries: list.slice(offset, offset + limit), offset, total: list.length, tools: [] }),
  } as unknown as Backend);
  await search.reload();
  return search;
}

describe('HistoryPanel undo', () => {
  it('offers Undo on an applied change set, asks for a reason, and passes it on', async () => {
    const calls: [string, string, string][] = [];
    const user = userEvent.setup();
    render(HistoryPanel, {
      search: await searchOf(entries()),
      now: 1764694600000,
      onUndo: async (e: HistoryEntry, verb: 'undo' | 'redo', reason: string) => {
        calls.push([e.actionId, verb, reason]);
        return { text: 'Undone: AST Edit: 3 replacements in 2 files. 2 files are back as it was before.', isError: false };
      },
    });
    const undo = await screen.findAllByTestId('history-undo');
    expect(undo, 'only the applied change set (history.json: one) has an undo').toHaveLength(1);
    await user.click(within(undo[0]!).getByTestId('history-undo-button'));
    const confirm = screen.getByTestId('history-undo-confirm') as HTMLButtonElement;
    expect(confirm.disabled, 'a reason is required').toBe(true);
    await user.type(screen.getByTestId('history-undo-reason'), 'wrong logger');
    await user.click(confirm);
    await waitFor(() => expect(calls).toEqual([['act-0003', 'undo', 'wrong logger']]));
    expect(screen.getByTestId('history-undo-result').textContent).toContain('Undone:');
  });

  it('shows the refusal naming the files, the note, Redo, and "can no longer be undone"', async () => {
    const list = entries();
    const user = userEvent.setup();
    const refusal =
      'Cannot undo "AST Edit: 3 replacements in 2 files": 1 file changed since the apply: src/a.ts (content changed). Nothing was written; the files are as they are now.';
    const { rerender } = render(HistoryPanel, {
      search: await searchOf(list),
      now: 1764694600000,
      onUndo: async () => ({ text: refusal, isError: true }),
    });
    await user.click(await screen.findByTestId('history-undo-button'));
    await user.type(screen.getByTestId('history-undo-reason'), 'revert');
    await user.click(screen.getByTestId('history-undo-confirm'));
    await waitFor(() => expect(screen.getByTestId('history-undo-result').textContent).toContain('src/a.ts (content changed)'));
    expect(screen.getByTestId('history-undo-reason'), 'the prompt stays open after a refusal').toBeTruthy();

    await rerender({ search: await searchOf([{ ...list[0]!, undo: { state: 'undone', note: null } }, ...list.slice(1)]) });
    await user.click(screen.getByText('Cancel'));
    expect(screen.getByTestId('history-redo-button')).toBeTruthy();

    await rerender({ search: await searchOf([{ ...list[0]!, undo: { state: 'expired', note: null } }, ...list.slice(1)]) });
    expect(screen.getByTestId('history-undo-expired').textContent).toContain('Can no longer be undone');
    expect(screen.queryByTestId('history-undo-button')).toBeNull();
  });
});
