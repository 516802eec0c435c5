import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from './App.svelte';
import { FakeBackend } from './test/fakeBackend';
import { reviewScenario } from './test/scenarios';
import type { QueueChanged, ToolProgress, ToolRunOutcome } from './ipc/backend';

afterEach(() => cleanup());

async function setup(options: ConstructorParameters<typeof FakeBackend>[0] = {}) {
  const backend = new FakeBackend({ latencyMs: 0, scenario: reviewScenario(), ...options });
  const user = userEvent.setup();
  render(App, { backend });
  await waitFor(() => expect(screen.getAllByTestId('queue-card').length).toBe(4));
  await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBeGreaterThan(0));
  return { backend, user };
}

describe('queue', () => {
  it('renders the stack top first with label badges, sources and statuses', async () => {
    await setup();
    const cards = screen.getAllByTestId('queue-card');
    expect(cards[0]!.dataset.top).toBe('true');
    expect(within(cards[0]!).getByTestId('next-badge')).toBeInTheDocument();
    expect(within(cards[0]!).getByTestId('label-badge')).toHaveTextContent('AST Edit');
    expect(within(cards[0]!).getByTestId('queue-card-label')).toHaveTextContent('3 replacements in 2 files');
    expect(within(cards[0]!).getByTestId('source-badge')).toHaveTextContent('ast_edit');
    expect(within(cards[1]!).getByTestId('status-badge')).toHaveTextContent('stale');
    expect(within(cards[2]!).getByTestId('queue-card-label')).toHaveTextContent('5000 replacements in 1000 files');
    expect(within(cards[3]!).getByTestId('status-badge')).toHaveTextContent('failed');
    for (const c of cards.slice(1)) expect(within(c).queryByTestId('next-badge')).toBeNull();
  });

  it('virtualises the 1,000-file action', async () => {
    const { user } = await setup();
    await user.click(screen.getAllByTestId('queue-card')[2]!);
    await waitFor(() => expect(screen.getByText('1000', { selector: 'strong' })).toBeInTheDocument());
    const rows = screen.getAllByTestId('file-row');
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.length).toBeLessThan(100);
  });

  it('filters the 1,000-file list', async () => {
    const { user } = await setup();
    await user.click(screen.getAllByTestId('queue-card')[2]!);
    await waitFor(() => expect(screen.getByText('1000', { selector: 'strong' })).toBeInTheDocument());
    const first = screen.getAllByTestId('file-row')[0]!.dataset.path!;
    await user.type(screen.getByTestId('file-filter'), first);
    await waitFor(() => expect(screen.getAllByTestId('file-row').map((r) => r.dataset.path)).toEqual([first]));
    await user.clear(screen.getByTestId('file-filter'));
    await user.type(screen.getByTestId('file-filter'), 'no such file');
    expect(screen.queryAllByTestId('file-row')).toHaveLength(0);
    expect(screen.getByText('No file matches the filter.')).toBeInTheDocument();
  });

  it('j keeps the selected row of the 1,000-file list rendered and scrolled into view', async () => {
    // jsdom has no layout and no Element.scrollTo: emulate both so the
    // virtualizer can scroll (scrollHeight = the height of the list's spacer).
    const scrollHeight = Object.getOwnPropertyDescriptor(Element.prototype, 'scrollHeight')!;
    Object.defineProperty(Element.prototype, 'scrollHeight', {
      configurable: true,
      get(this: Element) {
        return parseFloat((this.firstElementChild as HTMLElement | null)?.style.height ?? '') || 0;
      },
    });
    const scrolled: number[] = [];
    Element.prototype.scrollTo = function (this: Element, arg?: ScrollToOptions | number) {
      const top = typeof arg === 'object' ? (arg.top ?? 0) : 0;
      scrolled.push(top);
      this.scrollTop = top;
      this.dispatchEvent(new Event('scroll'));
    } as Element['scrollTo'];
    try {
      const { user } = await setup();
      await user.click(screen.getAllByTestId('queue-card')[2]!);
      await waitFor(() => expect(screen.getByText('1000', { selector: 'strong' })).toBeInTheDocument());
      await waitFor(() => expect(screen.getAllByTestId('file-row')[0]).toHaveAttribute('aria-selected', 'true'));
      (document.activeElement as HTMLElement | null)?.blur();
      await user.keyboard('j'.repeat(60));
      await waitFor(() => {
        const row = screen.getAllByTestId('file-row').find((r) => r.getAttribute('aria-selected') === 'true');
        expect(row, 'the 61st file is selected and its row is in the DOM').toBeDefined();
        expect(screen.getByTestId('diff-path')).toHaveTextContent(row!.dataset.path!);
      });
      expect(Math.max(...scrolled), 'the list scrolled down past the first window').toBeGreaterThan(0);
      expect(screen.getAllByTestId('file-row').length).toBeLessThan(100);
    } finally {
      delete (Element.prototype as Partial<Element>).scrollTo;
      Object.defineProperty(Element.prototype, 'scrollHeight', scrollHeight);
    }
  });
});

