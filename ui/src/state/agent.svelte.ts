// The agent session in the window: the conversation, its settings and the policy switch.
import type { AgentSettings, AgentSettingsInput, AgentUpdate, Backend, Policy } from '../ipc/backend';
import { applyUpdate, emptyChat, foldUpdates, type Chat } from '../lib/conversation';
import { message, type Review } from './review.svelte';

export const NEW_CONVERSATION_REASON = 'Discarded: new conversation started';

// Open when the person left it open last time; otherwise only on wide windows (the review
// columns come first). An agent event opens it.
const AGENT_OPEN_KEY = 'resolve-desk.agentOpen';
function initialOpen(): boolean {
  try {
    const saved = localStorage.getItem(AGENT_OPEN_KEY);
    if (saved !== null) return saved === '1';
  } catch { /* no storage: use the width */ }
  return typeof window !== 'undefined' && window.innerWidth >= 1600;
}

export class Agent {
  open = $state(initialOpen());
  chat: Chat = $state(emptyChat());
  starting = $state(false);
  error: string | null = $state(null);
  settings: AgentSettings | null = $state(null);
  settingsSaving = $state(false);
  settingsError: string | null = $state(null);
  settingsSaved = $state(false);
  policyBusy = $state(false);
  discardReason = $state(NEW_CONVERSATION_REASON);
  newConversationBusy = $state(false);
  newConversationError: string | null = $state(null);

  /** Updates of turns before this one belong to a conversation that was replaced. */
  private firstTurn = 0;
  /** The highest turn number seen (turn numbers only grow within a session). */
  private turnsSeen = 0;

  constructor(private readonly backend: Backend, private readonly review: Review) {}

  setOpen(open: boolean) {
    this.open = open;
    try {
      localStorage.setItem(AGENT_OPEN_KEY, open ? '1' : '0');
    } catch { /* not kept */ }
  }

  /** Each session has its own conversation (its turns count from 1 again). */
  reset() {
    this.chat = emptyChat();
    this.firstTurn = 0;
    this.turnsSeen = 0;
  }

  /** Loads the conversation so far (after subscribing to its events). */
  async load() {
    try {
      const view = await this.backend.getConversation();
      for (const u of view.updates) this.turnsSeen = Math.max(this.turnsSeen, u.turn);
      if (this.chat.items.length === 0) this.chat = foldUpdates(view.updates);
    } catch (err) {
      this.error = `Could not load the conversation: ${message(err)}`;
    }
  }

  onEvent(u: AgentUpdate) {
    this.turnsSeen = Math.max(this.turnsSeen, u.turn);
    if (u.turn < this.firstTurn) return;
    this.chat = applyUpdate(this.chat, u);
    this.open = true;
    if (u.event.kind === 'waitingForPerson') {
      // Show the person what the agent waits on: the top action, with its proposal.
      const review = this.review;
      void review.refreshQueue().then(() => review.select(review.actions[0]?.id ?? review.selectedId));
    }
  }

  async send(prompt: string) {
    this.starting = true;
    this.error = null;
    try {
      await this.backend.startAgentTurn(prompt);
    } catch (err) {
      this.error = message(err);
    } finally {
      this.starting = false;
    }
  }

  async stop() {
    try {
      await this.backend.stopAgentTurn();
    } catch (err) {
      this.error = message(err);
    }
  }

  /** Before asking the person to confirm discarding the pending actions. */
  prepareConfirmation() {
    this.discardReason = NEW_CONVERSATION_REASON;
    this.newConversationError = null;
  }

  /**
   * Starts a new conversation, discarding the pending actions with `reason`. `started`
   * runs once the backend agreed; an error goes to the confirmation while `confirming()`.
   */
  async newConversation(reason: string | null, started: () => void = () => {}, confirming: () => boolean = () => false) {
    this.newConversationBusy = true;
    this.newConversationError = null;
    try {
      const out = await this.backend.newConversation(reason);
      this.firstTurn = this.turnsSeen + 1;
      this.chat = emptyChat();
      started();
      if (out.discarded.length > 0) {
        const n = out.discarded.length;
        this.review.banner = { text: `New conversation. Discarded ${n} pending action${n === 1 ? '' : 's'}.`, isError: false };
      }
      await this.review.refreshAll();
    } catch (err) {
      this.newConversationError = message(err);
      if (!confirming()) this.error = this.newConversationError;
      void this.review.refreshQueue();
    } finally {
      this.newConversationBusy = false;
    }
  }

  async loadSettings() {
    this.settingsError = null;
    this.settingsSaved = false;
    try {
      this.settings = await this.backend.getAgentSettings();
    } catch (err) {
      this.settingsError = message(err);
    }
  }

  async saveSettings(input: AgentSettingsInput) {
    this.settingsSaving = true;
    this.settingsError = null;
    this.settingsSaved = false;
    try {
      this.settings = await this.backend.saveAgentSettings(input);
      this.settingsSaved = true;
    } catch (err) {
      this.settingsError = message(err);
    } finally {
      this.settingsSaving = false;
    }
  }

  async setPolicy(policy: Policy) {
    this.policyBusy = true;
    try {
      this.review.session = await this.backend.setPolicy(policy);
      this.review.banner = {
        text: policy === 'human' ? 'You decide: the agent proposes and waits for your review.' : 'The agent decides: its resolve calls apply or discard at once.',
        isError: false,
      };
    } catch (err) {
      this.review.banner = { text: message(err), isError: true };
    } finally {
      this.policyBusy = false;
    }
  }

  selectAction(id: string) {
    if (this.review.actions.some((a) => a.id === id)) this.review.select(id);
    else this.review.banner = { text: `${id} is no longer pending (it was applied or discarded; see History).`, isError: false };
  }
}
