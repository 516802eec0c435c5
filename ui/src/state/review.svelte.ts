// The review state: the session, the queue (top first), the selection, the history and
// the decision on the selected action. Components read it and call its methods; only
// this module talks to the backend about the queue.
import {
  toBackendError,
  type ActionSummary, type Backend, type HistoryEntry, type ResolveChoice, type SessionInfo,
} from '../ipc/backend';
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
  history: HistoryEntry[] = $state([]);
  selectedId: string | null = $state(null);
  banner: Banner | null = $state(null);

  reason = $state('');
  busy = $state(false);
  rerunBusy = $state(false);
  resolveError: string | null = $state(null);

  /** What the person unticked, per action id (partial apply). */
  readonly picks = new PartialPicks();

  readonly selected = $derived(this.actions.find((a) => a.id === this.selectedId) ?? null);
  readonly top = $derived(this.actions[0] ?? null);

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
    // A new selection starts with a clean error; the reason is kept while typing.
    this.resolveError = null;
  }

  /** Reads the queue; resolves to the revision it was read at (`null` on failure). */
  async refreshQueue(): Promise<number | null> {
    const epoch = this.epoch;
    try {
      const snapshot = await this.backend.listActions();
      // Reads can finish out of order: keep the newest of this session's.
      if (epoch !== this.epoch || (this.queueRevision !== null && snapshot.revision < this.queueRevision)) return this.queueRevision;
      this.queueRevision = snapshot.revision;
      const previousTop = this.actions[0]?.id ?? null;
      this.actions = snapshot.actions;
      const newTop = this.actions[0]?.id ?? null;
      const stillThere = this.actions.some((a) => a.id === this.selectedId);
      if (!stillThere || (this.selectedId === previousTop && newTop !== previousTop)) this.select(newTop);
      return snapshot.revision;
    } catch (err) {
      this.banner = { text: `Could not load the queue: ${message(err)}`, isError: true };
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

  async resolve(choice: ResolveChoice) {
    const action = this.selected;
    if (this.busy || !action || !action.isTop) return;
    if (this.reason.trim() === '') {
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
      const outcome = leaveOut
        ? await this.backend.resolveAction(choice, this.reason, action.id, leaveOut)
        : await this.backend.resolveAction(choice, this.reason, action.id);
      this.banner = { text: outcome.text, isError: outcome.isError };
      if (!outcome.isError) {
        this.reason = '';
        this.picks.clear(action.id);
      }
      await this.refreshAll();
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

  async rerun() {
    const action = this.selected;
    if (!action || this.rerunBusy) return;
    this.rerunBusy = true;
    try {
      const out = await this.backend.rerunAction(action.id);
      this.banner = { text: out.text, isError: out.isError };
      await this.refreshQueue();
    } catch (err) {
      this.banner = { text: message(err), isError: true };
    } finally {
      this.rerunBusy = false;
    }
  }

  /** Opens another workspace; `onOpened` runs before the queue of the new session is read. */
  async openWorkspace(path: string, onOpened: () => void = () => {}) {
    try {
      this.session = await this.backend.openWorkspace(path);
      this.recent = await this.backend.recentWorkspaces();
      this.select(null);
      // Another session's store counts its revisions afresh.
      this.epoch++;
      this.queueRevision = null;
      this.historyRevision = null;
      onOpened();
      await this.refreshAll();
    } catch (err) {
      this.banner = { text: `Could not open ${path}: ${message(err)}`, isError: true };
    }
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