describe('decision panel', () => {
  it('enables Apply and Discard only on the top action', async () => {
    const { user } = await setup();
    await user.type(screen.getByTestId('reason-input'), 'fine');
    expect(screen.getByTestId('apply-button')).toBeEnabled();
    expect(screen.getByTestId('discard-button')).toBeEnabled();
    await user.click(screen.getAllByTestId('queue-card')[2]!);
    expect(screen.getByTestId('not-top-message')).toHaveTextContent('Only the top action can be resolved (LIFO)');
    expect(screen.getByTestId('apply-button')).toBeDisabled();
    expect(screen.getByTestId('discard-button')).toBeDisabled();
  });

  it('requires a non-blank reason and fills it from the chips', async () => {
    const { user } = await setup();
    expect(screen.getByTestId('apply-button')).toBeDisabled();
    expect(screen.getByTestId('discard-button')).toBeDisabled();
    expect(screen.getByTestId('reason-required')).toHaveTextContent('A reason is required');
    await user.type(screen.getByTestId('reason-input'), '   ');
    expect(screen.getByTestId('apply-button')).toBeDisabled();
    await user.click(screen.getByRole('button', { name: 'Wrong scope' }));
    expect(screen.getByTestId('reason-input')).toHaveValue('Wrong scope');
    expect(screen.getByTestId('apply-button')).toBeEnabled();
    expect(screen.getByTestId('reason-required')).not.toHaveTextContent('A reason is required');
  });

  it('applies with expectedId = the id on screen, shows the result and advances the queue', async () => {
    const { backend, user } = await setup();
    const spy = vi.spyOn(backend, 'resolveAction');
    const topId = screen.getAllByTestId('queue-card')[0]!.dataset.actionId!;
    await user.click(screen.getByRole('button', { name: 'Looks correct' }));
    await user.click(screen.getByTestId('apply-button'));
    expect(spy).toHaveBeenCalledWith('apply', 'Looks correct', topId);
    await waitFor(() => expect(screen.getByTestId('result-banner')).toHaveTextContent('Applied: AST Edit: 3 replacements in 2 files.'));
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(3));
    expect(screen.getAllByTestId('queue-card')[0]!.dataset.actionId).not.toBe(topId);
    expect(screen.getByTestId('reason-input')).toHaveValue('');
  });

  it('is busy while resolving and never submits twice', async () => {
    const { backend, user } = await setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const original = backend.resolveAction.bind(backend);
    const spy = vi.spyOn(backend, 'resolveAction').mockImplementation(async (...args) => {
      await gate;
      return original(...args);
    });
    await user.type(screen.getByTestId('reason-input'), 'ok');
    const apply = screen.getByTestId('apply-button');
    await fireEvent.click(apply);
    await fireEvent.click(apply);
    await fireEvent.keyDown(window, { key: 'a' });
    expect(apply).toBeDisabled();
    expect(screen.getByTestId('discard-button')).toBeDisabled();
    expect(apply).toHaveAttribute('aria-busy', 'true');
    release();
    await waitFor(() => expect(screen.getByTestId('result-banner')).toBeInTheDocument());
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('shows the stale files with Discard and Run the preview again', async () => {
    const { user } = await setup();
    await user.click(screen.getByRole('button', { name: 'Not needed' }));
    await user.click(screen.getByTestId('discard-button'));
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(3));
    await waitFor(() => expect(screen.getByTestId('stale-files')).toHaveTextContent('assets/img_001.PNG'));
    await waitFor(() => expect(screen.getByTestId('since-file')).toHaveTextContent('assets/img_001.PNG — content changed'));
    expect(screen.getByTestId('since-summary')).toHaveTextContent('Content changed since the preview');
    expect(screen.getByTestId('rerun-button')).toBeEnabled();
    expect(screen.getAllByTestId('rename-row').length).toBeGreaterThan(0);
    await user.click(screen.getByTestId('rerun-button'));
    await waitFor(() => expect(screen.queryByTestId('stale-files')).toBeNull());
    expect(screen.getByTestId('result-banner')).toHaveTextContent('Preview recomputed');
  });

  it('shows the engine message when the resolve is refused', async () => {
    const { backend, user } = await setup();
    vi.spyOn(backend, 'resolveAction').mockRejectedValueOnce({ code: 'idMismatch', message: 'The top action is act-9, not act-4.' });
    await user.type(screen.getByTestId('reason-input'), 'ok');
    await user.click(screen.getByTestId('discard-button'));
    await waitFor(() => expect(screen.getByTestId('resolve-error')).toHaveTextContent('The top action is act-9, not act-4.'));
  });
});

