// No dead ends: the tool runner closes on a preview and shows it; runs, re-runs and scripts
// show their progress and can be cancelled (nothing pushed); a panel whose load failed
// says so and retries.
import { describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from './App.svelte';
import { FakeBackend } from './test/fakeBackend';
import { reviewScenario } from './test/scenarios';
import { BackendError, type ScriptStep, type ToolProgress, type ToolRunOutcome } from './ipc/backend';

async function setup() {
  const backend = new FakeBackend({ latencyMs: 0, scenario: reviewScenario() });
  const user = userEvent.setup();
  render(App, { backend });
  await waitFor(() => expect(screen.getAllByTestId('queue-card').length).toBe(4));
  await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBeGreaterThan(0));
  return { backend, user };
}

const cardIds = () => screen.getAllByTestId('queue-card').map((c) => c.dataset.actionId);
const selectedId = () => screen.getAllByTestId('queue-card').find((c) => c.getAttribute('aria-current') === 'true')?.dataset.actionId;

async function openToolDialog(user: ReturnType<typeof userEvent.setup>) {
  await user.click(screen.getByTestId('run-tool-button'));
  const dialog = await screen.findByTestId('run-tool-dialog');
  await waitFor(() => expect(within(dialog).getByTestId('tool-select')).toHaveValue('ast_edit'));
  await user.type(within(within(dialog).getByTestId('field-ops.0.pat')).getByRole('textbox'), 'console.warn($A)');
  return dialog;
}

