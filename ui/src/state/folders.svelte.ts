// One desk, many folders: the folder tabs (name, path, pending count, agent-waiting mark) and
// which folder the window shows. Each folder keeps its own stack, policy, history and lock in
// the backend; showing another one reloads everything the window shows.
import type { Backend, DeskSettings, FolderInfo, InboxItem } from '../ipc/backend';
import { message, type Review } from './review.svelte';

export class Folders {
  list: FolderInfo[] = $state([]);
  /** The root of the folder the backend shows. */
  active: string | null = $state(null);
  error: string | null = $state(null);
  busy = $state(false);
  /** Serialises reads: the last `folders-changed` always leads to a read after it. */
  private reading: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly backend: Backend,
    private readonly review: Review,
    /** Runs when another folder is shown, before its queue is read (the agent panel resets). */
    private readonly onShown: () => void,
  ) {}

  /** The inbox: every open folder's pending actions, newest push first (read while it is open). */
  inbox: InboxItem[] = $state([]);
  inboxLoading = $state(false);
  inboxError: string | null = $state(null);

  /** Reads the inbox. */
  async loadInbox() {
    this.inboxLoading = true;
    try {
      this.inbox = await this.backend.listInbox();
      this.inboxError = null;
    } catch (err) {
      this.inboxError = message(err);
    } finally {
      this.inboxLoading = false;
    }
  }

  /** Notifications and the tray icon (shown in the inbox). */
  settings: DeskSettings | null = $state(null);

  async loadSettings() {
    try {
      this.settings = await this.backend.getDeskSettings();
    } catch (err) {
      this.inboxError = message(err);
    }
  }

  async saveSettings(next: DeskSettings) {
    try {
      this.settings = await this.backend.saveDeskSettings(next);
    } catch (err) {
      this.inboxError = message(err);
    }
  }

  /** A notification was clicked: the backend shows `root` already; follow it and show `actionId`. */
  async reveal(root: string, actionId: string) {
    await this.refresh();
    if (this.review.session?.workspaceRoot !== root) {
      await this.review.show(await this.backend.getSession(), this.onShown);
    }
    if (this.review.actions.some((a) => a.id === actionId)) this.review.select(actionId);
  }

  /** Whether an agent waits for the person in some open folder. */
  get anyWaiting(): boolean {
    return this.list.some((f) => f.waiting);
  }

  /** How many actions are pending over every open folder. */
  get pendingTotal(): number {
    return this.list.reduce((n, f) => n + f.pending, 0);
  }

  /** Reads the folder list; when the backend shows another folder than the window, follows it. */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        try {
          const list = await this.backend.listFolders();
          this.list = list.folders;
          this.active = list.active;
          this.error = null;
          const shown = this.review.session?.workspaceRoot;
          if (shown !== undefined && shown !== list.active) {
            await this.review.show(await this.backend.getSession(), this.onShown);
          }
        } catch (err) {
          this.error = message(err);
        }
      } while (this.again);
    })().finally(() => (this.reading = null));
    return this.reading;
  }

  /** Shows the open folder `root`. */
  async select(root: string) {
    if (root === this.review.session?.workspaceRoot || this.busy) return;
    this.busy = true;
    try {
      const session = await this.backend.selectFolder(root);
      this.active = session.workspaceRoot;
      await this.review.show(session, this.onShown);
      await this.refresh();
    } catch (err) {
      this.review.banner = { text: `Could not show ${root}: ${message(err)}`, isError: true };
    } finally {
      this.busy = false;
    }
  }

  /** Closes `root` for real (the person was asked about its pending actions first). */
  async close(root: string) {
    await this.backend.closeFolder(root);
    await this.refresh();
  }
}