describe('keyboard shortcuts', () => {
  it('are ignored while typing in the reason', async () => {
    const { backend, user } = await setup();
    const spy = vi.spyOn(backend, 'resolveAction');
    const reason = screen.getByTestId('reason-input');
    await user.click(reason);
    await user.keyboard('adjkm?');
    expect(reason).toHaveValue('adjkm?');
    expect(spy).not.toHaveBeenCalled();
    expect(screen.getByTestId('diff-view').dataset.mode).toBe('unified');
    expect(screen.queryByTestId('help-dialog')).toBeNull();
  });

  it('m switches the diff mode, j/k move between files, ? opens help, Escape closes it', async () => {
    const { user } = await setup();
    (document.activeElement as HTMLElement | null)?.blur();
    await user.keyboard('m');
    expect(screen.getByTestId('diff-view').dataset.mode).toBe('split');
    await user.keyboard('j');
    await waitFor(() => expect(screen.getByTestId('diff-path')).toHaveTextContent('src/util/format.ts'));
    await user.keyboard('k');
    await waitFor(() => expect(screen.getByTestId('diff-path')).toHaveTextContent('src/api/client.ts'));
    await user.keyboard('?');
    expect(screen.getByTestId('help-dialog')).toBeInTheDocument();
    await user.keyboard('{Escape}');
    expect(screen.queryByTestId('help-dialog')).toBeNull();
  });

  it('a focuses the empty reason instead of applying', async () => {
    const { backend, user } = await setup();
    const spy = vi.spyOn(backend, 'resolveAction');
    (document.activeElement as HTMLElement | null)?.blur();
    await user.keyboard('a');
    expect(screen.getByTestId('reason-input')).toHaveFocus();
    expect(screen.getByTestId('reason-input')).toHaveValue('');
    expect(spy).not.toHaveBeenCalled();
  });
});

