// Running tools and scripts from the window ("Run tool…", "Run the preview again",
// "Run script…"): one at a time, with the progress the backend reports (`tool-progress`)
// and a Cancel that stops the call in flight (nothing is pushed).
import { BackendError, toBackendError, type Backend, type PickPathsOptions, type ScriptStep, type ToolInfo, type ToolProgress, type ToolRunOutcome } from '../ipc/backend';
import { message, type Review } from './review.svelte';

/** What a cancelled run says. */
export const CANCELLED_TEXT = 'Cancelled: nothing was pushed.';

export type RunKind = 'tool' | 'rerun' | 'script';

/** The call id of a script's own progress events (`run_script`). */
export const SCRIPT_CALL_ID = 'script';

export class ToolRunner {
  tools: ToolInfo[] = $state([]);
  /** The run in flight, if any. */
  activity: RunKind | null = $state(null);
  progress: ToolProgress | null = $state(null);
  result: ToolRunOutcome | null = $state(null);
  error: string | null = $state(null);
  /** Set when the dialog's last run was cancelled. */
  cancelledNote: string | null = $state(null);
  cancelling = $state(false);
  /** Cancel was pressed during the run in flight. */
  private cancelRequested = false;
  /** A picker refusal (a path outside the workspace) or failure. */
  pickError: string | null = $state(null);

  /** The end of external tool `name`'s stderr log (rejects for a built-in tool). */
  readLog(name: string) {
    return this.backend.readToolLog(name);
  }

  /** The Run tool dialog's run is in flight. */
  get running(): boolean {
    return this.activity === 'tool';
  }

  // Only the progress events that arrive while a run is in flight are shown (one runs at a
  // time from the UI), cleared when it ends. Events are delivered asynchronously, so a late
  // one of the previous run (known by its outcome's `callId`) is ignored too.
  private lastCallId: string | null = null;

  /**
   * `onPushed`: a run from the dialog pushed a preview (the window closes the dialog and
   * selects the new card).
   */
  constructor(
    private readonly backend: Backend,
    private readonly review: Review,
    private readonly onPushed: (actionId: string) => void = () => {},
  ) {}

  /** Resets the dialog and loads the tool list. */
  async open() {
    this.result = null;
    this.error = null;
    this.cancelledNote = null;
    this.pickError = null;
    try {
      this.tools = await this.backend.listTools();
    } catch (err) {
      this.error = message(err);
    }
  }

  onProgress(p: ToolProgress) {
    if (this.activity === null || p.callId === this.lastCallId) return;
    // A script reports its own progress (call id `script`: lines done of lines to run);
    // its steps' tool progress would make the bar jump between the two.
    if (this.activity === 'script' && p.callId !== SCRIPT_CALL_ID) return;
    this.progress = p;
  }

  /** Runs `body` as the one run in flight; `null` when another one is running. */
  private async track<T>(kind: RunKind, body: () => Promise<T>): Promise<T | null> {
    if (this.activity !== null) return null;
    this.activity = kind;
    this.progress = null;
    this.cancelRequested = false;
    try {
      return await body();
    } finally {
      this.activity = null;
      this.progress = null;
      this.cancelling = false;
    }
  }

  async run(name: string, params: unknown) {
    this.result = null;
    this.error = null;
    this.cancelledNote = null;
    await this.track('tool', async () => {
      const before = new Set(this.review.actions.map((a) => a.id));
      try {
        const out = await this.backend.runTool(name, params);
        this.lastCallId = out.callId;
        // A cancelled call either rejects with `cancelled` or ends as an error outcome (the
        // tool's own "Cancelled: …"); either way nothing was pushed.
        if (out.isError && this.cancelRequested) this.cancelledNote = CANCELLED_TEXT;
        this.result = out;
        await this.review.refreshQueue();
        // The card this run pushed: the outcome's `action_id` when it names one, else the new
        // top (a preview is pushed on top; an agent's push in the same instant is not ours
        // to tell apart, and is shown either way).
        const top = this.review.top;
        const id = pushedId(out) ?? (top && !before.has(top.id) ? top.id : null);
        if (!out.isError && id !== null && this.review.actions.some((a) => a.id === id)) {
          this.review.banner = { text: out.text, isError: false };
          this.onPushed(id);
        }
      } catch (err) {
        const e = toBackendError(err);
        if (e.code === 'cancelled') this.cancelledNote = CANCELLED_TEXT;
        else this.error = e.message;
      }
    });
  }

  /** "Run the preview again" on the selected action, with progress and Cancel. */
  async rerun() {
    await this.track('rerun', async () => {
      const out = await this.review.rerun();
      if (out) this.lastCallId = out.callId;
      if (out?.isError && this.cancelRequested) this.review.banner = { text: CANCELLED_TEXT, isError: false };
    });
  }

  // The script dialog shows its own results and errors; this refreshes the queue after.
  runScript = async (text: string): Promise<ScriptStep[]> => {
    const steps = await this.track('script', async () => {
      try {
        // A cancelled script rejects with `cancelled`, naming the line it stopped before.
        return await this.backend.runScript(text);
      } finally {
        void this.review.refreshQueue();
      }
    });
    if (steps === null) throw new BackendError('busy', 'Another run is in progress; wait for it or cancel it.');
    return steps;
  };

  /** Cancels the run in flight (it then rejects with `cancelled`). */
  async cancel() {
    if (this.activity === null || this.cancelling) return;
    this.cancelling = true;
    this.cancelRequested = true;
    try {
      await this.backend.cancelToolRun();
    } catch (err) {
      this.cancelling = false;
      this.error = `Could not cancel: ${message(err)}`;
    }
  }

  /** Asks the person for paths in the workspace; `null` when they cancel or it is refused (`pickError`). */
  async pickPaths(options: PickPathsOptions): Promise<string[] | null> {
    this.pickError = null;
    try {
      return await this.backend.pickPaths(options);
    } catch (err) {
      this.pickError = message(err);
      return null;
    }
  }
}

/** The id of the action a run pushed: `details.action_id`, as `ast_edit` and
 * `batch_rename_preview` put it in their results (the details are the tool's own JSON, not a
 * wire type, so the key is snake_case). */
export function pushedId(out: ToolRunOutcome): string | null {
  const d = out.details as { action_id?: unknown } | null;
  return d && typeof d.action_id === 'string' ? d.action_id : null;
}
