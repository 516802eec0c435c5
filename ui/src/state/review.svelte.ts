// The review state: the session, the queue (top first), the selection, the history and
// the decision on the selected action. Components read it and call its methods; only
// this module talks to the backend about the queue.
import { PersonEdits } from './edits.svelte';
import {
  toBackendError,
  type ActionSummary, type Backend, type HistoryEntry, type ResolveChoice, type SessionInfo, type ToolRunOutcome,
} from '../ipc/backend';
import { Announcer, pendingWords } from './announce.svelte';
import { PartialPicks } from './partial.svelte';

export function message(err: unknown): string {
  return toBackendError(err).message;
}

export type Banner = { text: string; isError: boolean };

export class Review {
  session: SessionInfo | null = $state(null);
  recent: string[] = $state([]);
  actions: ActionSummary[] = $state([]);
  queueLoading = $state(true);
  /** The last queue read failed (the queue column offers Retry). */
  queueError: string | null = $state(null);
  history: HistoryEntry[] = $state([]);
  selectedId: string | null = $state(null);
  banner: Banner | null = $state(null);

  /**
   * The reason typed for each action, by id: a reason belongs to the action it was typed
   * for, so switching the selection (or a push) never carries it over to another action.
   */
  reasons: Record<string, string> = $state({});
  /**
   * An action pushed on top while the person was reading another one: the selection stays,
   * the decision panel says "A new action is on top" with a way to go there.
   */
  newTopId: string | null = $state(null);
  /** The polite live region's words (queue changes). */
  readonly announcer = new Announcer();
  busy = $state(false);
  rerunBusy = $state(false);
  resolveError: string | null = $state(null);

  /** What the person unticked, per action id (partial apply). */
  readonly picks = new PartialPicks();
  /** Edit, then apply: the person's own text for files, per action. */
  readonly edits = new PersonEdits();

  readonly selected = $derived(this.actions.find((a) => a.id === this.selectedId) ?? null);
  readonly top = $derived(this.actions[0] ?? null);
  /** The new top the person has not gone to yet (shown while another action is selected). */
  readonly newTop = $derived(
    this.newTopId !== null && this.top?.id === this.newTopId && this.selectedId !== this.newTopId ? this.top : null,
  );

  /** The reason for the selected action (empty when nothing is selected). */
  get reason(): string {
    return this.selectedId === null ? '' : (this.reasons[this.selectedId] ?? '');
  }
  set reason(text: string) {
    if (this.selectedId !== null) this.reasons[this.selectedId] = text;
  }

  /**
   * The store revision the shown queue was read at, and the one read together with the
   * shown history (`null`: unknown, e.g. right after a workspace switch). A
   * `queue-changed` event at or below them is already on screen.
   */
  private queueRevision: number | null = null;
  private historyRevision: number | null = null;
  /** Counts workspace switches: a read started in another session is dropped. */
  private epoch = 0;
  /** The highest `queue-changed` revision that arrived while a resolve was in flight. */
  private deferred: number | null = null;

  constructor(private readonly backend: Backend) {}

  select(id: string | null) {
    if (id === this.selectedId) return;
    this.selectedId = id;
    // A new selection starts with a clean error; each action keeps its own reason.
    this.resolveError = null;
    if (id !== null && id === this.newTopId) this.newTopId = null;
  }

  /** Shows the top action (the "A new action is on top" button, or `t`). */
  goToTop() {
    if (this.top) this.select(this.top.id);
  }