describe('history and tools', () => {
  it('lists resolved actions newest first', async () => {
    const { user } = await setup();
    await user.click(screen.getByRole('button', { name: 'Looks correct' }));
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(screen.getByTestId('result-banner')).toBeInTheDocument());
    await user.click(screen.getByTestId('history-button'));
    const headers = screen.getAllByTestId('history-header').map((h) => h.textContent?.replace(/\s+/g, ' ').trim());
    expect(headers[0]).toBe('Accept: 3 replacements in 2 files [AST Edit]');
    expect(headers.slice(1), 'then the earlier entries (history.json)').toEqual([
      'Accept: 3 replacements in 2 files [AST Edit]', 'Failed: Changelog entry for 2.4.0 [custom_tool]', 'Discard: 2 files [Batch rename]',
    ]);
  });

  it('runs a tool from the generated form and shows the result', async () => {
    const { user } = await setup();
    await user.click(screen.getByTestId('run-tool-button'));
    const dialog = await screen.findByTestId('run-tool-dialog');
    await waitFor(() => expect(within(dialog).getByTestId('tool-select')).toHaveValue('ast_edit'));
    await user.type(within(within(dialog).getByTestId('field-ops.0.pat')).getByRole('textbox'), 'console.warn($A)');
    await user.click(within(dialog).getByTestId('tool-run'));
    // The dialog closes on a preview; the result is the window's banner.
    await waitFor(() => expect(screen.queryByTestId('run-tool-dialog')).toBeNull());
    expect(screen.getByTestId('result-banner')).toHaveTextContent('This is a preview');
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(5));
  });

  it('shows only the progress events of the run in flight and clears them when it ends', async () => {
    const backend = new FakeBackend({ latencyMs: 0, scenario: reviewScenario() });
    let emit: (e: ToolProgress) => void = () => {};
    vi.spyOn(backend, 'onToolProgress').mockImplementation(async (h) => {
      emit = h;
      return () => {};
    });
    let finish: (o: ToolRunOutcome) => void = () => {};
    vi.spyOn(backend, 'runTool').mockImplementation(() => new Promise((r) => (finish = r)));
    const user = userEvent.setup();
    render(App, { backend });
    await waitFor(() => expect(screen.getAllByTestId('queue-card').length).toBe(4));

    emit({ callId: 'call-old', done: 1, total: 2, message: 'Stray event from another run' });
    await user.click(screen.getByTestId('run-tool-button'));
    const dialog = await screen.findByTestId('run-tool-dialog');
    await waitFor(() => expect(within(dialog).getByTestId('tool-select')).toHaveValue('ast_edit'));
    await user.type(within(within(dialog).getByTestId('field-ops.0.pat')).getByRole('textbox'), 'console.warn($A)');
    await user.click(within(dialog).getByTestId('tool-run'));
    expect(within(dialog).getByTestId('tool-progress'), 'an event from before the run is not shown').toHaveTextContent('Running…');

    emit({ callId: 'call-7', done: 2, total: 4, message: 'Scanning batch 2 of 3' });
    await waitFor(() => expect(within(dialog).getByTestId('tool-progress')).toHaveTextContent('Scanning batch 2 of 3 — 2/4'));

    finish({ callId: 'call-7', isError: false, text: 'Done. This is a preview.', details: null });
    await waitFor(() => expect(within(dialog).getByTestId('tool-result')).toHaveTextContent('Done.'));
    await waitFor(() => expect(within(dialog).queryByTestId('tool-progress'), 'progress is gone when the run ends').toBeNull());
    emit({ callId: 'call-8', done: 1, total: 4, message: 'Late event after the run' });

    await user.click(within(dialog).getByTestId('tool-run'));
    expect(within(dialog).getByTestId('tool-progress'), 'the last run\'s progress was cleared').toHaveTextContent('Running…');
    emit({ callId: 'call-7', done: 4, total: 4, message: 'Late event of the last run' });
    await new Promise((r) => setTimeout(r, 0));
    expect(within(dialog).getByTestId('tool-progress'), 'a late event of the finished run is ignored').toHaveTextContent('Running…');
    emit({ callId: 'call-9', done: 1, total: 4, message: 'Collecting files' });
    await waitFor(() => expect(within(dialog).getByTestId('tool-progress')).toHaveTextContent('Collecting files — 1/4'));
    finish({ callId: 'call-9', isError: false, text: 'Again.', details: null });
    await waitFor(() => expect(within(dialog).getByTestId('tool-result')).toHaveTextContent('Again.'));
  });
});

