// An in-memory Backend with realistic demo data. Used by component tests and
// by `npm run dev` in a plain browser. It follows SPEC §3-§4 closely enough
// that the UI behaves as with the real engine (LIFO, expectedId, messages).
import { BackendError, WHOLE_FILE_CONTEXT, type AgentSettingsInput, type Backend, type Unsubscribe } from './backend';
import type {
  AgentEvent, AgentSettings, AgentUpdate, ConversationView, NewConversationOutcome, Policy, Proposal,
  ActionKind, ActionStatus, ActionSummary, FileDiff, FileEntry, HistoryEntry, QueueChanged,
  QueueSnapshot, RenameRow, ResolveChoice, ResolveOutcome, ScriptStep, SessionInfo, ToolCallInfo,
  ToolInfo, ToolProgress, ToolRunOutcome,
} from './generated/protocol';
import { makeFileDiff } from './fakeDiff';
import { bulkFiles, DEMO_ASSETS, headerFiles, smallAstEditFiles, type DemoFile } from './demoData';
import { languageForPath } from '../lib/language';
import { parseScriptLine, scriptLines, type ScriptCall } from '../lib/script';
// The agent's events come from the protocol fixtures the Rust side round-trips, so the
// double cannot drift from the wire types.
import AGENT_UPDATES from '../../../crates/protocol/fixtures/agent_updates.json';
import AGENT_SETTINGS from '../../../crates/protocol/fixtures/agent_settings.json';

type FakeAction = {
  id: string;
  label: string;
  sourceToolName: string;
  createdAtMs: number;
  status: ActionStatus;
  kind: ActionKind;
  origin: ToolCallInfo | null;
  files: DemoFile[];
  renames: RenameRow[];
  /** Text of a successful apply. */
  appliedText: string;
  /** Text of a discard without reject. */
  discardText: (reason: string) => string;
  /** The next apply fails with this error (once). */
  failNextApply?: string;
  proposal?: Proposal | null;
};

export type FakeOptions = {
  /** Simulated round-trip time of every call. */
  latencyMs?: number;
  /** Clock, for deterministic tests. */
  now?: () => number;
  /** `demo` (default) fills the queue; `empty` starts with nothing pending. */
  scenario?: 'demo' | 'empty';
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const DEMO_TOOLS: ToolInfo[] = [
  {
    name: 'ast_edit',
    label: 'AST Edit',
    description:
      'Structural search and rewrite across the workspace. Shows a preview; nothing is written until the action is applied.',
    parameters: {
      type: 'object',
      properties: {
        ops: {
          type: 'array', description: 'Rewrite operations, applied in order', minItems: 1,
          items: {
            type: 'object',
            properties: {
              pat: { type: 'string', description: 'Pattern to match, e.g. console.log($A)', minLength: 1 },
              out: { type: 'string', description: 'Replacement (empty deletes the match)' },
            },
            required: ['pat', 'out'],
          },
        },
        lang: { type: 'string', description: 'Language', enum: ['typescript', 'javascript', 'rust', 'python', 'go', 'css', 'json'] },
        path: { type: 'string', description: 'File, directory, glob or comma-separated list relative to the workspace root' },
        glob: { type: 'string', description: 'Extra filter relative to path' },
        limit: { type: 'integer', description: 'Maximum replacements', minimum: 1 },
      },
      required: ['ops'],
    },
    hidden: false,
  },
  {
    name: 'batch_rename_preview',
    label: 'Batch rename',
    description: 'Rename files by regular expression. Shows an old → new table first.',
    parameters: {
      type: 'object',
      properties: {
        files: { type: 'array', description: 'Paths or globs relative to the workspace', minItems: 1, items: { type: 'string', minLength: 1 } },
        find: { type: 'string', description: 'Regular expression matched against each file name', minLength: 1 },
        replace: { type: 'string', description: 'Replacement with $1-style captures' },
      },
      required: ['files', 'find', 'replace'],
    },
    hidden: false,
  },
  {
    name: 'resolve',
    label: 'Resolve',
    description: 'Apply or discard the pending action on top of the stack.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['apply', 'discard'] },
        reason: { type: 'string', minLength: 1 },
        expected_id: { type: 'string' },
      },
      required: ['action', 'reason'],
    },
    hidden: true,
  },
];

