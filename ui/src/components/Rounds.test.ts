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
    top.round = { number: 2, firstLabel: 'AST Edit: 3 replacements in 2 files', previousId: 'pa-earlier', unchanged: ['src/api/client.ts'], earlier: [] };
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
    top.round = { number: 2, firstLabel: 'AST Edit: 3 replacements in 2 files', previousId: 'pa-earlier', unchanged: ['src/api/client.ts'], earlier: [] };
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

describe('the next round: earlier comments and viewed marks', () => {
  const moved = 'src/util/format.ts';
  function roundTwo() {
    const scenario = reviewScenario();
    const top = scenario.queue.actions[0]!;
    const earlier = (id: string, line: number, text: string, now: number | null, changed: boolean) => ({
      round: 1,
      comment: { id, path: moved, side: 'new' as const, startLine: line, endLine: line, quote: 'logger.debug(...)', text, replacementId: null, rendered: '' },
      nowStartLine: now, nowEndLine: now, changed,
    });
    top.round = {
      number: 2, firstLabel: 'AST Edit: 3 replacements in 2 files', previousId: 'pa-earlier', unchanged: ['src/api/client.ts'],
      earlier: [earlier('c1', 3, 'use the logger', 3, true), earlier('c2', 1, 'keep the name', 1, false), earlier('c3', 9, 'this helper goes', null, true)],
    };
    return { scenario, top };
  }

  it('says one earlier comment in the singular, with whether the agent changed its line', async () => {
    for (const changed of [true, false]) {
      const { scenario, top } = roundTwo();
      top.round!.earlier = [top.round!.earlier[changed ? 0 : 1]!];
      const { unmount } = render(App, { backend: new FakeBackend({ latencyMs: 0, scenario }) });
      await waitFor(() => expect(screen.getByTestId('round-earlier')).toBeInTheDocument());
      expect(screen.getByTestId('round-earlier')).toHaveTextContent(
        `Your earlier comment is shown beside its line, which the agent ${changed ? 'changed' : 'did not change'}.`,
      );
      unmount();
    }
  });

  it('shows each earlier comment beside its line with whether the agent changed it', async () => {
    const { scenario } = roundTwo();
    const user = userEvent.setup();
    render(App, { backend: new FakeBackend({ latencyMs: 0, scenario }) });
    await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBe(2));
    expect(screen.getByTestId('round-earlier')).toHaveTextContent(
      'Your 3 earlier comments are shown beside their lines: 2 on lines the agent changed, 1 on lines it did not.',
    );
    const row = screen.getAllByTestId('file-row').find((r) => r.dataset.path === moved)!;
    expect(within(row).getByTestId('file-earlier')).toHaveTextContent('3');
    await user.click(row);
    await waitFor(() => expect(screen.getAllByTestId('earlier-comment').length).toBe(3));
    const notes = screen.getAllByTestId('earlier-comment');
    // The one whose lines are gone comes first, with its quote; the others follow their lines.
    expect(notes.map((n) => n.dataset.nowLine)).toEqual(['', '1', '3']);
    expect(within(notes[0]!).getByTestId('earlier-mark')).toHaveTextContent('those lines are gone in this round');
    expect(within(notes[1]!).getByTestId('earlier-mark')).toHaveTextContent('not changed since');
    expect(within(notes[2]!).getByTestId('earlier-mark')).toHaveTextContent('changed since');
    expect(within(notes[2]!).getByTestId('earlier-text')).toHaveTextContent('use the logger');
    // Read-only: an earlier comment has no Edit or Delete.
    expect(within(notes[2]!).queryByTestId('comment-edit')).toBeNull();
    // Placed after the row of its line (3) in the diff.
    const rows = [...screen.getByTestId('diff-view').querySelectorAll('[data-testid="diff-line"], [data-testid="earlier-comment"]')];
    const at = rows.indexOf(notes[2]!);
    expect(rows[at - 1]!.textContent).toContain("logger.debug('formatting', ms);");
  });

  it('a file marked viewed shows so in the list and the mark is kept by the backend', async () => {
    const { scenario, top } = roundTwo();
    const user = userEvent.setup();
    const backend = new FakeBackend({ latencyMs: 0, scenario });
    render(App, { backend });
    await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBe(2));
    expect(screen.getByTestId('files-viewed')).toHaveTextContent('0/2 viewed');
    await user.click(screen.getAllByTestId('file-row').find((r) => r.dataset.path === moved)!);
    const toggle = within(await screen.findByTestId('viewed-toggle')).getByRole('checkbox');
    expect(toggle).not.toBeChecked();
    await user.click(toggle);
    await waitFor(() => expect(screen.getByTestId('files-viewed')).toHaveTextContent('1/2 viewed'));
    const row = screen.getAllByTestId('file-row').find((r) => r.dataset.path === moved)!;
    expect(row.dataset.viewed).toBe('true');
    expect(within(row).getByTestId('file-viewed')).toHaveTextContent('viewed');
    const kept = await backend.listActions();
    expect(kept.actions.find((a) => a.id === top.id)!.viewed).toEqual([moved]);
    await user.click(within(screen.getByTestId('viewed-toggle')).getByRole('checkbox'));
    await waitFor(() => expect(screen.getByTestId('files-viewed')).toHaveTextContent('0/2 viewed'));
    expect((await backend.listActions()).actions.find((a) => a.id === top.id)!.viewed).toEqual([]);
  });
});