describe('one Apply, one refresh', () => {
  // Counts the queue and history reads an Apply causes, from the click to the end of the
  // resolve (busy off) and one more backend round trip.
  async function applyAndCount(backend: FakeBackend, user: ReturnType<typeof userEvent.setup>) {
    const listActions = vi.spyOn(backend, 'listActions');
    const listHistory = vi.spyOn(backend, 'listHistory');
    await user.click(screen.getByRole('button', { name: 'Looks correct' }));
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(3));
    await waitFor(() => expect(screen.getByTestId('apply-button')).not.toHaveAttribute('aria-busy', 'true'));
    await backend.getSession();
    return { queue: listActions.mock.calls.length, history: listHistory.mock.calls.length };
  }

  it('reads the queue once and the history once (queue-changed arrives during the resolve)', async () => {
    const { backend, user } = await setup();
    expect(await applyAndCount(backend, user)).toEqual({ queue: 1, history: 1 });
    await user.click(screen.getByTestId('history-button'));
    expect(screen.getAllByTestId('history-header')[0]).toHaveTextContent('Accept: 3 replacements in 2 files');
  });

  it('reads them once when queue-changed arrives after the resolve returned', async () => {
    const backend = new FakeBackend({ latencyMs: 0, scenario: reviewScenario() });
    // Hold the events back and deliver them after the resolve's own refresh (as the
    // Tauri event channel may).
    const held: QueueChanged[] = [];
    let deliver: (e: QueueChanged) => void = () => {};
    const subscribe = backend.onQueueChanged.bind(backend);
    vi.spyOn(backend, 'onQueueChanged').mockImplementation(async (h) => {
      deliver = h;
      return subscribe((e) => held.push(e));
    });
    const user = userEvent.setup();
    render(App, { backend });
    await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBeGreaterThan(0));
    const counts = await applyAndCount(backend, user);
    expect(held.length, 'the apply changed the store').toBeGreaterThan(0);
    const listActions = vi.spyOn(backend, 'listActions');
    held.splice(0).forEach((e) => deliver(e));
    await backend.getSession();
    expect(counts).toEqual({ queue: 1, history: 1 });
    expect(listActions, 'a change already on screen is not read again').not.toHaveBeenCalled();
  });

  it('still reads a change that happens after the Apply', async () => {
    const { backend, user } = await setup();
    await applyAndCount(backend, user);
    const listActions = vi.spyOn(backend, 'listActions');
    await backend.runTool('ast_edit', { ops: [{ pat: 'console.warn($A)', out: 'logger.warn($A)' }] });
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(4));
    expect(listActions).toHaveBeenCalledTimes(1);
  });
});

