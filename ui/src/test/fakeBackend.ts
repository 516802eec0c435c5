// The test double: an in-memory Backend driven by the protocol fixtures. Test-only (and
// the plain-browser `npm run dev` mode, imported dynamically): it is not in the app's bundle.
//
// It keeps a LIFO stack of actions whose wire values (summaries, files, diffs, rename rows)
// come from a `Scenario` -- `ui/src/ipc/fixtures/demo.json`, written from the real demo
// workspace by the shell's tests, or one built from crates/protocol/fixtures. It computes
// none of the backend's rules (no diffing, script parsing, labels or plurals): running a tool
// pushes a copy of a scenario action of that tool, `runScript` answers the scenario's steps.
import { BackendError, type AgentSettingsInput, type Backend, type PickPathsOptions, type Unsubscribe } from '../ipc/backend';
import type {
  AgentEvent, AgentSettings, AgentUpdate, CloseRequested, ConversationView, ExportFormat, ExportOutcome,
  HistoryPage, HistoryQuery, NewConversationOutcome, Notice, Policy, Proposal,
  ActionSummary, FileDiff, FileEntry, FileTexts, HistoryEntry, QueueChanged,
  QueueSnapshot, RenameRow, ResolveChoice, ResolveOutcome, ScriptStep, SessionInfo,
  ToolInfo, ToolLog, ToolProgress, ToolRunOutcome, SincePreview, LeaveOut, FileReplacements,
  FolderInfo, FolderList, FoldersChanged, InboxItem, DeskSettings, RevealAction,
  CommentDraft, ReviewComment, Review, PersonEdit,
} from '../ipc/generated/protocol';
import DEMO_JSON from '../ipc/fixtures/demo.json';
// The agent's events come from the protocol fixtures the Rust side round-trips, so the
// double cannot drift from the wire types.
import AGENT_UPDATES from '../../../crates/protocol/fixtures/agent_updates.json';
import AGENT_SETTINGS from '../../../crates/protocol/fixtures/agent_settings.json';

/** What the double serves: the shape of `ui/src/ipc/fixtures/demo.json`. */
export type Scenario = {
  session: SessionInfo;
  tools: ToolInfo[];
  queue: QueueSnapshot;
  files: Record<string, FileEntry[]>;
  diffs: Record<string, Record<string, FileDiff>>;
  renames: Record<string, RenameRow[]>;
  history: HistoryEntry[];
  scriptSteps: ScriptStep[];
  /** Both sides of each file whole, by action id and path (absent: no text, as for a binary file). */
  texts?: Record<string, Record<string, FileTexts>>;
  /** By action id, then path: the diff against the previous round of a review. */
  roundDiffs?: Record<string, Record<string, FileDiff>>;
  /** What changed since the preview, by action id and stale file (live staleness). */
  sincePreview?: Record<string, Record<string, SincePreview>>;
  /** The single replacements of `ast_edit` files, by action id and path (partial apply). */
  replacements?: Record<string, Record<string, FileReplacements>>;
};

/** The real demo workspace, as the shell's commands serve it. */
export const DEMO: Scenario = DEMO_JSON as Scenario;

type FakeAction = {
  summary: Omit<ActionSummary, 'isTop'>;
  files: FileEntry[];
  diffs: Record<string, FileDiff>;
  texts?: Record<string, FileTexts>;
  renames: RenameRow[];
  /** The next apply fails with this error (once). */
  failNextApply?: string;
  /** The number of the next comment id (`c<n>`). */
  nextComment?: number;
};

export type FakeOptions = {
  /** Simulated round-trip time of every call. */
  latencyMs?: number;
  /** Clock, for deterministic tests. */
  now?: () => number;
  /**
   * `demo` (default): `DEMO`; `empty`: nothing pending and no history (running a tool still
   * pushes copies of DEMO's actions); or a scenario of the test's own.
   */
  scenario?: 'demo' | 'empty' | Scenario;
  /** Banners the backend shows from the start (e.g. a journal that could not be opened). */
  notices?: Notice[];
};

function actionsOf(s: Scenario): FakeAction[] {
  return s.queue.actions.map(({ isTop: _, ...summary }) => structuredClone({
    summary,
    files: s.files[summary.id] ?? [],
    diffs: s.diffs[summary.id] ?? {},
    texts: s.texts?.[summary.id] ?? {},
    renames: s.renames[summary.id] ?? [],
  }));
}

const PREVIEW_NOTE = 'This is a preview. Call the resolve tool to apply or discard these changes.';

export class FakeBackend implements Backend {
  private actions: FakeAction[] = []; // top first
  /** What running a tool pushes a copy of (the first of that tool). */
  private readonly templates: FakeAction[];
  private readonly tools: ToolInfo[];
  private readonly scriptSteps: ScriptStep[];
  private readonly sincePreview: Record<string, Record<string, SincePreview>>;
  private readonly replacements: Record<string, Record<string, FileReplacements>>;
  private readonly roundDiffs: Record<string, Record<string, FileDiff>>;
  /** Every `leaveOut` an apply was sent with (`null`: a full apply), oldest first. */
  readonly leaveOuts: (LeaveOut | null)[] = [];
  /** Every `edits` an apply was sent with (`null`: none), oldest first. */
  readonly editsSent: (PersonEdit[] | null)[] = [];
  private history: HistoryEntry[] = [];
  private revision: number;
  private nextCall = 1;
  private resolving = false;
  private session: SessionInfo;
  private recent = ['/home/demo/shop-frontend', '/home/demo/payments-service', '/home/demo/design-system'];
  private queueListeners = new Set<(e: QueueChanged) => void>();
  private progressListeners = new Set<(e: ToolProgress) => void>();
  private readonly latencyMs: number;
  private readonly now: () => number;