function countLines(files: DemoFile[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const f of files) {
    const d = makeFileDiff(f.path, f.oldLines(), f.newLines(), 0);
    added += d.added;
    removed += d.removed;
  }
  return { added, removed };
}

function globToRegExp(glob: string): RegExp {
  const esc = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\u0000').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]').replace(/\u0000/g, '.*');
  return new RegExp(`^${esc}$`);
}

export class FakeBackend implements Backend {
  private actions: FakeAction[] = []; // top first
  private history: HistoryEntry[] = [];
  private revision = 1;
  private nextId = 1;
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
    this.session = { workspaceRoot: '/home/demo/shop-frontend', isDemo: true, policy: 'human', revision: 1 };
    if ((options.scenario ?? 'demo') === 'demo') this.seed();
  }

  private seed(): void {
    const t = this.now();
    const min = 60_000;
    const headers = headerFiles();
    this.pushAction({
      label: 'License headers: update copyright year in 9 files',
      sourceToolName: 'license_headers', kind: 'changeSet', createdAtMs: t - 41 * min, files: headers,
      origin: { tool: 'license_headers', params: { year: 2025 } },
      status: { kind: 'failed', error: 'Permission denied (os error 13): vendor/bundle.min.js is read-only' },
      appliedText: 'Applied: License headers: update copyright year in 9 files.',
    });
    const bulk = bulkFiles(1000, 5);
    this.pushAction({
      label: 'AST Edit: 5000 replacements in 1000 files', sourceToolName: 'ast_edit', kind: 'changeSet',
      createdAtMs: t - 18 * min, files: bulk,
      counts: { added: 5000, removed: 5000 },
      origin: { tool: 'ast_edit', params: { ops: [{ pat: 'console.log($$$A)', out: 'logger.debug($$$A)' }], path: 'src', glob: '**/steps/*.ts' } },
      appliedText: 'Applied 5000 replacements in 1000 files.',
    });
    this.pushAction(this.renameAction(['assets/*.PNG'], '^img_(\\d+)\\.PNG$', 'image-$1.png', t - 6 * min));
    const renameTop = this.actions[0]!;
    renameTop.status = {
      kind: 'stale', files: ['assets/img_002.PNG'],
      message: '1 file changed on disk since the preview: assets/img_002.PNG',
    };
    this.pushAction({
      label: 'AST Edit: 3 replacements in 2 files', sourceToolName: 'ast_edit', kind: 'changeSet',
      createdAtMs: t - 2 * min, files: smallAstEditFiles(),
      origin: { tool: 'ast_edit', params: { ops: [{ pat: 'console.log($A)', out: 'logger.debug($A)' }], lang: 'typescript', path: 'src' } },
      appliedText: 'Applied 3 replacements in 2 files.',
    });
    this.history = [
      {
        action: 'discard', label: 'AST Edit: 12 replacements in 7 files', sourceToolName: 'ast_edit',
        reason: 'Wrong scope: it also rewrote the test helpers', text: 'Discarded: AST Edit: 12 replacements in 7 files. Reason: Wrong scope: it also rewrote the test helpers',
        isError: false, atMs: t - 55 * min, actionId: 'act-demo-2', earlierSession: false,
        decidedBy: 'person', client: null,
        proposal: { choice: 'discard', reason: 'It rewrote files outside src/', client: 'gpt-4o-mini', callId: 'call-demo-1' },
      },
      {
        action: 'apply', label: 'Batch rename: 2 files', sourceToolName: 'batch_rename_preview',
        reason: 'Looks correct', text: 'Renamed 2 files.', isError: false, atMs: t - 70 * min, actionId: 'act-demo-1', earlierSession: true,
        decidedBy: 'person', client: null, proposal: null,
      },
    ];
  }

  private pushAction(a: {
    label: string; sourceToolName: string; kind: ActionKind; createdAtMs: number; files: DemoFile[];
    renames?: RenameRow[]; origin: ToolCallInfo | null; status?: ActionStatus; appliedText: string;
    counts?: { added: number; removed: number }; discardText?: (reason: string) => string;
  }): FakeAction {
    const action: FakeAction = {
      id: `act-${String(this.nextId++).padStart(4, '0')}`,
      label: a.label, sourceToolName: a.sourceToolName, createdAtMs: a.createdAtMs,
      status: a.status ?? { kind: 'pending' }, kind: a.kind, origin: a.origin, files: a.files,
      renames: a.renames ?? [], appliedText: a.appliedText,
      discardText: a.discardText ?? ((reason) => `Discarded: ${a.label}. Reason: ${reason}`),
    };
    if (a.counts) countCache.set(action, a.counts);
    this.actions.unshift(action);
    return action;
  }

  private renameAction(files: string[], find: string, replace: string, createdAtMs: number) {
    let re: RegExp;
    try {
      re = new RegExp(find);
    } catch (e) {
      throw new BackendError('invalidParams', `find is not a valid regular expression: ${find} (${(e as Error).message})`);
    }
    const globs = files.map(globToRegExp);
    const rows: RenameRow[] = [];
    for (const path of DEMO_ASSETS) {
      if (!globs.some((g) => g.test(path))) continue;
      const dir = path.slice(0, path.lastIndexOf('/') + 1);
      const name = path.slice(dir.length);
      if (!name.includes('.')) { rows.push({ from: path, to: path, status: 'directorySkipped' }); continue; }
      const to = dir + name.replace(re, replace);
      rows.push({ from: path, to, status: to === path ? 'unchanged' : 'rename' });
    }
    const n = rows.filter((r) => r.status === 'rename').length;
    if (n === 0) throw new BackendError('invalidParams', `No file name matched ${find} in ${files.join(', ')}`);
    return {
      label: `Batch rename: ${plural(n, 'file')}`, sourceToolName: 'batch_rename_preview', kind: 'rename' as const,
      createdAtMs, files: [], renames: rows,
      origin: { tool: 'batch_rename_preview', params: { files, find, replace } },
      appliedText: `Renamed ${plural(n, 'file')}.`,
      discardText: (reason: string) => `Discarded batch rename of ${plural(n, 'file')}. Reason: ${reason}`,
    };
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
  }

  private find(actionId: string): FakeAction {
    const a = this.actions.find((x) => x.id === actionId);
    if (!a) throw new BackendError('unknownAction', `No pending action with id ${actionId}`);
    return a;
  }

  private summary(a: FakeAction, index: number): ActionSummary {
    const counts = countCache.get(a) ?? countLines(a.files);
    countCache.set(a, counts);
    return {
      id: a.id, label: a.label, sourceToolName: a.sourceToolName, pushedBy: null, createdAtMs: a.createdAtMs,
      status: a.status, isTop: index === 0, kind: a.kind, origin: a.origin, proposal: a.proposal ?? null,
      counts: {
        files: a.kind === 'rename' ? a.renames.length : a.files.length,
        added: counts.added, removed: counts.removed,
        renames: a.renames.filter((r) => r.status === 'rename').length,
      },
    };
  }

  // ---- Backend ----

  async getSession(): Promise<SessionInfo> {
    await this.delay();
    return { ...this.session };
  }

  async listActions(): Promise<QueueSnapshot> {
    await this.delay();
    return { revision: this.revision, actions: this.actions.map((a, i) => this.summary(a, i)) };
  }

  async getActionFiles(actionId: string): Promise<FileEntry[]> {
    await this.delay();
    const a = this.find(actionId);
    return a.files.map((f) => {
      const big = f.binary || f.tooLarge;
      const d = big ? { added: 0, removed: 0 } : makeFileDiff(f.path, f.oldLines(), f.newLines(), 0);
      return {
        path: f.path, oldPath: f.oldPath ?? null, change: f.change, binary: !!f.binary,
        tooLarge: !!f.tooLarge, added: d.added, removed: d.removed,
      };
    });
  }

  async getFileDiff(actionId: string, path: string, context: number | null): Promise<FileDiff> {
    await this.delay(Math.min(this.latencyMs, 120));
    const a = this.find(actionId);
    const f = a.files.find((x) => x.path === path);
    if (!f) throw new BackendError('unknownFile', `${path} is not part of action ${actionId}`);
    if (f.binary || f.tooLarge) {
      return {
        path, oldPath: f.oldPath ?? null, language: languageForPath(path), summary: f.summary ?? 'Binary file',
        hunks: [], added: 0, removed: 0,
      };
    }
    const ctx = Math.min(Math.max(context ?? 3, 0), WHOLE_FILE_CONTEXT);
    return makeFileDiff(path, f.oldLines(), f.newLines(), ctx, f.oldPath ?? null);
  }

  async getActionRenames(actionId: string): Promise<RenameRow[]> {
    await this.delay();
    return this.find(actionId).renames.map((r) => ({ ...r }));
  }

  async resolveAction(action: ResolveChoice, reason: string, expectedId: string): Promise<ResolveOutcome> {
    if (this.resolving) throw new BackendError('busy', 'Another resolve is already running. Wait for it to finish.');
    this.resolving = true;
    try {
      await this.delay();
      if (reason.trim() === '') {
        throw new BackendError('reasonRequired', '`reason` must be a non-empty string: say why you apply or discard.');
      }
      const top = this.actions[0];
      if (!top) throw new BackendError('noPendingAction', 'No pending action to resolve. Nothing to apply or discard.');
      if (top.id !== expectedId) {
        throw new BackendError('idMismatch', `The top action is ${top.id}, not ${expectedId}. Nothing was applied or discarded.`);
      }
      const details = { action, reason, sourceToolName: top.sourceToolName, label: top.label, actionId: top.id };
      const proposal = top.proposal ?? null;
      const record = (text: string, isError: boolean) =>
        this.history.unshift({
          action, label: top.label, sourceToolName: top.sourceToolName, reason, text, isError, atMs: this.now(),
          actionId: top.id, earlierSession: false, decidedBy: this.resolvingAs, client: this.resolvingAs === 'agent' ? this.settings.model : null, proposal,
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
        if (top.failNextApply) {
          const error = top.failNextApply;
          top.failNextApply = undefined;
          top.status = { kind: 'failed', error };
          record(error, true);
          this.bump();
          return settle({ isError: true, text: error, details, status: top.status });
        }
        this.actions.shift();
        record(top.appliedText, false);
        this.bump();
        return settle({ isError: false, text: top.appliedText, details, status: null });
      }
      this.actions.shift();
      const text = top.discardText(reason);
      record(text, false);
      this.bump();
      return settle({ isError: false, text, details, status: null });
    } finally {
      this.resolving = false;
    }
  }

  async listHistory(): Promise<HistoryEntry[]> {
    await this.delay();
    return this.history.map((h) => ({ ...h }));
  }

  async listTools(): Promise<ToolInfo[]> {
    await this.delay();
    return structuredClone(DEMO_TOOLS);
  }

  private progress(callId: string, done: number, total: number | null, message: string | null) {
    const e: ToolProgress = { callId, done, total, message };
    this.progressListeners.forEach((h) => h(e));
  }

  async runTool(name: string, params: unknown): Promise<ToolRunOutcome> {
    const callId = `call-${this.nextCall++}`;
    const tool = DEMO_TOOLS.find((t) => t.name === name);
    if (!tool) throw new BackendError('unknownTool', `Unknown tool: ${name}`);
    const p = (params ?? {}) as Record<string, unknown>;
    const total = 4;
    for (let i = 0; i < total; i++) {
      this.progress(callId, i, total, i === 0 ? 'Collecting files' : `Scanning batch ${i} of ${total - 1}`);
      await this.delay(this.latencyMs / 2);
    }
    this.progress(callId, total, total, 'Building preview');
    if (name === 'ast_edit') {
      const ops = p.ops;
      if (!Array.isArray(ops) || ops.length === 0) {
        return { callId, isError: true, text: '`ops` must include at least one op entry', details: null };
      }
      const first = ops[0] as { pat?: unknown; out?: unknown };
      if (typeof first.pat !== 'string' || first.pat.trim() === '') {
        return { callId, isError: true, text: '`ops[0].pat` must be a non-empty pattern', details: null };
      }
      const pat = first.pat.replace(/\$\$?\$?[A-Z_]+/g, '').replace(/\)$/, '');
      const out = String(first.out ?? '').replace(/\$\$?\$?[A-Z_]+/g, '').replace(/\)$/, '');
      const fileCount = 3;
      const perFile = 2;
      const limit = typeof p.limit === 'number' ? p.limit : Infinity;
      const n = Math.min(fileCount * perFile, limit);
      const files = bulkFiles(fileCount, perFile, pat, out);
      const label = `AST Edit: ${plural(n, 'replacement')} in ${plural(fileCount, 'file')}`;
      const a = this.pushAction({
        label, sourceToolName: 'ast_edit', kind: 'changeSet', createdAtMs: this.now(), files,
        origin: { tool: name, params: structuredClone(p) }, appliedText: `Applied ${plural(n, 'replacement')} in ${plural(fileCount, 'file')}.`,
      });
      this.bump();
      return {
        callId, isError: false,
        text: `${plural(n, 'replacement')} in ${plural(fileCount, 'file')}. This is a preview. Call the resolve tool to apply or discard these changes.`,
        details: { actionId: a.id, replacements: n, files: fileCount },
      };
    }
    if (name === 'batch_rename_preview') {
      const files = Array.isArray(p.files) ? p.files.map(String) : [];
      try {
        const spec = this.renameAction(files, String(p.find ?? ''), String(p.replace ?? ''), this.now());
        const a = this.pushAction(spec);
        this.bump();
        return { callId, isError: false, text: `${spec.label}. This is a preview. Call the resolve tool to apply or discard these changes.`, details: { actionId: a.id } };
      } catch (e) {
        if (e instanceof BackendError) return { callId, isError: true, text: e.message, details: null };
        throw e;
      }
    }
    throw new BackendError('invalidParams', `${name} cannot be run from here`);
  }

  async rerunAction(actionId: string): Promise<ToolRunOutcome> {
    await this.delay();
    const a = this.find(actionId);
    a.status = { kind: 'pending' };
    a.createdAtMs = this.now();
    this.bump();
    return { callId: `call-${this.nextCall++}`, isError: false, text: `Preview recomputed: ${a.label}.`, details: { actionId } };
  }

  // Like the shell's `run_script`: blank and `#` lines are skipped, tool errors
  // are reported in-band, a malformed line rejects the whole call.
  async runScript(text: string): Promise<ScriptStep[]> {
    const steps: ScriptStep[] = [];
    const lines = scriptLines(text);
    for (let i = 0; i < lines.length; i++) {
      let call: ScriptCall | null;
      try {
        call = parseScriptLine(i + 1, lines[i]!);
      } catch (e) {
        throw new BackendError('invalidParams', `${(e as Error).message}; the steps before it ran.`);
      }
      if (!call) continue;
      try {
        const out = await this.runTool(call.tool, call.params);
        steps.push({ step: call.line, tool: call.tool, isError: out.isError, text: out.text });
      } catch (e) {
        steps.push({ step: call.line, tool: call.tool, isError: true, text: (e as Error).message });
      }
    }
    return steps;
  }

  async openWorkspace(path: string): Promise<SessionInfo> {
    await this.delay();
    if (!path.startsWith('/')) throw new BackendError('notFound', `Folder not found: ${path}`);
    this.cancelTurn();
    this.agentUpdates = [];
    this.session = { workspaceRoot: path, isDemo: false, policy: 'human', revision: this.revision };
    this.recent = [path, ...this.recent.filter((p) => p !== path)].slice(0, 8);
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
        `The policy cannot change while ${plural(this.actions.length, 'action')} ${this.actions.length === 1 ? 'is' : 'are'} pending; resolve or discard them first.`,
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
        const id = (out.details as { actionId: string }).actionId;
        this.emitAgent(turn, { ...event, text: out.text, pushedActionIds: [id] });
      } else if (event.kind === 'waitingForPerson') {
        const top = this.actions[0];
        if (!top) continue;
        const proposal: Proposal = { choice: event.proposedAction ?? 'apply', reason: event.proposedReason ?? '', client: this.settings.model, callId: event.callId };
        if (this.session.policy === 'agent') {
          this.resolvingAs = 'agent';
          const o = await this.resolveAction(proposal.choice, proposal.reason, top.id).finally(() => (this.resolvingAs = 'person'));
          this.emitAgent(turn, this.resolveResult(event.step, event.callId, o, 'agent'));
          continue;
        }
        top.proposal = proposal;
        this.bump();
        this.emitAgent(turn, { ...event, actionId: top.id });
        const decided = await Promise.race([new Promise<ResolveOutcome>((r) => this.waiters.set(top.id, r)), cancelled]);
        if (decided === 'cancelled') {
          top.proposal = null;
          this.waiters.delete(top.id);
          this.bump();
          this.emitAgent(turn, { kind: 'toolResult', step: event.step, callId: event.callId, tool: 'resolve', isError: true, text: 'The wait for a person was cancelled; the action is still pending.', pushedActionIds: [], resolved: null });
          break;
        }
        this.emitAgent(turn, this.resolveResult(event.step, event.callId, decided, 'person'));
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

  private resolveResult(step: number, callId: string, o: ResolveOutcome, decidedBy: 'person' | 'agent'): AgentEvent {
    const d = o.details;
    const text = decidedBy === 'person' && d ? `${o.text}\nDecided by the person: ${d.action === 'apply' ? 'applied' : 'discarded'}. Reason: ${d.reason}` : o.text;
    return {
      kind: 'toolResult', step, callId, tool: 'resolve', isError: o.isError, text, pushedActionIds: [],
      resolved: d && !o.isError ? { action: d.action, reason: d.reason, label: d.label, actionId: d.actionId, decidedBy } : null,
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
      throw new BackendError('reasonRequired', `${plural(this.actions.length, 'action')} pending: give a reason to discard them before starting a new conversation.`);
    }
    this.cancelTurn();
    const discarded: string[] = [];
    while (this.actions[0]) {
      const out = await this.resolveAction('discard', discardReason ?? '', this.actions[0].id);
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
    this.settings = { ...this.settings, ...input, apiKeyIsSet: input.apiKeyEnv === 'OPENAI_API_KEY' ? this.settings.apiKeyIsSet : false };
    return { ...this.settings };
  }

  async onAgentEvent(handler: (u: AgentUpdate) => void): Promise<Unsubscribe> {
    this.agentListeners.add(handler);
    return () => this.agentListeners.delete(handler);
  }

  // ---- test hooks ----

  /** The next agent turn plays the failing turn of agent_updates.json (a retry, then an error). */
  failNextTurn(): void {
    this.failTurn = true;
  }

  /** Makes the next apply of the top action fail with `error`. */
  failNextApply(error: string): void {
    const top = this.actions[0];
    if (top) top.failNextApply = error;
  }
}

const countCache = new WeakMap<FakeAction, { added: number; removed: number }>();
