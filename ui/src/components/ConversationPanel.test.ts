// The conversation panel, driven by the protocol fixture agent_updates.json (the same file
// crates/protocol round-trips), and the agent flow through the App with the fake backend.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import type { AgentSettings, AgentUpdate } from '../ipc/backend';
import { foldUpdates, waitingCall } from '../lib/conversation';
import ConversationPanel from './ConversationPanel.svelte';
import AgentSettingsDialog from './AgentSettingsDialog.svelte';
import App from '../App.svelte';
import { FakeBackend } from '../test/fakeBackend';
import { reviewScenario } from '../test/scenarios';

const FIXTURES = resolve(__dirname, '../../../crates/protocol/fixtures');
const fixture = <T,>(name: string): T => JSON.parse(readFileSync(resolve(FIXTURES, name), 'utf8')) as T;
const UPDATES = fixture<AgentUpdate[]>('agent_updates.json');
const noop = () => {};
const panel = (updates: AgentUpdate[], extra: Record<string, unknown> = {}) =>
  render(ConversationPanel, {
    chat: foldUpdates(updates), onSend: noop, onStop: noop, onNew: noop, onSelectAction: noop, onOpenSettings: noop, onClose: noop, ...extra,
  });

describe('conversation panel (agent_updates.json)', () => {
  it('renders prompt, streamed text, compact tool calls and the person’s decision', () => {
    const onSelectAction = vi.fn();
    panel(UPDATES.filter((u) => u.turn === 1), { onSelectAction });
    expect(screen.getAllByTestId('chat-user')[0]).toHaveTextContent('Replace console.log with logger.debug in src');
    const assistant = screen.getAllByTestId('chat-assistant');
    expect(assistant[0]).toHaveTextContent("I'll preview the rewrite first.");
    expect(assistant.at(-1)).toHaveTextContent('Done: the three calls now use logger.debug.');
    const tools = screen.getAllByTestId('chat-tool');
    expect(tools.map((t) => t.dataset.tool)).toEqual(['ast_edit', 'resolve']);
    expect(tools[0]).toHaveTextContent('console.log($$$A) → logger.debug($$$A) in src');
    const link = within(tools[0]!).getByTestId('chat-preview-link');
    expect(link).toHaveTextContent('act-0003');
    link.click();
    expect(onSelectAction).toHaveBeenCalledWith('act-0003');
    const resolved = within(tools[1]!).getByTestId('chat-resolved');
    expect(resolved).toHaveTextContent('Applied');
    expect(within(resolved).getByTestId('chat-decided-by')).toHaveTextContent('you');
    expect(resolved).toHaveTextContent('Checked the diff, fine');
    expect(tools[1]).toHaveTextContent('The agent had proposed Apply: “Only logging calls change; tests pass.”');
    expect(screen.queryByTestId('agent-waiting')).toBeNull();
    expect(screen.getByTestId('send-button')).toBeInTheDocument();
  });

  it('shows the waiting state and Stop while the model waits on the stack', () => {
    const upTo = UPDATES.findIndex((u) => u.event.kind === 'waitingForPerson');
    const updates = UPDATES.slice(0, upTo + 1);
    expect(waitingCall(foldUpdates(updates))?.callId).toBe('call_res_1');
    const onStop = vi.fn();
    panel(updates, { onStop });
    expect(screen.getByTestId('agent-waiting')).toHaveTextContent('The agent is waiting for your review.');
    expect(screen.getByTestId('chat-proposal')).toHaveTextContent('Proposes Apply: “Only logging calls change; tests pass.”');
    expect(screen.getByTestId('agent-running')).toHaveTextContent('Waiting for your review');
    screen.getByTestId('stop-button').click();
    expect(onStop).toHaveBeenCalled();
  });

  it('shows a provider error with what to do, and the retry notice', () => {
    const onOpenSettings = vi.fn();
    panel(UPDATES.filter((u) => u.turn === 2), { onOpenSettings });
    expect(screen.getByTestId('chat-retrying')).toHaveTextContent('The provider answered 429; trying again in 0.5 s (attempt 2 of 4).');
    const err = screen.getByTestId('chat-error');
    expect(err.dataset.code).toBe('connectionRefused');
    expect(err).toHaveTextContent('connection refused');
    expect(err).toHaveTextContent('Check the base URL in Settings');
    within(err).getByRole('button', { name: 'Open settings' }).click();
    expect(onOpenSettings).toHaveBeenCalled();
    expect(screen.queryByTestId('stop-button')).toBeNull();
  });

  it('sends the prompt on Enter and not while empty', async () => {
    const user = userEvent.setup();
    const onSend = vi.fn();
    panel([], { onSend });
    expect(screen.getByTestId('send-button')).toBeDisabled();
    await user.type(screen.getByTestId('prompt-input'), 'Rename the photos{Enter}');
    expect(onSend).toHaveBeenCalledWith('Rename the photos');
    expect(screen.getByTestId('prompt-input')).toHaveValue('');
  });
});

