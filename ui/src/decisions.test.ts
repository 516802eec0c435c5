// Decisions are bound to what the person saw: a reason belongs to one action, a push never
// moves the selection, and Apply / Discard (buttons, `a`, `d`) act only on the top action
// shown, with its id.
import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from './App.svelte';
import { FakeBackend } from './test/fakeBackend';
import { reviewScenario } from './test/scenarios';
import QUEUE from '../../crates/protocol/fixtures/queue_snapshot.json';
import type { QueueSnapshot } from './ipc/backend';

const fixtureQueue = () => structuredClone(QUEUE) as QueueSnapshot;

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

/** Another process (a script, the agent, an MCP client) pushes a preview. */
async function pushFromElsewhere(backend: FakeBackend): Promise<string> {
  const out = await backend.runTool('ast_edit', { ops: [{ pat: 'console.warn($A)', out: 'logger.warn($A)' }] });
  const id = (out.details as { action_id: string }).action_id;
  await waitFor(() => expect(cardIds()[0]).toBe(id));
  return id;
}

describe('a push while the person is reading', () => {
  it('keeps the action on screen and says a new action is on top, with a button to go there', async () => {
    const { backend, user } = await setup();
    const shown = selectedId()!;
    await user.type(screen.getByTestId('reason-input'), 'checked both files');
    const pushed = await pushFromElsewhere(backend);

    expect(selectedId(), 'the selection did not move').toBe(shown);
    expect(screen.getAllByTestId('queue-card')[1]!.dataset.actionId).toBe(shown);
    const notice = screen.getByTestId('new-top-notice');
    expect(notice).toHaveTextContent('A new action is on top: AST Edit 3 replacements in 2 files');
    expect(screen.getByTestId('reason-input'), 'the reason stays with the action it was typed for').toHaveValue('checked both files');
    expect(screen.getByTestId('apply-button')).toBeDisabled();
    expect(screen.getByTestId('discard-button')).toBeDisabled();

    await user.click(within(notice).getByTestId('go-to-new-top'));
    expect(selectedId()).toBe(pushed);
    expect(screen.queryByTestId('new-top-notice')).toBeNull();
    await waitFor(() => expect(screen.getByTestId('reason-input'), 'the focus moves on to the top\'s reason').toHaveFocus());
    expect(screen.getByTestId('reason-input'), 'the new action has no reason yet').toHaveValue('');
  });

  it('t goes to the new top from the keyboard', async () => {
    const { backend, user } = await setup();
    const pushed = await pushFromElsewhere(backend);
    expect(screen.getByTestId('new-top-notice')).toBeInTheDocument();
    (document.activeElement as HTMLElement | null)?.blur();
    await user.keyboard('t');
    expect(selectedId()).toBe(pushed);
    expect(screen.queryByTestId('new-top-notice')).toBeNull();
  });

  it('a and d do nothing on an action that is no longer the top, and say why', async () => {
    const { backend, user } = await setup();
    const resolve = vi.spyOn(backend, 'resolveAction');
    await user.type(screen.getByTestId('reason-input'), 'ok');
    await pushFromElsewhere(backend);
    (document.activeElement as HTMLElement | null)?.blur();
    await user.keyboard('a');
    await user.keyboard('d');
    await fireEvent.click(screen.getByTestId('apply-button'));
    expect(resolve).not.toHaveBeenCalled();
    expect(cardIds()).toHaveLength(5);
    expect(screen.getByTestId('announcer')).toHaveTextContent('Only the top action can be applied or discarded. Press t to go to it.');
  });

  it('the disabled buttons say why: they point at the not-top message', async () => {
    const { user } = await setup();
    await user.click(screen.getAllByTestId('queue-card')[2]!);
    const why = screen.getByTestId('not-top-message');
    expect(why).toHaveTextContent('Only the top action can be resolved (LIFO): Apply and Discard are off while you look at this one.');
    for (const id of ['apply-button', 'discard-button']) {
      const button = screen.getByTestId(id);
      expect(button).toBeDisabled();
      expect(button).toHaveAttribute('aria-describedby', why.id);
      expect(button.title).toMatch(/^Only the top action can be (applied|discarded)$/);
    }
    await user.click(within(why).getByTestId('go-to-top'));
    expect(selectedId()).toBe(cardIds()[0]);
    expect(screen.queryByTestId('not-top-message')).toBeNull();
  });
});

describe('the reason belongs to one action', () => {
  it('is kept per action: another action starts empty, the first gets its own back', async () => {
    const { backend, user } = await setup();
    const first = selectedId()!;
    await user.type(screen.getByTestId('reason-input'), 'reason for the first');
    const pushed = await pushFromElsewhere(backend);
    await user.click(screen.getByTestId('go-to-new-top'));
    expect(screen.getByTestId('reason-input')).toHaveValue('');
    await user.type(screen.getByTestId('reason-input'), 'reason for the pushed one');
    await user.click(screen.getAllByTestId('queue-card')[1]!);
    expect(selectedId()).toBe(first);
    expect(screen.getByTestId('reason-input')).toHaveValue('reason for the first');
    await user.click(screen.getAllByTestId('queue-card')[0]!);
    expect(selectedId()).toBe(pushed);
    expect(screen.getByTestId('reason-input')).toHaveValue('reason for the pushed one');
  });

  it('Apply sends the reason typed for the action shown and its id as expectedId', async () => {
    const { backend, user } = await setup();
    const resolve = vi.spyOn(backend, 'resolveAction');
    await user.type(screen.getByTestId('reason-input'), 'reason for the first');
    const pushed = await pushFromElsewhere(backend);
    await user.click(screen.getByTestId('go-to-new-top'));
    await user.type(screen.getByTestId('reason-input'), 'only warnings');
    (document.activeElement as HTMLElement | null)?.blur();
    await user.keyboard('d');
    await waitFor(() => expect(resolve).toHaveBeenCalledTimes(1));
    expect(resolve).toHaveBeenCalledWith('discard', 'only warnings', pushed);
    await waitFor(() => expect(cardIds()).toHaveLength(4));
    // The one below is the top again, with the reason typed for it earlier.
    expect(screen.getByTestId('reason-input')).toHaveValue('reason for the first');
  });

  it('a decided action takes its reason with it', async () => {
    const { user } = await setup();
    const first = selectedId()!;
    await user.type(screen.getByTestId('reason-input'), 'ok');
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(cardIds()).not.toContain(first));
    expect(screen.getByTestId('reason-input')).toHaveValue('');
  });
});