describe('the tool runner', () => {
  it('closes on a successful preview and selects the new card', async () => {
    const { backend, user } = await setup();
    const run = vi.spyOn(backend, 'runTool');
    await openToolDialog(user);
    await user.click(screen.getByTestId('tool-run'));
    await waitFor(() => expect(screen.queryByTestId('run-tool-dialog')).toBeNull());
    const out = await run.mock.results[0]!.value;
    const id = (out.details as { action_id: string }).action_id;
    expect(cardIds()[0]).toBe(id);
    expect(selectedId()).toBe(id);
    expect(screen.getByTestId('result-banner')).toHaveTextContent('This is a preview');
    expect(screen.queryByTestId('new-top-notice'), 'the person asked for it: no notice').toBeNull();
  });

  it('closes and selects the new top when the outcome does not name the action it pushed', async () => {
    const { backend, user } = await setup();
    const original = backend.runTool.bind(backend);
    vi.spyOn(backend, 'runTool').mockImplementation(async (name, params) => ({ ...(await original(name, params)), details: { files: 2 } }));
    const before = cardIds();
    await openToolDialog(user);
    await user.click(screen.getByTestId('tool-run'));
    await waitFor(() => expect(screen.queryByTestId('run-tool-dialog')).toBeNull());
    const top = cardIds()[0]!;
    expect(before).not.toContain(top);
    expect(selectedId()).toBe(top);
  });

  it('shows the progress of a long run and Cancel stops it: nothing pushed, the dialog stays usable', async () => {
    const { backend, user } = await setup();
    backend.holdRuns = true;
    const cancel = vi.spyOn(backend, 'cancelToolRun');
    const dialog = await openToolDialog(user);
    await user.click(within(dialog).getByTestId('tool-run'));
    await waitFor(() => expect(within(dialog).getByTestId('tool-progress')).toHaveTextContent('Building preview — 4/4'));
    expect(within(dialog).getByRole('progressbar')).toHaveAttribute('value', '4');
    expect(backend.runHeld).toBe(true);

    expect(within(dialog).getByTestId('cancel-run'), 'the focus waits on Cancel while Run is disabled').toHaveFocus();
    await user.click(within(dialog).getByTestId('cancel-run'));
    expect(cancel).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(within(dialog).getByTestId('tool-run'), 'then goes back to Run').toHaveFocus());
    await waitFor(() => expect(within(dialog).getByTestId('tool-cancelled')).toHaveTextContent('Cancelled: nothing was pushed.'));
    expect(within(dialog).queryByTestId('tool-progress')).toBeNull();
    expect(within(dialog).queryByTestId('tool-error')).toBeNull();
    expect(cardIds()).toHaveLength(4);
    // Still usable: the form kept its values and runs again.
    expect(within(within(dialog).getByTestId('field-ops.0.pat')).getByRole('textbox')).toHaveValue('console.warn($A)');
    backend.releaseRuns();
    await user.click(within(dialog).getByTestId('tool-run'));
    await waitFor(() => expect(screen.queryByTestId('run-tool-dialog')).toBeNull());
    expect(cardIds()).toHaveLength(5);
  });

  it('a cancelled run that ends as an error outcome (the tool\'s own "Cancelled: …") also says nothing was pushed', async () => {
    const { backend, user } = await setup();
    let answer!: (o: ToolRunOutcome) => void;
    vi.spyOn(backend, 'runTool').mockImplementation(() => new Promise((r) => (answer = r)));
    vi.spyOn(backend, 'cancelToolRun').mockImplementation(async () => {
      answer({ callId: 'call-9', isError: true, text: 'Cancelled: tool call call-9 was cancelled; nothing was changed', details: null });
    });
    const dialog = await openToolDialog(user);
    await user.click(within(dialog).getByTestId('tool-run'));
    await user.click(within(dialog).getByTestId('cancel-run'));
    await waitFor(() => expect(within(dialog).getByTestId('tool-cancelled')).toHaveTextContent('Cancelled: nothing was pushed.'));
    expect(within(dialog).getByTestId('tool-result')).toHaveTextContent('tool call call-9 was cancelled');
    expect(cardIds()).toHaveLength(4);
  });

  it('the progress of a script is its own (lines done), not its steps\' tool progress', async () => {
    const backend = new FakeBackend({ latencyMs: 0, scenario: reviewScenario() });
    let emit: (e: ToolProgress) => void = () => {};
    vi.spyOn(backend, 'onToolProgress').mockImplementation(async (h) => { emit = h; return () => {}; });
    let finish!: (s: ScriptStep[]) => void;
    vi.spyOn(backend, 'runScript').mockImplementation(() => new Promise((r) => (finish = r)));
    const user = userEvent.setup();
    render(App, { backend });
    await waitFor(() => expect(screen.getAllByTestId('queue-card').length).toBe(4));
    await user.click(screen.getByTestId('run-script-button'));
    const dialog = await screen.findByTestId('run-script-dialog');
    await user.click(within(dialog).getByTestId('script-run'));
    emit({ callId: 'script', done: 1, total: 3, message: 'line 4' });
    await waitFor(() => expect(within(dialog).getByTestId('script-progress')).toHaveTextContent('line 4 — 1/3'));
    emit({ callId: 'call-12', done: 40, total: 90, message: 'Scanning files' });
    emit({ callId: 'script', done: 2, total: 3, message: 'line 6' });
    await waitFor(() => expect(within(dialog).getByTestId('script-progress')).toHaveTextContent('line 6 — 2/3'));
    expect(within(dialog).getByTestId('script-progress')).not.toHaveTextContent('Scanning files');
    finish([]);
    await waitFor(() => expect(within(dialog).queryByTestId('script-progress')).toBeNull());
  });

  it('re-running a stale preview shows its progress and can be cancelled', async () => {
    const { backend, user } = await setup();
    await backend.resolveAction('discard', 'not needed', cardIds()[0]!);
    await waitFor(() => expect(screen.getByTestId('rerun-button')).toBeEnabled());
    backend.holdRuns = true;
    await user.click(screen.getByTestId('rerun-button'));
    await waitFor(() => expect(screen.getByTestId('rerun-progress')).toHaveTextContent('Recomputing the preview — 1/2'));
    await user.click(screen.getByTestId('cancel-run'));
    await waitFor(() => expect(screen.getByTestId('result-banner')).toHaveTextContent('Cancelled: nothing was pushed.'));
    expect(screen.queryByTestId('rerun-progress')).toBeNull();
    expect(screen.getByTestId('stale-box'), 'still stale: nothing was recomputed').toBeInTheDocument();
    backend.releaseRuns();
    await user.click(screen.getByTestId('rerun-button'));
    await waitFor(() => expect(screen.queryByTestId('stale-box')).toBeNull());
  });

  it('a script run shows its progress and can be cancelled', async () => {
    const { backend, user } = await setup();
    backend.holdRuns = true;
    await user.click(screen.getByTestId('run-script-button'));
    const dialog = await screen.findByTestId('run-script-dialog');
    await user.click(within(dialog).getByTestId('script-run'));
    await waitFor(() => expect(within(dialog).getByTestId('script-progress')).toHaveTextContent('line 1 — 0/'));
    await user.click(within(dialog).getByTestId('cancel-run'));
    await waitFor(() => expect(within(dialog).getByTestId('script-error')).toHaveTextContent('Cancelled before line 1: the 0 step(s) before it ran.'));
    expect(within(dialog).queryByTestId('script-progress')).toBeNull();
    expect(cardIds()).toHaveLength(4);
  });
});