  /** Reads the queue; resolves to the revision it was read at (`null` on failure). */
  async refreshQueue(): Promise<number | null> {
    const epoch = this.epoch;
    try {
      const snapshot = await this.backend.listActions();
      // Reads can finish out of order: keep the newest of this session's.
      if (epoch !== this.epoch || (this.queueRevision !== null && snapshot.revision < this.queueRevision)) return this.queueRevision;
      this.queueError = null;
      const firstRead = this.queueRevision === null;
      this.queueRevision = snapshot.revision;
      const before = this.actions;
      const previousIds = new Set(before.map((a) => a.id));
      const shown = this.selected;
      this.actions = snapshot.actions;
      const top = this.actions[0] ?? null;
      const ids = new Set(this.actions.map((a) => a.id));
      const pushed = top !== null && !previousIds.has(top.id) && !firstRead;
      if (!ids.has(this.selectedId ?? '')) {
        // The action on screen was decided (or nothing was shown): show the top.
        if (shown && !this.busy && !firstRead) this.announcer.say(`No longer pending: ${shown.label}. ${pendingWords(this.actions.length)}`);
        this.select(top?.id ?? null);
      } else if (pushed && this.selectedId !== top.id) {
        // Never move the selection under the person's eyes: say so instead.
        this.newTopId = top.id;
      }
      if (this.newTopId !== null && this.newTopId !== top?.id) this.newTopId = null;
      if (pushed && !this.busy) this.announcer.say(`New action on top: ${top.label}. ${pendingWords(this.actions.length)}`);
      // Reasons typed for actions no longer pending are forgotten.
      for (const id of Object.keys(this.reasons)) if (!ids.has(id)) delete this.reasons[id];
      return snapshot.revision;
    } catch (err) {
      if (epoch === this.epoch) this.queueError = message(err);
      return null;
    } finally {
      this.queueLoading = false;
    }
  }

  /** Reads the history; `seenAt`: a revision the read is known to include. */
  async refreshHistory(seenAt: number | null = null): Promise<boolean> {
    try {
      this.history = await this.backend.listHistory();
      if (seenAt !== null) this.historyRevision = Math.max(this.historyRevision ?? seenAt, seenAt);
      return true;
    } catch (err) {
      this.banner = { text: `Could not load the history: ${message(err)}`, isError: true };
      return false;
    }
  }

  async refreshSession() {
    try {
      [this.session, this.recent] = await Promise.all([this.backend.getSession(), this.backend.recentWorkspaces()]);
    } catch (err) {
      this.banner = { text: `Could not load the session: ${message(err)}`, isError: true };
    }
  }

  /** Queue and history together (a decision changes both). */
  async refreshAll() {
    const [revision, read] = await Promise.all([this.refreshQueue(), this.refreshHistory()]);
    if (read) this.historyRevision = revision;
  }

  /**
   * A `queue-changed` event. Changes the screen already shows are skipped; during a
   * resolve the event waits for the resolve's own refresh (which reads the queue after
   * the change), so one Apply costs one queue and one history read whichever arrives first.
   */
  onQueueChanged(revision: number) {
    if (this.busy) {
      this.deferred = Math.max(this.deferred ?? revision, revision);
      return;
    }
    const seen = (known: number | null) => known !== null && revision <= known;
    const queue = !seen(this.queueRevision);
    const history = !seen(this.historyRevision);
    if (queue && history) void this.refreshAll();
    else if (queue) void this.refreshQueue();
    else if (history) void this.refreshHistory(revision);
  }

  focusReason() {
    document.querySelector<HTMLTextAreaElement>('[data-testid="reason-input"]')?.focus();
  }

  /**
   * Applies or discards the action on screen, only if it is the top one, with the reason
   * typed for it and its id as `expectedId` (the backend refuses if the top changed since).
   */
  async resolve(choice: ResolveChoice) {
    const action = this.selected;
    if (action && !action.isTop) {
      this.announcer.say('Only the top action can be applied or discarded. Press t to go to it.');
      return;
    }
    if (this.busy || !action) return;
    const reason = this.reasons[action.id] ?? '';
    if (reason.trim() === '') {
      this.focusReason();
      return;
    }
    if (choice === 'apply' && (action.status.kind === 'stale' || action.status.kind === 'orphaned')) return;
    this.busy = true;
    this.deferred = null;
    this.resolveError = null;
    try {
      // Nothing unticked: no `leaveOut`, today's full apply exactly.
      const leaveOut = choice === 'apply' ? this.picks.leaveOut(action.id) : null;
      const edits = choice === 'apply' ? this.edits.list(action.id) : null;
      const outcome = edits
        ? await this.backend.resolveAction(choice, reason, action.id, leaveOut, edits)
        : leaveOut
          ? await this.backend.resolveAction(choice, reason, action.id, leaveOut)
          : await this.backend.resolveAction(choice, reason, action.id);
      this.banner = { text: outcome.text, isError: outcome.isError };
      if (!outcome.isError) {
        delete this.reasons[action.id];
        this.picks.clear(action.id);
        this.edits.clear(action.id);
      }
      await this.refreshAll();
      this.announcer.say(`${outcome.text.split('\n')[0]} ${pendingWords(this.actions.length)}`);
    } catch (err) {
      const e = toBackendError(err);
      this.resolveError = e.message;
      if (e.code === 'idMismatch' || e.code === 'noPendingAction' || e.code === 'stale') await this.refreshQueue();
    } finally {
      this.busy = false;
      const later = this.deferred;
      this.deferred = null;
      // A change after the refresh above (another tool or the agent) is read now.
      if (later !== null) this.onQueueChanged(later);
    }
  }

