// The next round of a review in the app (fake backend serving wire values): the card says
// which round it is, the action says what the review began with, and the files proposed
// exactly as in the previous round are marked, so the person re-reads only what moved.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import { FakeBackend } from '../test/fakeBackend';
import { reviewScenario } from '../test/scenarios';

afterEach(() => cleanup());

describe('rounds', () => {
  it('round 2: the card, the note and the unchanged file', async () => {
    const scenario = reviewScenario();
    const top = scenario.queue.actions[0]!;
    top.round = { number: 2, firstLabel: 'AST Edit: 3 replacements in 2 files', previousId: 'pa-earlier', unchanged: ['src/api/client.ts'] };
    render(App, { backend: new FakeBackend({ latencyMs: 0, scenario }) });
    await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBe(2));
    const card = screen.getAllByTestId('queue-card')[0]!;
    expect(within(card).getByTestId('card-round')).toHaveTextContent('round 2');
    expect(screen.getByTestId('round-note')).toHaveTextContent(
      'Round 2 of “AST Edit: 3 replacements in 2 files”: the agent\'s answer to your Request changes. 1 of 2 files is proposed exactly as in round 1',
    );
    const rows = screen.getAllByTestId('file-row');
    const same = rows.find((r) => r.dataset.path === 'src/api/client.ts')!;
    const moved = rows.find((r) => r.dataset.path !== 'src/api/client.ts')!;
    expect(within(same).getByTestId('file-unchanged')).toHaveTextContent('= round 1');
    expect(within(moved).queryByTestId('file-unchanged')).toBeNull();
    // A first preview is no round.
    const other = screen.getAllByTestId('queue-card')[1]!;
    expect(within(other).queryByTestId('card-round')).toBeNull();
  });

  it('a changed file can show only what changed since the previous round', async () => {
    const scenario = reviewScenario();
    const top = scenario.queue.actions[0]!;
    top.round = { number: 2, firstLabel: 'AST Edit: 3 replacements in 2 files', previousId: 'pa-earlier', unchanged: ['src/api/client.ts'] };
    const user = userEvent.setup();
    const moved = 'src/util/format.ts';
    // The engine's diff of the two proposals (a wire value: the file's diff stands in for it).
    const backend = new FakeBackend({ latencyMs: 0, scenario });
    const diff = await backend.getFileDiff(top.id, moved, null);
    scenario.roundDiffs = { [top.id]: { [moved]: { ...diff, path: moved } } };
    render(App, { backend: new FakeBackend({ latencyMs: 0, scenario }) });
    await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBe(2));
    // The unchanged file offers nothing to compare.
    await user.click(screen.getAllByTestId('file-row').find((r) => r.dataset.path === 'src/api/client.ts')!);
    await waitFor(() => expect(screen.getByTestId('diff-path')).toHaveTextContent('src/api/client.ts'));
    expect(screen.queryByTestId('since-round-button')).toBeNull();
    await user.click(screen.getAllByTestId('file-row').find((r) => r.dataset.path === moved)!);
    const button = await screen.findByTestId('since-round-button');
    expect(button).toHaveTextContent('Show only what changed since round 1');
    await user.click(button);
    const since = await screen.findByTestId('round-diff');
    expect(since).toHaveTextContent("Changes since round 1: the previous round's proposal (−) → this one (+).");
    await waitFor(() => expect(within(since).getAllByTestId('diff-line').length).toBeGreaterThan(0));
    await user.click(screen.getByTestId('since-round-button'));
    expect(screen.queryByTestId('round-diff')).toBeNull();
  });
});
