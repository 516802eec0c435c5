// The window's state, composed: the review (queue, selection, decision), the centre
// preview, tool runs, the agent, and which dialog is open. App.svelte creates one Desk
// and lays out thin components over it.
import { FileReplacementsView } from './partial.svelte';
import type { Backend, InboxItem } from '../ipc/backend';
import { shortcutFor } from '../lib/shortcuts';
import { Agent } from './agent.svelte';
import { Comments } from './comments.svelte';
import { Leave } from './leave.svelte';
import { Folders } from './folders.svelte';
import { HistorySearch } from './history.svelte';
import { Notices } from './notices.svelte';
import { Preview } from './preview.svelte';
import { Review } from './review.svelte';
import { afterNextPaint, mark } from '../lib/startup';
import { SinceChanges } from './sincePreview.svelte';
import { ToolRunner } from './tools.svelte';

export type Overlay = 'none' | 'help' | 'history' | 'tool' | 'script' | 'settings' | 'newConversation' | 'inbox';

export class Desk {
  readonly review: Review;
  readonly preview: Preview;
  readonly tools: ToolRunner;
  readonly agent: Agent;
  readonly notices: Notices;
  /** The question asked when leaving (a folder, the window) with pending actions. */
  readonly leave: Leave;
  /** The open folders (tabs) and the one shown. */
  readonly folders: Folders;
  /** The History dialog's search. */
  readonly history: HistorySearch;
  readonly since: SinceChanges;
  /** The selected `ast_edit` file's replacements (partial apply). */
  readonly replacements: FileReplacementsView;
  /** Line comments on pending actions, and the one being written. */
  readonly comments: Comments;
  overlay: Overlay = $state('none');
  now = $state(Date.now());

  /** Call during component initialisation (the preview starts an effect). */
  constructor(private readonly backend: Backend, private readonly clock: () => number = () => Date.now()) {
    this.review = new Review(backend);
    this.preview = new Preview(backend, this.review);
    // A preview pushed from the Run tool dialog: close it and show the new card.
    this.tools = new ToolRunner(backend, this.review, (id) => {
      if (this.overlay === 'tool') this.overlay = 'none';
      this.review.select(id);
    });
    this.agent = new Agent(backend, this.review);
    this.notices = new Notices(backend);
    this.history = new HistorySearch(backend);
    this.folders = new Folders(backend, this.review, () => this.agent.reset());
    this.leave = new Leave(backend, (root) => this.folders.close(root));
    this.since = new SinceChanges(backend, this.review);
    this.replacements = new FileReplacementsView(backend, this.review, this.preview);
    this.comments = new Comments(backend, this.review);
  }

  close() {
    this.overlay = 'none';
  }

  /** Opens the History dialog on a fresh read of the whole history. */
  openHistory() {
    this.overlay = 'history';
    return this.history.reload();
  }

  /** Opens the inbox on a fresh read of every folder's pending actions. */
  openInbox() {
    this.overlay = 'inbox';
    return Promise.all([this.folders.loadInbox(), this.folders.loadSettings()]);
  }

  /** Goes to an inbox item: its folder's stack, with the item shown. */
  async openInboxItem(item: InboxItem) {
    await this.folders.select(item.root);
    if (this.review.actions.some((a) => a.id === item.action.id)) this.review.select(item.action.id);
    this.overlay = 'none';
  }

  async openTool() {
    this.overlay = 'tool';
    await this.tools.open();
  }

  async openSettings() {
    this.overlay = 'settings';
    await this.agent.loadSettings();
  }

  startNewConversation() {
    this.agent.error = null;
    if (this.review.actions.length > 0) {
      this.agent.prepareConfirmation();
      this.overlay = 'newConversation';
    } else {
      void this.newConversation(null);
    }
  }

  newConversation(reason: string | null) {
    return this.agent.newConversation(reason, () => { this.overlay = 'none'; }, () => this.overlay === 'newConversation');
  }

  /** Opens `path` beside the open folders and shows it (nothing is left: no question). */
  openWorkspace = async (path: string) => {
    await this.review.openWorkspace(path, () => this.agent.reset());
    await this.folders.refresh();
  };