describe('announcements (polite live region)', () => {
  it('says when a new action arrives on top and what a decision did, with the count left', async () => {
    const { backend, user } = await setup();
    const region = screen.getByTestId('announcer');
    expect(region).toHaveAttribute('aria-live', 'polite');
    await pushFromElsewhere(backend);
    await waitFor(() => expect(region).toHaveTextContent('New action on top: AST Edit: 3 replacements in 2 files. 5 actions pending.'));
    await user.click(screen.getByTestId('go-to-new-top'));
    await user.type(screen.getByTestId('reason-input'), 'fine');
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(region).toHaveTextContent('Applied: AST Edit: 3 replacements in 2 files. 4 actions pending.'));
  });

  it('says when the action on screen was decided elsewhere', async () => {
    const { backend } = await setup();
    const region = screen.getByTestId('announcer');
    const top = cardIds()[0]!;
    await backend.resolveAction('discard', 'from a script', top);
    await waitFor(() => expect(cardIds()).toHaveLength(3));
    expect(region).toHaveTextContent('No longer pending: AST Edit: 3 replacements in 2 files. 3 actions pending.');
  });
});

describe('focus during a resolve', () => {
  it('stays in the decision panel while the buttons are disabled, then goes to the next reason', async () => {
    const { backend, user } = await setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const original = backend.resolveAction.bind(backend);
    vi.spyOn(backend, 'resolveAction').mockImplementation(async (...args) => {
      await gate;
      return original(...args);
    });
    await user.type(screen.getByTestId('reason-input'), 'ok');
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(screen.getByTestId('apply-button')).toBeDisabled());
    const status = screen.getByTestId('resolve-status');
    expect(status).toHaveTextContent('Resolving…');
    expect(status, 'focus waits on the status, not on <body>').toHaveFocus();
    release();
    await waitFor(() => expect(cardIds()).toHaveLength(3));
    await waitFor(() => expect(screen.getByTestId('reason-input')).toHaveFocus());
  });
});

describe('"Not now" for a waiting agent', () => {
  async function waitingSetup() {
    const scenario = reviewScenario();
    const q = fixtureQueue();
    scenario.queue.actions[0]!.proposal = structuredClone(q.actions[0]!.proposal);
    const backend = new FakeBackend({ latencyMs: 0, scenario });
    const user = userEvent.setup();
    render(App, { backend });
    await waitFor(() => expect(screen.getAllByTestId('queue-card').length).toBe(4));
    return { backend, user };
  }

  it('answers the agent without deciding: the action stays pending, no longer waiting, nothing in the history', async () => {
    const { backend, user } = await waitingSetup();
    const history = (await backend.listHistory()).length;
    const top = cardIds()[0]!;
    expect(screen.getByTestId('proposal-waiting')).toHaveTextContent('claude-code is waiting for your review.');
    const snooze = vi.spyOn(backend, 'snoozeAction');
    const notNow = screen.getByTestId('not-now-button');
    expect(notNow, 'Not now needs no reason: it decides nothing').toBeEnabled();
    await user.click(notNow);
    expect(snooze).toHaveBeenCalledWith(top);
    await waitFor(() => expect(screen.getByTestId('proposal-not-waiting')).toBeInTheDocument());
    expect(screen.queryByTestId('not-now-button'), 'nobody waits now').toBeNull();
    expect(screen.queryByTestId('card-agent-waiting')).toBeNull();
    expect(cardIds()[0], 'the action stays on top of the stack').toBe(top);
    expect(cardIds()).toHaveLength(4);
    expect(screen.getByTestId('result-banner')).toHaveTextContent('claude-code was told you will review this later; nothing was applied. It stays pending.');
    expect((await backend.listHistory()).length, 'Not now is not a decision').toBe(history);
    // Discard is still there, and distinct: it decides.
    expect(screen.getByTestId('discard-button')).toBeInTheDocument();
  });

  it('is offered only while the agent waits', async () => {
    const scenario = reviewScenario();
    const q = fixtureQueue();
    scenario.queue.actions[0]!.proposal = { ...q.actions[0]!.proposal!, waiting: false };
    render(App, { backend: new FakeBackend({ latencyMs: 0, scenario }) });
    await waitFor(() => expect(screen.getByTestId('proposal-not-waiting')).toBeInTheDocument());
    expect(screen.queryByTestId('not-now-button')).toBeNull();
  });
});