describe('a failed load says so and retries', () => {
  it('the queue', async () => {
    const backend = new FakeBackend({ latencyMs: 0, scenario: reviewScenario() });
    vi.spyOn(backend, 'listActions').mockRejectedValueOnce(new BackendError('internal', 'the shell is restarting'));
    const user = userEvent.setup();
    render(App, { backend });
    const box = await screen.findByTestId('queue-error');
    expect(box).toHaveTextContent('Could not load the queue. the shell is restarting');
    expect(screen.queryByTestId('queue-empty'), 'not "Nothing to review"').toBeNull();
    await user.click(within(box).getByTestId('queue-error-retry'));
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(4));
    expect(screen.queryByTestId('queue-error')).toBeNull();
  });

  it('the file list', async () => {
    const { backend, user } = await setup();
    vi.spyOn(backend, 'getActionFiles').mockRejectedValueOnce(new BackendError('io', 'disk on fire'));
    await user.click(screen.getAllByTestId('queue-card')[2]!);
    const box = await screen.findByTestId('files-error');
    expect(box).toHaveTextContent('Could not load the file list. disk on fire');
    await user.click(within(box).getByTestId('files-error-retry'));
    await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBeGreaterThan(0));
    expect(screen.queryByTestId('files-error')).toBeNull();
  });

  it('the diff', async () => {
    const { backend, user } = await setup();
    vi.spyOn(backend, 'getFileDiff').mockRejectedValueOnce(new BackendError('io', 'read timed out'));
    await user.click(screen.getAllByTestId('file-row')[1]!);
    const box = await screen.findByTestId('diff-error');
    expect(box).toHaveTextContent('Could not load the diff of src/util/format.ts. read timed out');
    await user.click(within(box).getByTestId('diff-error-retry'));
    await waitFor(() => expect(screen.getByTestId('diff-path')).toHaveTextContent('src/util/format.ts'));
    expect(screen.queryByTestId('diff-error')).toBeNull();
  });

  it('the rename table', async () => {
    const { backend, user } = await setup();
    vi.spyOn(backend, 'getActionRenames').mockRejectedValueOnce(new BackendError('io', 'journal locked'));
    await user.click(screen.getAllByTestId('queue-card')[1]!);
    const box = await screen.findByTestId('files-error');
    expect(box).toHaveTextContent('Could not load the rename table. journal locked');
    await user.click(within(box).getByTestId('files-error-retry'));
    await waitFor(() => expect(screen.getAllByTestId('rename-row').length).toBeGreaterThan(0));
  });

  it('the history', async () => {
    const { backend, user } = await setup();
    vi.spyOn(backend, 'searchHistory').mockRejectedValueOnce(new BackendError('io', 'database is locked'));
    await user.click(screen.getByTestId('history-button'));
    const banner = await screen.findByTestId('history-error-banner');
    expect(banner).toHaveTextContent('Could not read the history: database is locked');
    expect(screen.queryByTestId('history-empty'), 'not "No decisions yet"').toBeNull();
    await user.click(within(banner).getByTestId('history-retry'));
    await waitFor(() => expect(screen.getAllByTestId('history-entry')).toHaveLength(3));
    expect(screen.queryByTestId('history-error-banner')).toBeNull();
  });

  it('what changed since the preview', async () => {
    const { backend, user } = await setup();
    vi.spyOn(backend, 'getSincePreview').mockRejectedValueOnce(new BackendError('io', 'file vanished'));
    await user.click(screen.getAllByTestId('queue-card')[1]!);
    await waitFor(() => expect(screen.getByTestId('since-preview-error')).toHaveTextContent('Could not load what changed since the preview: file vanished'));
    await user.click(screen.getByTestId('since-preview-retry'));
    await waitFor(() => expect(screen.getByTestId('since-file')).toHaveTextContent('assets/img_001.PNG — content changed'));
    expect(screen.queryByTestId('since-preview-error')).toBeNull();
  });
});
