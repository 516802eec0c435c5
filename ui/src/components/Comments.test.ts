// Line comments and "Request changes" in the app (fake backend): a line number starts a
// comment, Shift+click stretches it to a range, comments show after their lines and in the
// decision panel (what the agent will read), can be edited and deleted, and go with the
// decision; Request changes sends them as a discard.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import { FakeBackend } from '../test/fakeBackend';
import { reviewScenario } from '../test/scenarios';
import type { FileReplacements } from '../ipc/backend';
import REPLACEMENTS from '../../../crates/protocol/fixtures/file_replacements.json';

afterEach(() => cleanup());

const FIRST = 'src/api/client.ts';
const FORMAT = 'src/util/format.ts';

async function setup() {
  const scenario = reviewScenario();
  const top = scenario.queue.actions[0]!;
  scenario.replacements = { [top.id]: { [FIRST]: { ...(REPLACEMENTS as FileReplacements), path: FIRST } } };
  const backend = new FakeBackend({ latencyMs: 0, scenario });
  const user = userEvent.setup();
  render(App, { backend });
  await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBe(2));
  await user.click(screen.getAllByTestId('file-row').find((r) => r.dataset.path === FORMAT)!);
  await waitFor(() => expect(screen.getByTestId('diff-path')).toHaveTextContent(FORMAT));
  return { backend, user, top };
}

const lineButton = (side: 'old' | 'new', line: number) =>
  screen.getAllByTestId('comment-line').find((b) => b.dataset.side === side && b.dataset.line === String(line))!;

describe('line comments', () => {
  it('a line number starts a comment; saved, it shows after its line and in the decision panel', async () => {
    const { backend, user, top } = await setup();
    await user.click(lineButton('new', 3));
    const input = await screen.findByTestId('comment-input');
    await user.type(input, 'use the shared logger');
    await user.click(screen.getByTestId('comment-save'));
    const comment = await screen.findByTestId('comment');
    expect(comment).toHaveAttribute('data-side', 'new');
    expect(comment).toHaveAttribute('data-start', '3');
    expect(within(comment).getByTestId('comment-text')).toHaveTextContent('use the shared logger');
    expect(screen.queryByTestId('comment-composer')).toBeNull();
    // Shown right after the line it is on.
    const rows = [...screen.getByTestId('diff-table').children];
    const at = rows.indexOf(comment.closest('[role="row"]')!);
    expect(rows[at - 1]).toHaveAttribute('data-kind', 'added');
    expect(screen.getByTestId('review-summary')).toHaveTextContent('1 comment goes with your decision');
    expect(screen.getAllByTestId('review-line')[0]!.textContent).toBe(`${FORMAT}:3: "  logger.debug('formatting', ms);" — use the shared logger`);
    expect(screen.getByTestId('request-changes-button')).toHaveTextContent('Request changes (1)');
    expect(backend.commentCalls).toEqual(['add c1']);
    expect(top.id).toBeTruthy();
  });

  it('Shift+click stretches the comment being written to a range of the same side', async () => {
    const { user } = await setup();
    await user.click(lineButton('old', 1));
    await user.keyboard('{Shift>}');
    await user.click(lineButton('old', 3));
    await user.keyboard('{/Shift}');
    expect(screen.getByTestId('comment-composer')).toHaveTextContent('Comment on the old side, lines 1–3');
    await user.type(screen.getByTestId('comment-input'), 'keep the old log');
    await user.click(screen.getByTestId('comment-save'));
    const comment = await screen.findByTestId('comment');
    expect(comment).toHaveAttribute('data-start', '1');
    expect(comment).toHaveAttribute('data-end', '3');
    expect(comment).toHaveAttribute('data-side', 'old');
  });

  it('a comment can be edited and deleted until the decision', async () => {
    const { backend, user } = await setup();
    await user.click(lineButton('new', 2));
    await user.type(await screen.findByTestId('comment-input'), 'first words');
    await user.click(screen.getByTestId('comment-save'));
    await user.click(await screen.findByTestId('comment-edit'));
    const input = screen.getByTestId('comment-input');
    expect(input).toHaveValue('first words');
    await user.clear(input);
    await user.type(input, 'better words');
    await user.click(screen.getByTestId('comment-save'));
    await waitFor(() => expect(screen.getByTestId('comment-text')).toHaveTextContent('better words'));
    await user.click(screen.getByTestId('comment-delete'));
    await waitFor(() => expect(screen.queryByTestId('comment')).toBeNull());
    expect(screen.queryByTestId('review-summary')).toBeNull();
    expect(backend.commentCalls).toEqual(['add c1', 'edit c1', 'delete c1']);
  });

  it('a blank comment is not sent; Escape cancels', async () => {
    const { backend, user } = await setup();
    await user.click(lineButton('new', 1));
    await user.click(await screen.findByTestId('comment-save'));
    expect(screen.getByTestId('comment-error')).toHaveTextContent('Write the comment first.');
    screen.getByTestId('comment-input').focus();
    await user.keyboard('{Escape}');
    expect(screen.queryByTestId('comment-composer')).toBeNull();
    expect(backend.commentCalls).toEqual([]);
  });

  it('a replacement of the ast_edit list takes a comment of its own', async () => {
    const { backend, user } = await setup();
    await user.click(screen.getAllByTestId('file-row').find((r) => r.dataset.path === FIRST)!);
    await waitFor(() => expect(screen.getAllByTestId('replacement-row')).toHaveLength(2));
    const second = screen.getAllByTestId('replacement-row').find((r) => r.dataset.id === '2')!;
    await user.click(within(second).getByTestId('replacement-comment'));
    expect(screen.getByTestId('comment-composer')).toHaveTextContent(`Comment on replacement 2 of ${FIRST}`);
    await user.type(screen.getByTestId('comment-input'), 'info, not debug');
    await user.click(screen.getByTestId('comment-save'));
    await waitFor(() => expect(within(second).getByTestId('replacement-comment')).toHaveTextContent('1'));
    expect(screen.getAllByTestId('review-line')[0]).toHaveTextContent('(replacement 2)');
    expect(backend.commentCalls).toEqual(['add c1']);
  });
});

describe('Request changes', () => {
  it('discards with the review: the result says the comments, the history says changes were requested', async () => {
    const { user } = await setup();
    await user.click(lineButton('new', 3));
    await user.type(await screen.findByTestId('comment-input'), 'not here');
    await user.click(screen.getByTestId('comment-save'));
    await screen.findByTestId('comment');
    await user.type(screen.getByTestId('reason-input'), 'one more pass');
    await user.click(screen.getByTestId('request-changes-button'));
    const banner = await screen.findByTestId('result-banner');
    expect(banner).toHaveTextContent('Discarded: AST Edit: 3 replacements in 2 files. Reason: one more pass');
    expect(banner).toHaveTextContent('Changes requested: 1 comment, in file order:');
    expect(banner).toHaveTextContent(`${FORMAT}:3:`);
    await user.click(screen.getByTestId('history-button'));
    await waitFor(() => expect(screen.getAllByTestId('history-header')[0]).toHaveTextContent('Changes requested:'));
    expect(screen.getAllByTestId('history-comments')[0]).toHaveTextContent('1 comment');
  });

  it('needs a reason, like Apply and Discard', async () => {
    const { backend } = await setup();
    expect(screen.getByTestId('request-changes-button')).toBeDisabled();
    expect(backend.commentCalls).toEqual([]);
  });
});