describe('one desk, many folders', () => {
  const tabs = () => screen.queryAllByTestId('folder-tab');
  const tab = (root: string) => tabs().find((t) => t.dataset.root === root)!;

  it('opening a folder asks nothing: it opens beside the first, with its own empty stack, and the first keeps its actions', async () => {
    const { backend, user } = await setup();
    const resolve = vi.spyOn(backend, 'resolveAction');
    const first = (await backend.getSession()).workspaceRoot;
    await user.click(screen.getByTestId('open-folder-button'));
    await waitFor(() => expect(tabs()).toHaveLength(2));
    expect(screen.queryByTestId('leave-dialog'), 'nothing is left behind: no question').toBeNull();
    expect(screen.getByTestId('workspace-name')).toHaveTextContent('payments-service');
    await waitFor(() => expect(screen.queryAllByTestId('queue-card')).toHaveLength(0));
    expect(resolve).not.toHaveBeenCalled();
    expect(within(tab(first)).getByTestId('folder-pending')).toHaveTextContent('4');
    expect(within(tab('/home/demo/payments-service')).getByTestId('folder-pending')).toHaveTextContent('0');
    expect(tab('/home/demo/payments-service').dataset.active).toBe('true');
    expect(within(tab(first)).getByTestId('folder-path')).toHaveTextContent(first);
    // Back to the first folder: its stack, as it was.
    await user.click(within(tab(first)).getByTestId('folder-name'));
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(4));
    expect(tab(first).dataset.active).toBe('true');
  });

  it('a folder another process opened shows as a tab, with its count and a mark while its agent waits', async () => {
    const { backend } = await setup();
    const scenario = reviewScenario();
    scenario.queue.actions[0]!.proposal = { choice: 'apply', reason: 'tests pass', client: 'claude-code', callId: 'c-1', waiting: true };
    backend.openElsewhere('/home/demo/shop', scenario);
    await waitFor(() => expect(tabs()).toHaveLength(2));
    const shop = tab('/home/demo/shop');
    expect(within(shop).getByTestId('folder-name')).toHaveTextContent('shop');
    expect(within(shop).getByTestId('folder-pending')).toHaveTextContent('4');
    expect(within(shop).getByTestId('folder-waiting')).toBeInTheDocument();
    expect(shop.dataset.active, 'a folder opened elsewhere never takes the screen from a review').toBe('false');
    expect(screen.getAllByTestId('queue-card')).toHaveLength(4);
  });

  it('closing a folder asks about its own pending actions only; Keep closes it and decides nothing', async () => {
    const { backend, user } = await setup();
    const first = (await backend.getSession()).workspaceRoot;
    backend.openElsewhere('/home/demo/shop', reviewScenario());
    await waitFor(() => expect(tabs()).toHaveLength(2));
    const resolve = vi.spyOn(backend, 'resolveAction');
    await user.click(within(tab('/home/demo/shop')).getByTestId('folder-close'));
    const dialog = await screen.findByTestId('leave-dialog');
    expect(dialog.dataset.destination).toBe('closeFolder');
    expect(dialog).toHaveTextContent('Closing the folder shop leaves 4 pending actions in /home/demo/shop');
    expect(screen.getByTestId('leave-keep')).toHaveFocus();
    await user.click(screen.getByTestId('leave-keep'));
    await waitFor(() => expect(tabs()).toHaveLength(0));
    expect(resolve).not.toHaveBeenCalled();
    expect((await backend.listFolders()).folders.map((f) => f.root)).toEqual([first]);
    expect(screen.getAllByTestId('queue-card'), 'the folder shown is untouched').toHaveLength(4);
  });

  it('Discard all on closing a folder discards that folder\'s actions only, with the reason verbatim', async () => {
    const { backend, user } = await setup();
    backend.openElsewhere('/home/demo/shop', reviewScenario());
    await waitFor(() => expect(tabs()).toHaveLength(2));
    const discardAll = vi.spyOn(backend, 'discardAll');
    await user.click(within(tab('/home/demo/shop')).getByTestId('folder-close'));
    await screen.findByTestId('leave-dialog');
    expect(screen.getByTestId('leave-discard')).toBeDisabled();
    await user.type(screen.getByTestId('leave-reason'), '  done with shop ');
    await user.click(screen.getByTestId('leave-discard'));
    await waitFor(() => expect(tabs()).toHaveLength(0));
    expect(discardAll).toHaveBeenCalledWith('  done with shop ', '/home/demo/shop');
    expect(screen.getAllByTestId('queue-card'), 'the other folder keeps its stack').toHaveLength(4);
    expect((await backend.listHistory()).some((h) => h.reason === '  done with shop '), 'not in this folder\'s history').toBe(false);
  });

  it('Cancel keeps the folder open with every action pending', async () => {
    const { backend, user } = await setup();
    backend.openElsewhere('/home/demo/shop', reviewScenario());
    await waitFor(() => expect(tabs()).toHaveLength(2));
    const close = vi.spyOn(backend, 'closeFolder');
    await user.click(within(tab('/home/demo/shop')).getByTestId('folder-close'));
    await screen.findByTestId('leave-dialog');
    await user.click(screen.getByTestId('leave-cancel'));
    expect(screen.queryByTestId('leave-dialog')).toBeNull();
    expect(close).not.toHaveBeenCalled();
    expect(tabs()).toHaveLength(2);
  });

  it('closing the window asks about every folder\'s actions; Cancel releases the close, Keep closes', async () => {
    const { backend, user } = await setup();
    backend.openElsewhere('/home/demo/shop', reviewScenario());
    await waitFor(() => expect(tabs()).toHaveLength(2));
    const confirm = vi.spyOn(backend, 'confirmClose');
    backend.requestClose();
    const dialog = await screen.findByTestId('leave-dialog');
    expect(dialog.dataset.destination).toBe('close');
    expect(dialog).toHaveTextContent('Closing the window leaves 8 pending actions in 2 open folders');
    await user.keyboard('{Escape}');
    await waitFor(() => expect(confirm).toHaveBeenCalledWith(false));
    expect(backend.closed).toBe(false);
    backend.requestClose();
    await screen.findByTestId('leave-dialog');
    await user.click(screen.getByTestId('leave-keep'));
    await waitFor(() => expect(backend.closed).toBe(true));
    expect(screen.getAllByTestId('queue-card')).toHaveLength(4);
  });

  it('with one folder, the window\'s close names it, as before', async () => {
    const { backend } = await setup();
    backend.requestClose();
    const dialog = await screen.findByTestId('leave-dialog');
    expect(dialog).toHaveTextContent('Closing the window leaves 4 pending actions');
    expect(tabs(), 'no tabs for a single folder').toHaveLength(0);
  });
});

