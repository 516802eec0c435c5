// Partial apply in the app (fake backend): unticking files (space on the focused row, or
// the box) and single replacements, the Apply button's words, and the selection sent.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import HistoryPanel from './HistoryPanel.svelte';
import ReplacementList from './ReplacementList.svelte';
import { FakeBackend } from '../test/fakeBackend';
import { reviewScenario } from '../test/scenarios';
import { PartialPicks } from '../state/partial.svelte';
import { HistorySearch } from '../state/history.svelte';
import type { Backend, FileReplacements, HistoryEntry } from '../ipc/backend';
import REPLACEMENTS from '../../../crates/protocol/fixtures/file_replacements.json';
import HISTORY from '../../../crates/protocol/fixtures/history.json';

afterEach(() => cleanup());

const FIRST = 'src/api/client.ts';
const SECOND = 'src/util/format.ts';

async function setup() {
  const scenario = reviewScenario();
  const top = scenario.queue.actions[0]!;
  // The engine's answer for the top action's first file (wire values from the fixture).
  scenario.replacements = { [top.id]: { [FIRST]: { ...(REPLACEMENTS as FileReplacements), path: FIRST } } };
  const backend = new FakeBackend({ latencyMs: 0, scenario });
  const user = userEvent.setup();
  render(App, { backend });
  await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBe(2));
  await user.type(screen.getByTestId('reason-input'), 'not the format change');
  return { backend, user, top };
}

const row = (path: string) => screen.getAllByTestId('file-row').find((r) => r.dataset.path === path)!;

describe('partial apply', () => {
  it('with nothing unticked, Apply is a full apply exactly (no selection sent)', async () => {
    const { backend, user } = await setup();
    expect(screen.getByTestId('apply-button')).toHaveTextContent(/^Apply$/);
    expect(row(FIRST)).toHaveAttribute('aria-checked', 'true');
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(backend.leaveOuts).toEqual([null]));
  });

  it('space on the focused file row unticks it; Apply says and sends what it leaves out', async () => {
    const { backend, user } = await setup();
    row(SECOND).focus();
    await user.keyboard(' ');
    expect(row(SECOND)).toHaveAttribute('aria-checked', 'false');
    expect(screen.getByTestId('files-left-out')).toHaveTextContent('1 of 2 left out');
    expect(screen.getByTestId('apply-button')).toHaveTextContent('Apply 1 of 2 files');
    // Space again ticks it back: a full apply.
    await user.keyboard(' ');
    expect(screen.getByTestId('apply-button')).toHaveTextContent(/^Apply$/);
    // The box is a mouse target too.
    await user.click(within(row(SECOND)).getByTestId('file-tick'));
    expect(screen.getByTestId('apply-button')).toHaveTextContent('Apply 1 of 2 files');
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(backend.leaveOuts).toEqual([{ files: [SECOND], replacements: {} }]));
  });

  it('unticks one replacement of an ast_edit file in the windowed list and sends its id', async () => {
    const { backend, user } = await setup();
    await waitFor(() => expect(screen.getAllByTestId('replacement-row')).toHaveLength(2));
    const second = screen.getAllByTestId('replacement-row').find((r) => r.dataset.id === '2')!;
    expect(second).toHaveTextContent('L9');
    expect(second).toHaveTextContent('logger.info(user.name)');
    await user.click(within(second).getByRole('checkbox'));
    expect(screen.getByTestId('replacements-left-out')).toHaveTextContent('1 left out');
    expect(screen.getByTestId('apply-button')).toHaveTextContent('Apply, leaving out 1 replacement');
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(backend.leaveOuts).toEqual([{ files: [], replacements: { [FIRST]: [2] } }]));
  });

  it('a file without single replacements says so, and can still be left out whole', async () => {
    const { user } = await setup();
    await user.click(row(SECOND));
    expect(await screen.findByTestId('replacements-note')).toHaveTextContent('you can leave out the whole file');
  });

  it('unticks one hunk of any other text edit and sends it as `hunks`', async () => {
    const scenario = reviewScenario();
    const top = scenario.queue.actions[0]!;
    const hunks: FileReplacements = {
      path: SECOND,
      unit: 'hunk',
      note: null,
      replacements: [
        { id: 1, line: 4, old: 'const a = 1;\n', new: 'const a = 2;\n' },
        { id: 2, line: 40, old: '', new: 'export { a };\n' },
      ],
    };
    scenario.replacements = { [top.id]: { [SECOND]: hunks } };
    const backend = new FakeBackend({ latencyMs: 0, scenario });
    const user = userEvent.setup();
    render(App, { backend });
    await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBe(2));
    await user.type(screen.getByTestId('reason-input'), 'keep the export out');
    await user.click(row(SECOND));
    await waitFor(() => expect(screen.getAllByTestId('replacement-row')).toHaveLength(2));
    expect(screen.getByTestId('replacement-list')).toHaveAttribute('data-unit', 'hunk');
    expect(screen.getByTestId('replacement-list')).toHaveTextContent('2 hunks');
    const second = screen.getAllByTestId('replacement-row').find((r) => r.dataset.id === '2')!;
    expect(within(second).getByRole('checkbox')).toHaveAccessibleName('Apply hunk 2 at line 40');
    expect(within(second).queryByTestId('replacement-comment')).toBeNull();
    await user.click(within(second).getByRole('checkbox'));
    expect(screen.getByTestId('apply-button')).toHaveTextContent('Apply, leaving out 1 hunk');
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(backend.leaveOuts).toEqual([{ files: [], replacements: {}, hunks: { [SECOND]: [2] } }]));
  });

  it('a non-top action has no ticks', async () => {
    const { user } = await setup();
    await user.click(screen.getAllByTestId('queue-card')[2]!);
    await waitFor(() => expect(screen.getByText('1000', { selector: 'strong' })).toBeInTheDocument());
    expect(screen.getAllByTestId('file-row')[0]).not.toHaveAttribute('aria-checked');
    expect(screen.queryAllByTestId('file-tick')).toHaveLength(0);
  });
});