  /** "Not now" is being sent for the action shown. */
  snoozeBusy = $state(false);

  /**
   * "Not now" on the action shown while an agent waits on it: the agent is told the person
   * will review it later (nothing applied); the action stays pending, decided later as any other.
   */
  async snooze() {
    const action = this.selected;
    if (!action?.proposal?.waiting || this.snoozeBusy) return;
    const who = action.proposal.client ?? 'The agent';
    this.snoozeBusy = true;
    try {
      const answered = await this.backend.snoozeAction(action.id);
      this.banner = answered > 0
        ? { text: `${who} was told you will review this later; nothing was applied. It stays pending.`, isError: false }
        : { text: `${who} was not waiting any more; nothing changed.`, isError: false };
      this.announcer.say(this.banner.text);
      await this.refreshQueue();
    } catch (err) {
      this.resolveError = message(err);
      await this.refreshQueue();
    } finally {
      this.snoozeBusy = false;
    }
  }

  /** The history entry an undo or redo is running for (one at a time). */
  undoBusy: string | null = $state(null);

  /**
   * Undoes (or redoes) an applied entry of the history with `reason`. Resolves to the
   * outcome's text and whether it was refused (files changed since: nothing written), or
   * the command's error; the history is read again either way.
   */
  async undo(entry: HistoryEntry, verb: 'undo' | 'redo', reason: string): Promise<Banner> {
    if (this.undoBusy) return { text: 'Another undo is running; wait for it to finish.', isError: true };
    this.undoBusy = entry.actionId;
    try {
      const outcome = verb === 'undo'
        ? await this.backend.undoDecision(entry.actionId, reason)
        : await this.backend.redoDecision(entry.actionId, reason);
      const result = { text: outcome.text, isError: outcome.isError };
      this.banner = result;
      await this.refreshAll();
      return result;
    } catch (err) {
      await this.refreshHistory(null);
      return { text: message(err), isError: true };
    } finally {
      this.undoBusy = null;
    }
  }

  /** Runs the selected action's preview again; its outcome (`null` if it did not run or failed: banner). */
  async rerun(): Promise<ToolRunOutcome | null> {
    const action = this.selected;
    if (!action || this.rerunBusy) return null;
    this.rerunBusy = true;
    try {
      const out = await this.backend.rerunAction(action.id);
      this.banner = { text: out.text, isError: out.isError };
      await this.refreshQueue();
      return out;
    } catch (err) {
      const e = toBackendError(err);
      this.banner = e.code === 'cancelled' ? { text: 'Cancelled: nothing was pushed.', isError: false } : { text: e.message, isError: true };
      return null;
    } finally {
      this.rerunBusy = false;
    }
  }

  /** Opens a folder beside the open ones and shows it; `onOpened` runs before its queue is read. */
  async openWorkspace(path: string, onOpened: () => void = () => {}) {
    try {
      const session = await this.backend.openWorkspace(path);
      this.recent = await this.backend.recentWorkspaces();
      await this.show(session, onOpened);
    } catch (err) {
      this.banner = { text: `Could not open ${path}: ${message(err)}`, isError: true };
    }
  }

  /**
   * Shows another folder's session (opened, picked in the folder tabs, or shown by the
   * backend): nothing of the folder shown before is kept on screen, not even a typed reason.
   */
  async show(session: SessionInfo, onShown: () => void = () => {}) {
    this.session = session;
    this.select(null);
    this.reasons = {};
    this.newTopId = null;
    this.actions = [];
    this.queueLoading = true;
    // Another session's store counts its revisions afresh.
    this.epoch++;
    this.queueRevision = null;
    this.historyRevision = null;
    onShown();
    await this.refreshAll();
  }

  /** Asks the person for a folder; `null` when they cancel or the picker fails (banner). */
  async pickFolder(): Promise<string | null> {
    try {
      return await this.backend.pickFolder();
    } catch (err) {
      this.banner = { text: message(err), isError: true };
      return null;
    }
  }
}
