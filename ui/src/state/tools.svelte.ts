// Running tools and scripts from the window ("Run tool…", "Run script…").
import type { Backend, ScriptStep, ToolInfo, ToolProgress, ToolRunOutcome } from '../ipc/backend';
import { message, type Review } from './review.svelte';

export class ToolRunner {
  tools: ToolInfo[] = $state([]);
  running = $state(false);
  progress: ToolProgress | null = $state(null);
  result: ToolRunOutcome | null = $state(null);
  error: string | null = $state(null);

  // The dialog shows only the progress events that arrive while its run is in
  // flight (one tool runs at a time from the UI) and clears them when it ends.
  // Events are delivered asynchronously, so a late one of the previous run
  // (known by its outcome's `callId`) is ignored too.
  private lastCallId: string | null = null;

  constructor(private readonly backend: Backend, private readonly review: Review) {}

  /** Resets the dialog and loads the tool list. */
  async open() {
    this.result = null;
    this.error = null;
    try {
      this.tools = await this.backend.listTools();
    } catch (err) {
      this.error = message(err);
    }
  }

  onProgress(p: ToolProgress) {
    if (this.running && p.callId !== this.lastCallId) this.progress = p;
  }

  async run(name: string, params: unknown) {
    this.running = true;
    this.progress = null;
    this.result = null;
    this.error = null;
    try {
      this.result = await this.backend.runTool(name, params);
      this.lastCallId = this.result.callId;
      await this.review.refreshQueue();
    } catch (err) {
      this.error = message(err);
    } finally {
      this.running = false;
      this.progress = null;
    }
  }

  // The script dialog shows its own results and errors; this refreshes the queue after.
  runScript = async (text: string): Promise<ScriptStep[]> => {
    try {
      return await this.backend.runScript(text);
    } finally {
      void this.review.refreshQueue();
    }
  };
}