describe('agent settings (agent_settings.json)', () => {
  it('shows whether the key variable is set, never a value, and saves the form', async () => {
    const user = userEvent.setup();
    const settings = fixture<AgentSettings>('agent_settings.json');
    const onSave = vi.fn();
    render(AgentSettingsDialog, { settings, onSave });
    expect(screen.getByTestId('settings-key-status')).toHaveTextContent('A key is stored in the system keyring');
    expect(screen.getByTestId('settings-key-status')).toHaveTextContent('OPENAI_API_KEY is not set');
    expect(screen.getByTestId('settings-path')).toHaveTextContent(settings.configPath);
    await user.clear(screen.getByTestId('settings-model'));
    await user.type(screen.getByTestId('settings-model'), 'qwen2.5-coder');
    await user.click(screen.getByTestId('settings-save'));
    expect(onSave).toHaveBeenCalledWith({ baseUrl: settings.baseUrl, model: 'qwen2.5-coder', apiKeyEnv: 'OPENAI_API_KEY', resolveWaitSecs: settings.resolveWaitSecs });
  });

  it('takes a key for the keyring, never shows one back, and can forget it', async () => {
    const user = userEvent.setup();
    const settings = fixture<AgentSettings>('agent_settings.json');
    const onSave = vi.fn();
    render(AgentSettingsDialog, { settings, onSave });
    const field = screen.getByTestId('settings-api-key') as HTMLInputElement;
    expect(field.type).toBe('password');
    expect(field.value).toBe('');
    await user.type(field, 'sk-typed-in-the-dialog');
    await user.click(screen.getByTestId('settings-save'));
    expect(onSave).toHaveBeenLastCalledWith(expect.objectContaining({ apiKey: 'sk-typed-in-the-dialog' }));
    expect(field.value).toBe('');
    await user.click(screen.getByTestId('settings-forget-key'));
    expect(onSave).toHaveBeenLastCalledWith(expect.objectContaining({ forgetApiKey: true }));
    expect(onSave.mock.lastCall?.[0]).not.toHaveProperty('apiKey');
  });

  it('says when the keyring cannot be used and that the variable still works', () => {
    const settings = {
      ...fixture<AgentSettings>('agent_settings.json'),
      apiKeySource: 'none' as const,
      keyringProblem: 'the system keyring is not available or is locked (no bus); the environment variable OPENAI_API_KEY still works when set.',
    };
    render(AgentSettingsDialog, { settings, onSave: vi.fn() });
    expect(screen.getByTestId('settings-keyring-problem')).toHaveTextContent('OPENAI_API_KEY still works');
    expect(screen.getByTestId('settings-key-status')).toHaveTextContent('No key');
    expect(screen.queryByTestId('settings-forget-key')).toBeNull();
  });
});

async function app(scenario: 'demo' | 'empty' = 'empty') {
  const backend = new FakeBackend({ latencyMs: 0, scenario: scenario === 'demo' ? reviewScenario() : 'empty' });
  const user = userEvent.setup();
  localStorage.setItem('resolve-desk.agentOpen', '1');
  render(App, { backend });
  await waitFor(() => expect(screen.getByTestId('conversation-panel')).toBeInTheDocument());
  return { backend, user };
}