  /** Closes the folder `root`; with actions pending there, asks first (keep, discard all, cancel). */
  closeFolder = (root: string) => {
    const folder = this.folders.list.find((f) => f.root === root);
    if (!folder) return Promise.resolve();
    return this.leave.request({ kind: 'closeFolder', root, name: folder.name }, folder.pending);
  };

  /** What the leave question names: the folder closed, or the open folders (the window closes). */
  leavingWhere(): { workspace: string; isDemo: boolean } {
    const d = this.leave.destination;
    if (d?.kind === 'closeFolder') {
      return { workspace: d.root, isDemo: this.folders.list.find((f) => f.root === d.root)?.isDemo ?? false };
    }
    const open = this.folders.list;
    if (open.length > 1) return { workspace: `${open.length} open folders`, isDemo: open.every((f) => f.isDemo) };
    return { workspace: this.review.session?.workspaceRoot ?? '', isDemo: this.review.session?.isDemo ?? false };
  }
  openFolder = async () => {
    const path = await this.review.pickFolder();
    if (path) await this.openWorkspace(path);
  };

  /** The window's shortcuts; `visiblePaths`: the file list as shown (filter applied). */
  onKeydown(e: KeyboardEvent, visiblePaths: () => string[] | undefined) {
    const action = shortcutFor(e);
    if (!action) return;
    if (this.leave.destination) return; // its dialog handles its own keys
    if (action === 'escape') {
      if (this.overlay !== 'none') { this.overlay = 'none'; e.preventDefault(); }
      return;
    }
    if (this.overlay !== 'none') {
      if (action === 'help' && this.overlay === 'help') { this.overlay = 'none'; e.preventDefault(); }
      return;
    }
    e.preventDefault();
    switch (action) {
      case 'apply': void this.review.resolve('apply'); break;
      case 'discard': void this.review.resolve('discard'); break;
      case 'nextFile': this.preview.moveFile(1, visiblePaths()); break;
      case 'prevFile': this.preview.moveFile(-1, visiblePaths()); break;
      case 'focusReason': this.review.focusReason(); break;
      case 'toggleMode': this.preview.toggleMode(); break;
      case 'help': this.overlay = 'help'; break;
      case 'goTop': this.review.goToTop(); break;
    }
  }

  /** Subscribes to the backend's events and loads everything; returns the cleanup. */
  start(): () => void {
    const { backend, review, tools, agent, notices } = this;
    const unsubs: Array<() => void> = [];
    let disposed = false;
    void (async () => {
      const subs = await Promise.all([
        backend.onQueueChanged((e) => {
          review.onQueueChanged(e.revision);
          // A decision adds to the history: an open History dialog shows it.
          if (this.overlay === 'history') void this.history.reload();
        }),
        backend.onToolProgress((p) => tools.onProgress(p)),
        backend.onAgentEvent((u) => agent.onEvent(u)),
        backend.onNoticesChanged((n) => notices.onChanged(n)),
        backend.onCloseRequested((e) => void this.leave.request({ kind: 'close' }, e.pending)),
        backend.onRevealAction((e) => {
          this.overlay = 'none';
          void this.folders.reveal(e.root, e.actionId);
        }),
        backend.onFoldersChanged(() => {
          void this.folders.refresh();
          if (this.overlay === 'inbox') void this.folders.loadInbox();
        }),
      ]);
      await notices.load();
      await agent.load();
      if (disposed) subs.forEach((u) => u());
      else unsubs.push(...subs);
    })();
    this.now = this.clock();
    void review.refreshSession().then(() => this.folders.refresh());
    void review.refreshAll().then(() => {
      mark('queue_loaded');
      afterNextPaint((marks, origin) => void backend.startupPainted(marks, origin).catch(() => {}));
    });
    void backend.getAgentSettings().then((s) => { agent.settings = s; }, () => {});
    const tick = setInterval(() => { this.now = this.clock(); }, 30_000);
    return () => {
      disposed = true;
      clearInterval(tick);
      unsubs.forEach((u) => u());
    };
  }
}