  constructor(options: FakeOptions = {}) {
    this.latencyMs = options.latencyMs ?? 0;
    this.now = options.now ?? (() => Date.now());
    const choice = options.scenario ?? 'demo';
    const scenario = typeof choice === 'string' ? DEMO : choice;
    this.templates = actionsOf(scenario);
    this.tools = structuredClone(scenario.tools);
    this.scriptSteps = structuredClone(scenario.scriptSteps);
    this.sincePreview = structuredClone(scenario.sincePreview ?? {});
    this.replacements = structuredClone(scenario.replacements ?? {});
    this.roundDiffs = structuredClone(scenario.roundDiffs ?? {});
    this.session = structuredClone(scenario.session);
    this.revision = scenario.queue.revision;
    this.session.revision = this.revision;
    this.notices = structuredClone(options.notices ?? []);
    if (choice !== 'empty') {
      this.actions = actionsOf(scenario);
      this.history = structuredClone(scenario.history);
    }
    this.folderOrder = [this.session.workspaceRoot];
  }

  private async delay(ms = this.latencyMs): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((r) => setTimeout(r, ms));
  }

  private bump(): void {
    this.revision++;
    this.session.revision = this.revision;
    const event = { revision: this.revision };
    queueMicrotask(() => this.queueListeners.forEach((h) => h(event)));
    this.foldersChanged(this.session.workspaceRoot);
  }

  // ---- folders: the shown one is `session`/`actions`/`history`; the others are parked ----

  private folderOrder: string[] = [];
  private parked = new Map<string, { actions: FakeAction[]; history: HistoryEntry[]; session: SessionInfo }>();
  private foldersListeners = new Set<(e: FoldersChanged) => void>();

  private foldersChanged(root: string) {
    const event = { root };
    queueMicrotask(() => this.foldersListeners.forEach((h) => h(event)));
  }

  private folderInfo(root: string): FolderInfo {
    const shown = root === this.session.workspaceRoot;
    const f = shown ? { actions: this.actions, session: this.session } : this.parked.get(root)!;
    const name = root.split('/').filter(Boolean).pop() ?? root;
    return {
      root, name, isDemo: f.session.isDemo, pending: f.actions.length, waiting: !!f.actions[0]?.summary.proposal?.waiting, active: shown,
    };
  }

  async listFolders(): Promise<FolderList> {
    await this.delay();
    return { folders: this.folderOrder.map((r) => this.folderInfo(r)), active: this.session.workspaceRoot };
  }

  private park() {
    this.parked.set(this.session.workspaceRoot, { actions: this.actions, history: this.history, session: this.session });
  }

  private unpark(root: string) {
    const f = this.parked.get(root)!;
    this.parked.delete(root);
    this.actions = f.actions;
    this.history = f.history;
    this.session = f.session;
  }

  async selectFolder(root: string): Promise<SessionInfo> {
    await this.delay();
    if (!this.folderOrder.includes(root)) throw new BackendError('notFound', `${root} is not an open folder of this desk; reload the folder list, or open it first.`);
    if (root !== this.session.workspaceRoot) {
      this.park();
      this.unpark(root);
      this.bump();
    }
    return { ...this.session };
  }

  async closeFolder(root: string): Promise<FolderList> {
    await this.delay();
    if (!this.folderOrder.includes(root)) throw new BackendError('notFound', `${root} is not an open folder of this desk; reload the folder list, or open it first.`);
    if (this.folderOrder.length === 1) throw new BackendError('invalidParams', `${root} is the only open folder; open another one first, or close the window.`);
    const i = this.folderOrder.indexOf(root);
    this.folderOrder.splice(i, 1);
    if (root === this.session.workspaceRoot) this.unpark(this.folderOrder[Math.min(i, this.folderOrder.length - 1)]!);
    else this.parked.delete(root);
    this.bump();
    return this.listFolders();
  }

  async listInbox(): Promise<InboxItem[]> {
    await this.delay();
    const items: InboxItem[] = [];
    for (const root of this.folderOrder) {
      const actions = root === this.session.workspaceRoot ? this.actions : this.parked.get(root)!.actions;
      const folder = root.split('/').filter(Boolean).pop() ?? root;
      actions.forEach((a, i) => items.push({ root, folder, position: i + 1, of: actions.length, action: { ...structuredClone(a.summary), isTop: i === 0 } }));
    }
    return items.sort((a, b) => b.action.createdAtMs - a.action.createdAtMs);
  }

  deskSettings: DeskSettings = { notifications: true, tray: true };
  async getDeskSettings(): Promise<DeskSettings> {
    await this.delay();
    return { ...this.deskSettings };
  }
  async saveDeskSettings(settings: DeskSettings): Promise<DeskSettings> {
    await this.delay();
    this.deskSettings = { ...settings };
    return { ...this.deskSettings };
  }
  private revealListeners = new Set<(e: RevealAction) => void>();
  async onRevealAction(handler: (e: RevealAction) => void): Promise<Unsubscribe> {
    this.revealListeners.add(handler);
    return () => this.revealListeners.delete(handler);
  }
  /** The person clicked a notification about `actionId` in `root`: as the desk does, shows that folder, then tells the page. */
  async clickNotification(root: string, actionId: string): Promise<void> {
    await this.selectFolder(root);
    const event = { root, actionId };
    queueMicrotask(() => this.revealListeners.forEach((h) => h(event)));
  }

  async onFoldersChanged(handler: (e: FoldersChanged) => void): Promise<Unsubscribe> {
    this.foldersListeners.add(handler);
    return () => this.foldersListeners.delete(handler);
  }

  /** Another process (`resolve-desk DIR`, `rdesk mcp`) opened `root` beside the others, not shown. */
  openElsewhere(root: string, scenario: 'empty' | Scenario = 'empty'): void {
    const actions = scenario === 'empty' ? [] : actionsOf(scenario);
    const session: SessionInfo = { workspaceRoot: root, isDemo: false, policy: 'human', revision: this.revision };
    this.parked.set(root, { actions, history: [], session });
    this.folderOrder.push(root);
    this.foldersChanged(root);
  }

  private find(actionId: string): FakeAction {
    const a = this.actions.find((x) => x.summary.id === actionId);
    if (!a) throw new BackendError('unknownAction', `No pending action with id ${actionId}`);
    return a;
  }

  private newId(): string {
    const taken = new Set([...this.actions, ...this.templates].map((a) => a.summary.id));
    for (let n = taken.size + 1; ; n++) {
      const id = `act-${String(n).padStart(4, '0')}`;
      if (!taken.has(id)) return id;
    }
  }

  /** Pushes a copy of the scenario's first action of `tool`, as a new preview. */
  private pushCopyOf(tool: string, params: unknown): FakeAction | null {
    const template = this.templates.find((t) => t.summary.sourceToolName === tool);
    if (!template) return null;
    const a = structuredClone(template);
    a.summary = {
      ...a.summary, id: this.newId(), createdAtMs: this.now(), status: { kind: 'pending' }, proposal: null,
      pushedBy: null, origin: { tool, params: structuredClone(params ?? {}) },
    };
    this.actions.unshift(a);
    this.bump();
    return a;
  }

  // ---- Backend ----

  async getSession(): Promise<SessionInfo> {
    await this.delay();
    return { ...this.session };
  }

  async listActions(): Promise<QueueSnapshot> {
    await this.delay();
    return {
      revision: this.revision,
      actions: this.actions.map((a, i) => structuredClone({ ...a.summary, isTop: i === 0 })),
    };
  }

  async getActionFiles(actionId: string): Promise<FileEntry[]> {
    await this.delay();
    return structuredClone(this.find(actionId).files);
  }

  /** The scenario's diff (computed by the real backend at its default context); `context` is ignored. */
  async getFileDiff(actionId: string, path: string, _context: number | null): Promise<FileDiff> {
    await this.delay(Math.min(this.latencyMs, 120));
    const diff = this.find(actionId).diffs[path];
    if (!diff) throw new BackendError('unknownFile', `${path} is not part of action ${actionId}`);
    return structuredClone(diff);
  }

  /** Scenario `roundDiffs` (by action id, then path): the engine's diff against the previous round. */
  async getRoundDiff(actionId: string, path: string): Promise<FileDiff> {
    await this.delay(Math.min(this.latencyMs, 120));
    const diff = this.roundDiffs[actionId]?.[path];
    if (!diff) throw new BackendError('unknownFile', `${path} of action ${actionId} has no previous round to compare with.`);
    return structuredClone(diff);
  }

  /** The scenario's texts for the file; both sides `null` when the scenario has none. */
  async getFileTexts(actionId: string, path: string): Promise<FileTexts> {
    await this.delay(Math.min(this.latencyMs, 120));
    const action = this.find(actionId);
    if (!action.diffs[path]) throw new BackendError('unknownFile', `${path} is not part of action ${actionId}`);
    return structuredClone(action.texts?.[path] ?? { path, old: null, new: null });
  }

  /** Logs of the scenario's external tools, by name (`setToolLog`); the built-ins have none. */
  private toolLogs = new Map<string, string>();
  setToolLog(name: string, text: string) {
    this.toolLogs.set(name, text);
  }

  /** Start-up marks the page sent (tests may read them). */
  startupMarks: Array<[string, number]> | null = null;
  async startupPainted(marks: Array<[string, number]>): Promise<void> {
    this.startupMarks = marks;
  }

  async readToolLog(name: string): Promise<ToolLog> {
    await this.delay();
    const text = this.toolLogs.get(name);
    if (text === undefined) {
      throw new BackendError('unknownTool', `${name} is not an external tool of this workspace: only tools in .resolve/tools or your tools folder have a log.`);
    }
    return { tool: name, path: `/home/me/.local/state/resolve-desk/tool-logs/${name}.log`, text };
  }

  async getActionRenames(actionId: string): Promise<RenameRow[]> {
    await this.delay();
    return structuredClone(this.find(actionId).renames);
  }

  async resolveAction(action: ResolveChoice, reason: string, expectedId: string, leaveOut: LeaveOut | null = null, edits: PersonEdit[] | null = null): Promise<ResolveOutcome> {
    if (this.resolving) throw new BackendError('busy', 'Another resolve is already running. Wait for it to finish.');
    this.resolving = true;
    try {
      await this.delay();
      if (reason.trim() === '') {
        throw new BackendError('reasonRequired', '`reason` must be a non-empty string: say why you apply or discard.');
      }
      const topAction = this.actions[0];
      if (!topAction) throw new BackendError('noPendingAction', 'No pending action to resolve. Nothing to apply or discard.');
      const top = topAction.summary;
      if (top.id !== expectedId) {
        throw new BackendError('idMismatch', `The top action is ${top.id}, not ${expectedId}. Nothing was applied or discarded.`);
      }
      const comments = top.comments ?? [];
      const review: Review | null =
        action === 'requestChanges' || comments.length > 0 ? { requestChanges: action === 'requestChanges', comments: structuredClone(comments) } : null;
      const details = { action, reason, sourceToolName: top.sourceToolName, label: top.label, actionId: top.id, review };
      /** The review's lines after the decision line (the real text is the engine's; this stands in). */
      const reviewText = (applied: boolean) => {
        if (!review) return '';
        const head = review.requestChanges
          ? comments.length === 0 ? 'Changes requested (no line comments).' : `Changes requested: ${comments.length} comment${comments.length === 1 ? '' : 's'}, in file order:`
          : `Review: ${comments.length} comment${comments.length === 1 ? '' : 's'}, in file order:`;
        return ['', ...(applied ? [`Reason: ${reason}`] : []), head, ...comments.map((c) => c.rendered)].join('\n');
      };
      const proposal = top.proposal ?? null;
      const record = (text: string, isError: boolean) =>
        this.history.unshift({
          action, label: top.label, badge: top.badge, summary: top.summary, sourceToolName: top.sourceToolName, reason, text, isError, atMs: this.now(),
          actionId: top.id, earlierSession: false, decidedBy: this.resolvingAs, client: this.resolvingAs === 'agent' ? this.settings.model : null, proposal,
          undo: action === 'apply' && !isError && top.kind !== 'custom' ? { state: 'canUndo', note: null } : null,
          askedBy: top.pushedBy ?? null,
          partialText: null,
          review: isError ? null : review,
        });
      const settle = (outcome: ResolveOutcome) => {
        if (!outcome.isError || outcome.status === null) {
          const waiter = this.waiters.get(top.id);
          this.waiters.delete(top.id);
          waiter?.(outcome);
        }
        return outcome;
      };
      if (action === 'apply') {
        if (top.status.kind === 'stale') {
          const text = `Cannot apply: ${top.status.message}. Run the preview again or discard it.`;
          record(text, true);
          this.bump();
          return settle({ isError: true, text, details, status: top.status });
        }
        if (topAction.failNextApply) {
          const error = topAction.failNextApply;
          topAction.failNextApply = undefined;
          top.status = { kind: 'failed', error };
          record(error, true);
          this.bump();
          return settle({ isError: true, text: error, details, status: top.status });
        }
        // The selection is kept for tests; what it leaves out is the engine's rule, not the double's.
        this.leaveOuts.push(leaveOut ? structuredClone(leaveOut) : null);
        this.editsSent.push(edits && edits.length > 0 ? structuredClone(edits) : null);
        this.actions.shift();
        const head = edits && edits.length > 0 ? `Applied with the person's edits: ${top.label}.` : `Applied: ${top.label}.`;
        const text = `${head}${reviewText(true)}`;
        record(text, false);
        this.bump();
        return settle({ isError: false, text, details, status: null });
      }
      this.actions.shift();
      const text = `Discarded: ${top.label}. Reason: ${reason}${reviewText(false)}`;
      record(text, false);
      this.bump();
      return settle({ isError: false, text, details, status: null });
    } finally {
      this.resolving = false;
    }
  }

  async listHistory(): Promise<HistoryEntry[]> {
    await this.delay();
    return structuredClone(this.history);
  }

  /** A stand-in for the journal's search: the same filters over the scenario's history. */
  async searchHistory(query: HistoryQuery, offset: number, limit: number): Promise<HistoryPage> {
    await this.delay();
    const matching = this.matchHistory(query);
    const tools = [...new Set(this.history.map((h) => h.sourceToolName))].sort();
    return { entries: structuredClone(matching.slice(offset, offset + limit)), offset, total: matching.length, tools };
  }

  /** Files "written" by exportHistory, by path. */
  exported = new Map<string, { format: ExportFormat; entries: HistoryEntry[] }>();
  /** What pickSaveFile answers (`null`: the person cancels). */
  saveAnswer: string | null = '/home/demo/history-export';

  async exportHistory(query: HistoryQuery, format: ExportFormat, path: string): Promise<ExportOutcome> {
    await this.delay();
    const entries = this.matchHistory(query);
    this.exported.set(path, { format, entries: structuredClone(entries) });
    return { path, count: entries.length };
  }

  async pickSaveFile(defaultName: string, format: ExportFormat): Promise<string | null> {
    return this.saveAnswer === null ? null : `${this.saveAnswer}.${format}`;
  }

  private matchHistory(q: HistoryQuery): HistoryEntry[] {
    const needle = q.text.trim().toLowerCase();
    return this.history.filter((h) => {
      const outcome = h.isError ? 'failed' : h.action === 'apply' ? 'applied' : h.action === 'discard' ? 'discarded' : 'reverted';
      const text = [h.label, h.reason, h.text, h.sourceToolName, h.client ?? ''].join('\n').toLowerCase();
      return (!q.tool || q.tool === h.sourceToolName)
        && (!q.outcome || q.outcome === outcome)
        && (q.fromMs == null || h.atMs >= q.fromMs)
        && (q.toMs == null || h.atMs < q.toMs)
        && (!needle || text.includes(needle));
    });
  }

  /** Undo refusals to serve (decision id → message), as the backend words them. */
  undoRefusals = new Map<string, string>();

  async undoDecision(decisionId: string, reason: string): Promise<ResolveOutcome> {
    return this.revert(decisionId, reason, 'undo');
  }

  async redoDecision(decisionId: string, reason: string): Promise<ResolveOutcome> {
    return this.revert(decisionId, reason, 'redo');
  }

  private async revert(decisionId: string, reason: string, verb: 'undo' | 'redo'): Promise<ResolveOutcome> {
    await this.delay();
    if (reason.trim() === '') throw new BackendError('reasonRequired', `A reason is required: say why you ${verb} it.`);
    const entry = this.history.find((h) => h.actionId === decisionId && h.action === 'apply' && !h.isError);
    if (!entry?.undo) throw new BackendError('unknownAction', `Decision ${decisionId} has no undo data.`);
    if (entry.undo.state === 'expired') {
      throw new BackendError('invalidParams', `"${entry.label}" can no longer be undone: its undo data expired by retention.`);
    }
    if ((verb === 'undo') !== (entry.undo.state === 'canUndo')) {
      throw new BackendError('invalidParams', `"${entry.label}" cannot be ${verb}ne now; reload the history.`);
    }
    const refusal = this.undoRefusals.get(decisionId);
    if (refusal) {
      entry.undo = { ...entry.undo, note: refusal };
      return { isError: true, text: refusal, details: null, status: null };
    }
    entry.undo = { state: verb === 'undo' ? 'undone' : 'canUndo', note: null };
    const done = verb === 'undo' ? 'Undone' : 'Redone';
    const text = `${done}: ${entry.label}.`;
    const actionId = `${decisionId}-${verb}-${this.now()}`;
    this.history.unshift({
      ...structuredClone(entry), action: verb, reason, text, atMs: this.now(), actionId, earlierSession: false,
      decidedBy: 'person', client: null, proposal: null, undo: null, askedBy: null,
    });
    this.bump();
    return { isError: false, text, details: { action: verb, reason, sourceToolName: entry.sourceToolName, label: entry.label, actionId, review: null }, status: null };
  }

  async listTools(): Promise<ToolInfo[]> {
    await this.delay();
    return structuredClone(this.tools);
  }

  private progress(callId: string, done: number, total: number | null, message: string | null) {
    const e: ToolProgress = { callId, done, total, message };
    this.progressListeners.forEach((h) => h(e));
  }

  async runTool(name: string, params: unknown): Promise<ToolRunOutcome> {
    const callId = `call-${this.nextCall++}`;
    if (!this.tools.some((t) => t.name === name)) throw new BackendError('unknownTool', `Unknown tool: ${name}`);
    const total = 4;
    for (let i = 0; i < total; i++) {
      this.progress(callId, i, total, i === 0 ? 'Collecting files' : `Scanning batch ${i} of ${total - 1}`);
      await this.delay(this.latencyMs / 2);
    }
    this.progress(callId, total, total, 'Building preview');
    await this.hold();
    const a = this.pushCopyOf(name, params);
    if (!a) return { callId, isError: true, text: `${name} has no preview in this scenario`, details: null };
    return { callId, isError: false, text: `${a.summary.label}. ${PREVIEW_NOTE}`, details: { action_id: a.summary.id } };
  }

  async rerunAction(actionId: string): Promise<ToolRunOutcome> {
    const callId = `call-${this.nextCall++}`;
    await this.delay();
    this.find(actionId);
    this.progress(callId, 1, 2, 'Recomputing the preview');
    await this.hold();
    const a = this.find(actionId);
    a.summary.status = { kind: 'pending' };
    a.summary.createdAtMs = this.now();
    this.bump();
    return { callId, isError: false, text: `Preview recomputed: ${a.summary.label}.`, details: { action_id: actionId } };
  }

  /** The scenario's steps, whatever the text (the double parses nothing); each step that ran pushes its preview. */
  async runScript(_text: string): Promise<ScriptStep[]> {
    await this.delay();
    // As run_script: its own progress under the call id `script`.
    this.progress('script', 0, this.scriptSteps.length, 'line 1');
    await this.hold('Cancelled before line 1: the 0 step(s) before it ran.');
    for (const s of this.scriptSteps) if (!s.isError) this.pushCopyOf(s.tool, {});
    return structuredClone(this.scriptSteps);
  }

  async openWorkspace(path: string): Promise<SessionInfo> {
    await this.delay();
    if (!path.startsWith('/')) throw new BackendError('notFound', `Folder not found: ${path}`);
    this.recent = [path, ...this.recent.filter((p) => p !== path)].slice(0, 8);
    if (this.folderOrder.includes(path)) return this.selectFolder(path);
    this.cancelTurn();
    this.agentUpdates = [];
    this.park();
    this.folderOrder.push(path);
    this.session = { workspaceRoot: path, isDemo: false, policy: 'human', revision: this.revision };
    this.actions = [];
    this.history = [];
    this.bump();
    return { ...this.session };
  }

  async recentWorkspaces(): Promise<string[]> {
    await this.delay();
    return [...this.recent];
  }

  async pickFolder(): Promise<string | null> {
    return '/home/demo/payments-service';
  }

  async onQueueChanged(handler: (e: QueueChanged) => void): Promise<Unsubscribe> {
    this.queueListeners.add(handler);
    return () => this.queueListeners.delete(handler);
  }

  async onToolProgress(handler: (e: ToolProgress) => void): Promise<Unsubscribe> {
    this.progressListeners.add(handler);
    return () => this.progressListeners.delete(handler);
  }

  // ---- the agent ----

  private settings: AgentSettings = structuredClone(AGENT_SETTINGS) as AgentSettings;
  private agentListeners = new Set<(u: AgentUpdate) => void>();
  private agentUpdates: AgentUpdate[] = [];
  private turn = 0;
  private running: { turn: number; cancelled: boolean; cancel: () => void } | null = null;
  /** Resolves when a person decides the action an agent's `resolve` waits on. */
  private waiters = new Map<string, (o: ResolveOutcome) => void>();
  private resolvingAs: 'person' | 'agent' = 'person';
  private failTurn = false;

  private emitAgent(turn: number, event: AgentEvent) {
    const u: AgentUpdate = { turn, event };
    this.agentUpdates.push(u);
    this.agentListeners.forEach((h) => h(structuredClone(u)));
  }

  async setPolicy(policy: Policy): Promise<SessionInfo> {
    await this.delay();
    if (this.actions.length > 0) {
      throw new BackendError(
        'invalidParams',
        `The policy cannot change while actions are pending (${this.actions.length}); resolve or discard them first.`,
      );
    }
    this.session = { ...this.session, policy };
    return { ...this.session };
  }

  async startAgentTurn(prompt: string): Promise<number> {
    if (this.running) throw new BackendError('busy', 'The agent is already working on a turn. Stop it or wait for it to finish.');
    const turn = ++this.turn;
    let cancel!: () => void;
    const cancelled = new Promise<'cancelled'>((r) => (cancel = () => r('cancelled')));
    const run = { turn, cancelled: false, cancel: () => { run.cancelled = true; cancel(); } };
    this.running = run;
    this.emitAgent(turn, { kind: 'prompt', text: prompt });
    void this.playTurn(turn, cancelled).finally(() => {
      if (this.running === run) this.running = null;
    });
    return turn;
  }

  /** Plays turn 1 of agent_updates.json on this backend's own stack (or turn 2, a failure). */
  private async playTurn(turn: number, cancelled: Promise<'cancelled'>) {
    const script = (AGENT_UPDATES as AgentUpdate[]).filter((u) => u.turn === (this.failTurn ? 2 : 1) && u.event.kind !== 'prompt');
    this.failTurn = false;
    let steps = 0;
    for (const { event } of script) {
      await this.delay(this.latencyMs / 4);
      if (this.running?.turn === turn && this.running.cancelled) break;
      if ('step' in event) steps = event.step;
      if (event.kind === 'toolResult' && event.tool === 'ast_edit') {
        const out = await this.runTool('ast_edit', { ops: [{ pat: 'console.log($A)', out: 'logger.debug($A)' }], path: 'src' });
        const id = (out.details as { action_id: string }).action_id;
        this.emitAgent(turn, { ...event, text: out.text, pushedActionIds: [id] });
      } else if (event.kind === 'waitingForPerson') {
        const top = this.actions[0]?.summary;
        if (!top) continue;
        const proposal: Proposal = { choice: event.proposedAction ?? 'apply', reason: event.proposedReason ?? '', client: this.settings.model, callId: event.callId, waiting: true };
        if (this.session.policy === 'agent') {
          this.resolvingAs = 'agent';
          const o = await this.resolveAction(proposal.choice, proposal.reason, top.id).finally(() => (this.resolvingAs = 'person'));
          this.emitAgent(turn, this.resolveResult(event.step, event.callId, o, 'agent', top));
          continue;
        }
        top.proposal = proposal;
        this.bump();
        this.emitAgent(turn, { ...event, actionId: top.id });
        const decided = await Promise.race([new Promise<ResolveOutcome>((r) => this.waiters.set(top.id, r)), cancelled]);
        if (decided === 'cancelled') {
          // As the desk does: the proposal stays, shown as no longer waiting.
          top.proposal = { ...proposal, waiting: false };
          this.waiters.delete(top.id);
          this.bump();
          this.emitAgent(turn, { kind: 'toolResult', step: event.step, callId: event.callId, tool: 'resolve', isError: true, text: 'The wait for a person was cancelled; the action is still pending.', pushedActionIds: [], resolved: null });
          break;
        }
        this.emitAgent(turn, this.resolveResult(event.step, event.callId, decided, 'person', top));
      } else if (event.kind === 'toolResult' && event.tool === 'resolve') {
        // Replaced by the decision above.
      } else if (event.kind === 'turnDone') {
        break;
      } else {
        this.emitAgent(turn, event);
      }
    }
    const wasCancelled = this.running?.turn === turn && this.running.cancelled;
    const last = script[script.length - 1]?.event;
    const outcome = wasCancelled ? 'cancelled' : last?.kind === 'turnDone' ? last.outcome : 'answered';
    this.emitAgent(turn, { kind: 'turnDone', outcome, steps });
  }

  /** "Not now": as the desk does, the waiting agent is answered and the proposal stays, not waiting. */
  async snoozeAction(actionId: string): Promise<number> {
    await this.delay();
    const action = this.find(actionId).summary;
    if (!action.proposal?.waiting) return 0;
    action.proposal = { ...action.proposal, waiting: false };
    const waiter = this.waiters.get(actionId);
    this.waiters.delete(actionId);
    waiter?.({
      isError: false,
      text: `The person will review ${actionId} ("${action.label}") later; nothing was applied or discarded.`,
      details: null,
      status: null,
    });
    this.bump();
    return 1;
  }

  private resolveResult(step: number, callId: string, o: ResolveOutcome, decidedBy: 'person' | 'agent', action: { badge: string | null; summary: string }): AgentEvent {
    const d = o.details;
    const text = decidedBy === 'person' && d ? `${o.text}\nDecided by the person: ${d.action === 'apply' ? 'applied' : 'discarded'}. Reason: ${d.reason}` : o.text;
    return {
      kind: 'toolResult', step, callId, tool: 'resolve', isError: o.isError, text, pushedActionIds: [],
      resolved: d && !o.isError ? { action: d.action, reason: d.reason, label: d.label, badge: action.badge, summary: action.summary, actionId: d.actionId, decidedBy } : null,
    };
  }

  private cancelTurn() {
    this.running?.cancel();
  }

  async stopAgentTurn(): Promise<void> {
    await this.delay();
    this.cancelTurn();
  }

  async newConversation(discardReason: string | null): Promise<NewConversationOutcome> {
    await this.delay();
    if (this.actions.length > 0 && (discardReason ?? '').trim() === '') {
      throw new BackendError('reasonRequired', `Actions pending (${this.actions.length}): give a reason to discard them before starting a new conversation.`);
    }
    this.cancelTurn();
    const discarded: string[] = [];
    while (this.actions[0]) {
      const out = await this.resolveAction('discard', discardReason ?? '', this.actions[0].summary.id);
      discarded.push(out.text);
    }
    this.agentUpdates = [];
    return { discarded };
  }

  async getConversation(): Promise<ConversationView> {
    await this.delay();
    return { runningTurn: this.running?.turn ?? null, updates: structuredClone(this.agentUpdates) };
  }

  async getAgentSettings(): Promise<AgentSettings> {
    await this.delay();
    return { ...this.settings };
  }

  async saveAgentSettings(input: AgentSettingsInput): Promise<AgentSettings> {
    await this.delay();
    if (!/^https?:\/\/./.test(input.baseUrl)) {
      throw new BackendError('invalidParams', `base URL "${input.baseUrl}" must start with http:// or https:// (e.g. https://api.openai.com/v1)`);
    }
    if (input.model.trim() === '') throw new BackendError('invalidParams', 'the model name is empty: set one (e.g. gpt-4o-mini, or llama3.1 for Ollama)');
    const { apiKey, forgetApiKey, ...fields } = input;
    const apiKeyIsSet = input.apiKeyEnv === 'OPENAI_API_KEY' ? this.settings.apiKeyIsSet : false;
    // Like the keyring: a key typed is kept here only as "stored", never returned.
    let stored = this.settings.apiKeySource === 'keyring';
    if (apiKey) stored = true;
    if (forgetApiKey) stored = false;
    this.settings = { ...this.settings, ...fields, apiKeyIsSet, apiKeySource: apiKeyIsSet ? 'environment' : stored ? 'keyring' : 'none' };
    return { ...this.settings };
  }

  async onAgentEvent(handler: (u: AgentUpdate) => void): Promise<Unsubscribe> {
    this.agentListeners.add(handler);
    return () => this.agentListeners.delete(handler);
  }

  // ---- notices ----

  private notices: Notice[] = [];
  private noticeListeners = new Set<(n: Notice[]) => void>();

  async listNotices(): Promise<Notice[]> {
    await this.delay();
    return structuredClone(this.notices);
  }

  async dismissNotice(id: string): Promise<Notice[]> {
    await this.delay();
    const n = this.notices.find((x) => x.id === id);
    if (n && !n.dismissible) {
      throw new BackendError('invalidParams', `The notice \`${id}\` stays while its problem lasts; fix the problem it describes.`);
    }
    if (n) this.setNotices(this.notices.filter((x) => x.id !== id));
    return structuredClone(this.notices);
  }

  /** The buttons the fake knows: "Not now" puts the banner away; a trust button (`trust:…`) trusts and the banner goes. */
  noticeActions: { noticeId: string; actionId: string }[] = [];

  async noticeAction(noticeId: string, actionId: string): Promise<Notice[]> {
    await this.delay();
    const n = this.notices.find((x) => x.id === noticeId);
    if (!n || !n.actions.some((a) => a.id === actionId)) {
      throw new BackendError('invalidParams', `The banner \`${noticeId}\` has no button \`${actionId}\`; reload the window.`);
    }
    this.noticeActions.push({ noticeId, actionId });
    this.setNotices(this.notices.filter((x) => x.id !== noticeId));
    return structuredClone(this.notices);
  }

  async onNoticesChanged(handler: (n: Notice[]) => void): Promise<Unsubscribe> {
    this.noticeListeners.add(handler);
    return () => this.noticeListeners.delete(handler);
  }

  private setNotices(list: Notice[]) {
    this.notices = list;
    const copy = structuredClone(list);
    queueMicrotask(() => this.noticeListeners.forEach((h) => h(structuredClone(copy))));
  }

  async discardAll(reason: string, folder: string | null = null): Promise<string[]> {
    await this.delay();
    const shown = this.session.workspaceRoot;
    const roots = folder === null ? [...this.folderOrder] : [folder];
    if (!roots.every((r) => this.folderOrder.includes(r))) throw new BackendError('notFound', `${folder} is not an open folder of this desk; reload the folder list, or open it first.`);
    const discarded: string[] = [];
    for (const root of roots) {
      if (root !== this.session.workspaceRoot) { this.park(); this.unpark(root); }
      try {
        if (this.actions.length > 0 && reason.trim() === '') {
          throw new BackendError('reasonRequired', `${this.actions.length} actions pending: give a reason to discard them before leaving this workspace.`);
        }
        while (this.actions[0]) {
          const out = await this.resolveAction('discard', reason, this.actions[0].summary.id);
          discarded.push(out.text);
        }
      } finally {
        if (root !== shown) { this.park(); this.unpark(shown); }
      }
    }
    return discarded;
  }

  private closeListeners = new Set<(e: CloseRequested) => void>();
  /** `true` once the UI answered a close request with "close"; the window is gone then. */
  closed = false;

  async onCloseRequested(handler: (e: CloseRequested) => void): Promise<Unsubscribe> {
    this.closeListeners.add(handler);
    return () => this.closeListeners.delete(handler);
  }

  async confirmClose(proceed: boolean): Promise<void> {
    await this.delay();
    if (proceed) this.closed = true;
  }

  // ---- picking paths and cancelling runs ----

  /** What the next `pickPaths` answers (workspace-relative), `null` = the person cancels, an Error = refused. */
  pickAnswer: string[] | null | BackendError = ['photos/IMG_0001.JPG', 'photos/IMG_0002.JPG'];
  /** The options of each `pickPaths` call. */
  readonly pickCalls: PickPathsOptions[] = [];

  async pickPaths(options: PickPathsOptions): Promise<string[] | null> {
    this.pickCalls.push({ ...options });
    await this.delay();
    const answer = this.pickAnswer;
    if (answer instanceof BackendError) throw answer;
    if (answer === null) return null;
    return options.multiple ? [...answer] : answer.slice(0, 1);
  }

  /**
   * Test hook: while `true`, a tool run, re-run or script waits after its progress events
   * (before pushing anything) until `releaseRuns()` or `cancelToolRun()`.
   */
  holdRuns = false;
  private held: { release: () => void; cancel: () => void } | null = null;

  /** `true` while a run waits (held). */
  get runHeld(): boolean {
    return this.held !== null;
  }

  private async hold(cancelled = 'The tool call was cancelled before it finished; nothing was pushed.'): Promise<void> {
    if (!this.holdRuns) return;
    await new Promise<void>((release, reject) => {
      this.held = { release, cancel: () => reject(new BackendError('cancelled', cancelled)) };
    });
  }

  /** Lets the held run finish (and later ones run through). */
  releaseRuns(): void {
    this.holdRuns = false;
    const h = this.held;
    this.held = null;
    h?.release();
  }

  async cancelToolRun(): Promise<void> {
    await this.delay();
    const h = this.held;
    this.held = null;
    h?.cancel();
  }

  // ---- test hooks ----

  /** The window's close button: closes at once when nothing is pending, else asks the UI. */
  requestClose(): void {
    const pending = this.actions.length + [...this.parked.values()].reduce((n, f) => n + f.actions.length, 0);
    if (pending === 0) {
      this.closed = true;
      return;
    }
    const event = { pending };
    queueMicrotask(() => this.closeListeners.forEach((h) => h(event)));
  }

  /** The backend shows `notice` (in place of one with the same id), as `notices-changed` does. */
  showNotice(notice: Notice): void {
    const rest = this.notices.filter((x) => x.id !== notice.id);
    const i = this.notices.findIndex((x) => x.id === notice.id);
    this.setNotices(i < 0 ? [...rest, notice] : this.notices.map((x) => (x.id === notice.id ? notice : x)));
  }

  /** The backend removes banner `id` (its problem is over). */
  removeNotice(id: string): void {
    this.setNotices(this.notices.filter((x) => x.id !== id));
  }

  /** The next agent turn plays the failing turn of agent_updates.json (a retry, then an error). */
  failNextTurn(): void {
    this.failTurn = true;
  }

  /** Makes the next apply of the top action fail with `error`. */
  failNextApply(error: string): void {
    const top = this.actions[0];
    if (top) top.failNextApply = error;
  }

  /** The scenario's since-preview diff of a stale file (computed by the real backend). */
  async getSincePreview(actionId: string, path: string): Promise<SincePreview> {
    await this.delay(Math.min(this.latencyMs, 120));
    this.find(actionId);
    const since = this.sincePreview[actionId]?.[path];
    if (!since) throw new BackendError('unknownFile', `Pending action ${actionId} does not preview ${path}; choose one of the files it names.`);
    return structuredClone(since);
  }

  /** The scenario's replacements of an `ast_edit` file (computed by the real backend). */
  async getFileReplacements(actionId: string, path: string): Promise<FileReplacements> {
    await this.delay(Math.min(this.latencyMs, 120));
    const action = this.find(actionId);
    if (!action.files.some((f) => f.path === path)) {
      throw new BackendError('unknownFile', `${path} is not part of action ${actionId}.`);
    }
    const found = this.replacements[actionId]?.[path];
    if (found) return structuredClone(found);
    return { path, replacements: [], note: 'Single replacements cannot be left out of this file; you can leave out the whole file.', unit: 'replacement' };
  }

  /** Every comment change made (tests read them). */
  readonly commentCalls: string[] = [];

  /**
   * The double's comments: quoted from the scenario's diff lines (the real quote is the
   * engine's, from the file's bytes); `rendered` stands in for the engine's line.
   */
  async addComment(actionId: string, draft: CommentDraft): Promise<ReviewComment[]> {
    await this.delay();
    const action = this.find(actionId);
    const diff = action.diffs[draft.path];
    if (!diff) throw new BackendError('invalidParams', `Cannot comment on "${draft.path}": it is not one of the action's files.`);
    if (draft.text.trim() === '') throw new BackendError('invalidParams', 'A comment needs some text: say what should change.');
    const end = draft.endLine ?? draft.startLine;
    const lines = diff.hunks.flatMap((h) => h.lines).filter((l) => {
      const no = draft.side === 'old' ? (l.kind === 'added' ? null : l.oldNo) : (l.kind === 'removed' ? null : l.newNo);
      return no !== null && no >= draft.startLine && no <= end;
    });
    const quote = lines.map((l) => l.text).join('\n');
    const n = action.nextComment ?? 1;
    action.nextComment = n + 1;
    const where = draft.startLine === end ? `${draft.startLine}` : `${draft.startLine}-${end}`;
    const marks = [draft.side === 'old' ? 'old side' : null, draft.replacementId !== null ? `replacement ${draft.replacementId}` : null].filter(Boolean);
    const comment: ReviewComment = {
      id: `c${n}`, path: draft.path, side: draft.side, startLine: draft.startLine, endLine: end, quote, text: draft.text.trimEnd(),
      replacementId: draft.replacementId ?? null,
      rendered: `${draft.path}:${where}: ${marks.length ? `(${marks.join(', ')}) ` : ''}${JSON.stringify(quote)} — ${draft.text.trimEnd()}`,
    };
    const list = [...(action.summary.comments ?? []), comment];
    list.sort((a, b) => a.path.localeCompare(b.path) || a.startLine - b.startLine);
    action.summary.comments = list;
    this.commentCalls.push(`add ${comment.id}`);
    this.bump();
    return structuredClone(list);
  }

  async editComment(actionId: string, commentId: string, text: string): Promise<ReviewComment[]> {
    await this.delay();
    const action = this.find(actionId);
    const c = action.summary.comments.find((x) => x.id === commentId);
    if (!c) throw new BackendError('notFound', `Action ${actionId} has no comment ${commentId} (deleted already?).`);
    if (text.trim() === '') throw new BackendError('invalidParams', 'A comment needs some text: say what should change.');
    c.rendered = c.rendered.slice(0, c.rendered.length - c.text.length) + text.trimEnd();
    c.text = text.trimEnd();
    this.commentCalls.push(`edit ${commentId}`);
    this.bump();
    return structuredClone(action.summary.comments);
  }

  async deleteComment(actionId: string, commentId: string): Promise<ReviewComment[]> {
    await this.delay();
    const action = this.find(actionId);
    if (!action.summary.comments.some((x) => x.id === commentId)) {
      throw new BackendError('notFound', `Action ${actionId} has no comment ${commentId} (deleted already?).`);
    }
    action.summary.comments = action.summary.comments.filter((x) => x.id !== commentId);
    this.commentCalls.push(`delete ${commentId}`);
    this.bump();
    return structuredClone(action.summary.comments);
  }

  /** Viewed marks, in path order, like the engine's (an unknown file is refused by name). */
  async setFileViewed(actionId: string, path: string, viewed: boolean): Promise<void> {
    await this.delay();
    const action = this.find(actionId);
    if (!action.files.some((f) => f.path === path)) {
      throw new BackendError('invalidParams', `Cannot mark ${JSON.stringify(path)} viewed: it is not one of the files of "${action.summary.label}".`);
    }
    const marks = new Set(action.summary.viewed ?? []);
    if (viewed) marks.add(path);
    else marks.delete(path);
    action.summary.viewed = [...marks].sort();
    this.bump();
  }
}