describe('the agent in the app (fake backend)', () => {
  it('the Agent button shows and hides the panel, and the choice is kept', async () => {
    const { user } = await app();
    await user.click(screen.getByTestId('agent-toggle'));
    expect(screen.queryByTestId('conversation-panel')).toBeNull();
    expect(localStorage.getItem('resolve-desk.agentOpen')).toBe('0');
    await user.click(screen.getByTestId('agent-toggle'));
    expect(screen.getByTestId('conversation-panel')).toBeInTheDocument();
  });

  it('a prompt gives a preview card, the agent’s proposal, and the person’s Apply answers it', async () => {
    const { backend, user } = await app();
    const events: AgentUpdate[] = [];
    await backend.onAgentEvent((u) => events.push(u));
    await user.type(screen.getByTestId('prompt-input'), 'Use logger.debug{Enter}');
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(1));
    await waitFor(() => expect(screen.getByTestId('proposal-box')).toBeInTheDocument());
    expect(screen.getByTestId('proposal-text')).toHaveTextContent('llama3.1 proposes: Apply — “Only logging calls change; tests pass.”');
    expect(screen.getByTestId('agent-waiting')).toBeInTheDocument();
    await user.click(screen.getByTestId('use-proposal-reason'));
    expect(screen.getByTestId('reason-input')).toHaveValue('Only logging calls change; tests pass.');
    await user.clear(screen.getByTestId('reason-input'));
    await user.type(screen.getByTestId('reason-input'), 'Checked it myself');
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(screen.getByTestId('chat-resolved')).toHaveTextContent('Checked it myself'));
    expect(screen.getByTestId('chat-decided-by')).toHaveTextContent('you');
    await waitFor(() => expect(screen.getByTestId('send-button')).toBeInTheDocument());
    expect(screen.queryByTestId('agent-waiting')).toBeNull();
    const result = events.find((u) => u.event.kind === 'toolResult' && u.event.tool === 'resolve')!.event;
    expect(result.kind === 'toolResult' && result.text).toContain('Decided by the person: applied. Reason: Checked it myself');
    const history = await backend.listHistory();
    expect(history[0]).toMatchObject({ decidedBy: 'person', reason: 'Checked it myself', proposal: { choice: 'apply', client: 'llama3.1' } });
  });

  it('the preview link in the conversation selects its queue card', async () => {
    const { user } = await app('demo');
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(4));
    await user.type(screen.getByTestId('prompt-input'), 'Go{Enter}');
    const link = await screen.findByTestId('chat-preview-link');
    await user.click(screen.getAllByTestId('queue-card')[3]!);
    expect(screen.getByTestId('not-top-message')).toBeInTheDocument();
    await user.click(link);
    const selected = screen.getAllByTestId('queue-card').find((c) => c.getAttribute('aria-current') === 'true');
    expect(selected?.dataset.actionId).toBe(link.dataset.actionId);
    expect(screen.queryByTestId('not-top-message')).toBeNull();
  });

  it('Stop ends the wait and leaves the preview pending', async () => {
    const { user } = await app();
    await user.type(screen.getByTestId('prompt-input'), 'Go{Enter}');
    await screen.findByTestId('agent-waiting');
    await user.click(screen.getByTestId('stop-button'));
    await waitFor(() => expect(screen.getByTestId('chat-ended')).toHaveTextContent('Stopped.'));
    expect(screen.queryByTestId('agent-waiting')).toBeNull();
    // The proposal stays beside the action, shown as not waiting: the decision is kept for the agent.
    await waitFor(() => expect(screen.getByTestId('proposal-not-waiting')).toHaveTextContent('is not waiting right now'));
    expect(screen.queryByTestId('proposal-waiting')).toBeNull();
    expect(screen.getAllByTestId('queue-card')).toHaveLength(1);
  });

  it('the policy switch is locked while actions are pending and explains why', async () => {
    await app('demo');
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(4));
    expect(screen.getByTestId('policy-agent')).toBeDisabled();
    expect(screen.getByTestId('policy-locked')).toHaveTextContent('Resolve or discard the 4 pending actions first');
    expect(screen.getByTestId('policy-switch').dataset.policy).toBe('human');
  });

  it('under the agent policy the agent’s resolve decides and the history says so', async () => {
    const { backend, user } = await app();
    await user.click(screen.getByTestId('policy-agent'));
    await waitFor(() => expect(screen.getByTestId('policy-switch').dataset.policy).toBe('agent'));
    await user.type(screen.getByTestId('prompt-input'), 'Go{Enter}');
    await waitFor(() => expect(screen.getByTestId('chat-decided-by')).toHaveTextContent('agent'));
    expect(screen.queryByTestId('proposal-box')).toBeNull();
    const history = await backend.listHistory();
    expect(history[0]).toMatchObject({ decidedBy: 'agent', client: 'llama3.1' });
  });

  it('a new conversation with actions pending asks first, then discards them into the history', async () => {
    const { backend, user } = await app('demo');
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(4));
    await user.click(screen.getByTestId('new-conversation-button'));
    const dialog = screen.getByTestId('new-conversation-dialog');
    expect(dialog).toHaveTextContent('4 actions are still pending');
    expect(screen.getByTestId('new-conversation-reason')).toHaveValue('Discarded: new conversation started');
    await user.click(screen.getByTestId('new-conversation-confirm'));
    await waitFor(() => expect(screen.queryByTestId('queue-card')).toBeNull());
    expect(screen.getByTestId('result-banner')).toHaveTextContent('Discarded 4 pending actions');
    const history = await backend.listHistory();
    expect(history.slice(0, 4).every((h) => h.action === 'discard' && h.reason === 'Discarded: new conversation started')).toBe(true);
  });

  it('shows a provider failure in the conversation', async () => {
    const { backend, user } = await app();
    backend.failNextTurn();
    await user.type(screen.getByTestId('prompt-input'), 'Go{Enter}');
    await waitFor(() => expect(screen.getByTestId('chat-error')).toHaveTextContent('connection refused'));
    await waitFor(() => expect(screen.getByTestId('send-button')).toBeInTheDocument());
  });

  it('settings are loaded, saved, and a bad base URL is explained', async () => {
    const { user } = await app();
    await user.click(screen.getByTestId('agent-settings-button'));
    await screen.findByTestId('agent-settings-form');
    await user.clear(screen.getByTestId('settings-base-url'));
    await user.type(screen.getByTestId('settings-base-url'), 'ftp://x');
    await user.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(screen.getByTestId('settings-error')).toHaveTextContent('must start with http:// or https://'));
    await user.clear(screen.getByTestId('settings-base-url'));
    await user.type(screen.getByTestId('settings-base-url'), 'http://127.0.0.1:8080/v1');
    await user.click(screen.getByTestId('settings-save'));
    await screen.findByTestId('settings-saved');
  });
});