describe('PartialPicks', () => {
  it('keeps ticks per action id and sends nothing once everything is ticked again', () => {
    const picks = new PartialPicks();
    expect(picks.leaveOut('a')).toBeNull();
    picks.toggleFile('a', 'x.ts');
    picks.toggleReplacement('b', 'y.ts', 3);
    expect(picks.leaveOut('a')).toEqual({ files: ['x.ts'], replacements: {} });
    expect(picks.leaveOut('b')).toEqual({ files: [], replacements: { 'y.ts': [3] } });
    expect(picks.applyText('a', 40)).toBe('Apply 39 of 40 files');
    expect(picks.applyText('b', 40)).toBe('Apply, leaving out 1 replacement');
    picks.toggleFile('a', 'x.ts');
    expect(picks.leaveOut('a')).toBeNull();
    expect(picks.applyText('a', 40)).toBe('Apply');
    // A file left out whole does not also send its single replacements.
    picks.toggleFile('b', 'y.ts');
    expect(picks.leaveOut('b')).toEqual({ files: ['y.ts'], replacements: {} });
    picks.clear('b');
    expect(picks.leaveOut('b')).toBeNull();
    // Hunks of a plain text edit go to `hunks`, beside an ast_edit file's replacements.
    picks.toggleReplacement('c', 'notes.md', 2, 'hunk');
    picks.toggleReplacement('c', 'y.ts', 1);
    expect(picks.leaveOut('c')).toEqual({ files: [], replacements: { 'y.ts': [1] }, hunks: { 'notes.md': [2] } });
    expect(picks.applyText('c', 2)).toBe('Apply, leaving out 1 replacement and 1 hunk');
  });
});

describe('partial apply fixtures (shared with crates/protocol)', () => {
  it('renders file_replacements.json as checkable rows', async () => {
    const toggled: number[] = [];
    render(ReplacementList, { data: REPLACEMENTS as FileReplacements, leftOut: (id: number) => id === 1, onToggle: (id: number) => toggled.push(id) });
    const rows = screen.getAllByTestId('replacement-row');
    expect(rows).toHaveLength(2);
    expect(within(rows[0]!).getByRole('checkbox')).not.toBeChecked();
    expect(within(rows[1]!).getByRole('checkbox')).toBeChecked();
    await fireEvent.click(within(rows[1]!).getByRole('checkbox'));
    expect(toggled).toEqual([2]);
  });

  it('the history shows the engine’s words for a partial apply', async () => {
    const list = structuredClone(HISTORY) as HistoryEntry[];
    const search = new HistorySearch({
      searchHistory: async (_q: unknown, offset: number, limit: number) => ({ entries: list.slice(offset, offset + limit), offset, total: list.length, tools: [] }),
    } as unknown as Backend);
    await search.reload();
    render(HistoryPanel, { search, now: 1764694600000 });
    expect(await screen.findByTestId('history-partial')).toHaveTextContent('applied 1 of 2 files');
    expect(screen.getAllByTestId('history-partial')).toHaveLength(1);
  });
});