describe('the inbox', () => {
  it('lists every folder\'s pending actions newest push first, with folder, agent, waiting mark, size, age and order; an item opens its folder', async () => {
    const { backend, user } = await setup();
    const first = (await backend.getSession()).workspaceRoot;
    const shop = reviewScenario();
    const newest = Math.max(...shop.queue.actions.map((a) => a.createdAtMs)) + 3_600_000;
    shop.queue.actions = shop.queue.actions.slice(0, 2).map((a, i) => ({ ...a, createdAtMs: newest - i * 60_000 }));
    shop.queue.actions[0]!.proposal = { choice: 'apply', reason: 'tests pass', client: 'claude-code', callId: 'c-1', waiting: true };
    shop.queue.actions[0]!.pushedBy = 'claude-code';
    backend.openElsewhere('/home/demo/shop', shop);
    await waitFor(() => expect(screen.getByTestId('inbox-count')).toHaveTextContent('6'));
    expect(screen.getByTestId('inbox-waiting')).toBeInTheDocument();

    await user.click(screen.getByTestId('inbox-button'));
    await waitFor(() => expect(screen.getAllByTestId('inbox-item')).toHaveLength(6));
    const items = screen.getAllByTestId('inbox-item');
    expect(screen.getByTestId('inbox-lifo-note')).toHaveTextContent('Only the top action of each folder can be applied or discarded');
    expect(items.map((i) => i.dataset.root)).toEqual(['/home/demo/shop', '/home/demo/shop', first, first, first, first]);
    const times = (await backend.listInbox()).map((i) => i.action.createdAtMs);
    expect(times, 'newest push first').toEqual([...times].sort((a, b) => b - a));
    const top = items[0]!;
    expect(within(top).getByTestId('inbox-folder')).toHaveTextContent('shop');
    expect(within(top).getByTestId('inbox-agent')).toHaveTextContent('by claude-code');
    expect(within(top).getByTestId('inbox-waiting')).toHaveTextContent('claude-code is waiting');
    expect(within(top).getByTestId('inbox-size')).toHaveTextContent(/^\d+ files?, \+\d+ −\d+ lines$/);
    expect(within(top).getByTestId('inbox-age')).toHaveTextContent(/ago|just now|yesterday/);
    expect(within(top).getByTestId('inbox-order')).toHaveTextContent('top of shop (1 of 2): can be decided now');
    const below = items[1]!;
    expect(within(below).getByTestId('inbox-order')).toHaveTextContent('2 of 2 in shop: decide the one above it first');
    expect(within(below).queryByTestId('inbox-waiting')).toBeNull();

    // Opening the second item of shop goes to shop's stack with that action shown (not top: LIFO).
    const id = below.dataset.actionId!;
    await user.click(below);
    await waitFor(() => expect(screen.queryByTestId('inbox-dialog')).toBeNull());
    await waitFor(() => expect(screen.getByTestId('workspace-name')).toHaveTextContent('shop'));
    await waitFor(() => expect(screen.getAllByTestId('queue-card').find((c) => c.getAttribute('aria-current') === 'true')?.dataset.actionId).toBe(id));
    expect(screen.getByTestId('not-top-message')).toBeInTheDocument();
  });

  it('says so when nothing is pending anywhere', async () => {
    const { backend, user } = await setup();
    await backend.discardAll('clean slate');
    await user.click(screen.getByTestId('inbox-button'));
    expect(await screen.findByTestId('inbox-empty')).toHaveTextContent('Nothing pending in any open folder.');
  });
});

describe('the nudge', () => {
  it('a clicked notification brings its folder with its action on screen', async () => {
    const { backend } = await setup();
    backend.openElsewhere('/home/demo/shop', reviewScenario());
    await waitFor(() => expect(screen.getAllByTestId('folder-tab')).toHaveLength(2));
    const id = reviewScenario().queue.actions[1]!.id;
    await backend.clickNotification('/home/demo/shop', id);
    await waitFor(() => expect(screen.getByTestId('workspace-name')).toHaveTextContent('shop'));
    await waitFor(() => expect(screen.getAllByTestId('queue-card').find((c) => c.getAttribute('aria-current') === 'true')?.dataset.actionId).toBe(id));
  });

  it('notifications and the tray icon can be turned off in the inbox', async () => {
    const { backend, user } = await setup();
    await user.click(screen.getByTestId('inbox-button'));
    const notify = await screen.findByTestId('setting-notifications');
    expect(notify).toBeChecked();
    await user.click(notify);
    await waitFor(() => expect(backend.deskSettings).toEqual({ notifications: false, tray: true }));
    await user.click(screen.getByTestId('setting-tray'));
    await waitFor(() => expect(backend.deskSettings).toEqual({ notifications: false, tray: false }));
  });
});

describe('history search', () => {
  const headers = () => screen.getAllByTestId('history-header').map((h) => h.textContent?.replace(/\s+/g, ' ').trim());

  it('filters by text and by decision, says how many match, and exports what it finds', async () => {
    const { backend, user } = await setup();
    await user.click(screen.getByTestId('history-button'));
    await waitFor(() => expect(screen.getAllByTestId('history-entry')).toHaveLength(3));
    expect(screen.getByTestId('history-count')).toHaveTextContent('3 entries');

    await user.type(screen.getByTestId('history-search'), 'CHANGELOG');
    await waitFor(() => expect(headers()).toEqual(['Failed: Changelog entry for 2.4.0 [custom_tool]']));
    expect(screen.getByTestId('history-count')).toHaveTextContent('1 entry match');
    await user.click(screen.getByTestId('history-export-csv'));
    await waitFor(() =>
      expect(screen.getByTestId('history-export-note')).toHaveTextContent('Exported 1 entry to /home/demo/history-export.csv'),
    );
    const written = backend.exported.get('/home/demo/history-export.csv')!;
    expect(written.format).toBe('csv');
    expect(written.entries.map((e) => e.label)).toEqual(['Changelog entry for 2.4.0']);

    await user.click(screen.getByTestId('history-clear'));
    await waitFor(() => expect(screen.getAllByTestId('history-entry')).toHaveLength(3));
    await user.selectOptions(screen.getByTestId('history-outcome'), 'discarded');
    await waitFor(() => expect(headers()).toEqual(['Discard: 2 files [Batch rename]']));
    await user.selectOptions(screen.getByTestId('history-outcome'), 'failed');
    await user.type(screen.getByTestId('history-search'), 'nothing like this');
    await waitFor(() => expect(screen.getByTestId('history-empty')).toHaveTextContent('No decision matches these filters.'));
  });

  it('cancelling the save dialog exports nothing', async () => {
    const { backend, user } = await setup();
    backend.saveAnswer = null;
    const exportHistory = vi.spyOn(backend, 'exportHistory');
    await user.click(screen.getByTestId('history-button'));
    await waitFor(() => expect(screen.getAllByTestId('history-entry')).toHaveLength(3));
    await user.click(screen.getByTestId('history-export-json'));
    await waitFor(() => expect(screen.getByTestId('history-export-json')).toBeEnabled());
    expect(exportHistory).not.toHaveBeenCalled();
    expect(screen.queryByTestId('history-export-note')).toBeNull();
  });

  it('reads 10,000 entries a page at a time and renders only a window of them', async () => {
    const scenario = reviewScenario();
    const [first] = scenario.history;
    scenario.history = Array.from({ length: 10_000 }, (_, i) => ({
      ...first!,
      actionId: `act-h${i}`,
      summary: `Entry ${i}`,
      label: `Entry ${i}`,
      atMs: first!.atMs - i * 60_000,
    }));
    const { backend, user } = await setup({ scenario });
    const search = vi.spyOn(backend, 'searchHistory');
    await user.click(screen.getByTestId('history-button'));
    await waitFor(() => expect(screen.getByTestId('history-count')).toHaveTextContent('10000 entries'));
    const shown = screen.getAllByTestId('history-entry');
    expect(shown.length).toBeGreaterThan(3);
    expect(shown.length).toBeLessThan(60);
    expect(headers()[0]).toBe('Accept: Entry 0 [AST Edit]');
    // One page read, not ten thousand rows.
    expect(search.mock.calls.every(([, , limit]) => limit <= 100)).toBe(true);
    expect(search.mock.calls.map(([, offset]) => offset)).toEqual([0]);
  });
});
