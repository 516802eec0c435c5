// The centre of the window: the selected action's files (or rename rows) and the diff of
// the selected file. Reloads when another action is selected or its preview was recomputed.
import { untrack } from 'svelte';
import { WHOLE_FILE_CONTEXT, type ActionSummary, type Backend, type FileDiff, type FileEntry, type RenameRow } from '../ipc/backend';
import type { DiffMode } from '../components/DiffView.svelte';
import { message, type Review } from './review.svelte';

export class Preview {
  files: FileEntry[] = $state([]);
  filesLoading = $state(false);
  /** The file list (or rename table) could not be read. */
  filesError: string | null = $state(null);
  renames: RenameRow[] = $state([]);
  selectedPath: string | null = $state(null);
  diff: FileDiff | null = $state(null);
  diffLoading = $state(false);
  diffError: string | null = $state(null);
  expanded = $state(false);
  mode: DiffMode = $state('unified');

  private loadToken = 0;
  private diffToken = 0;

  /** Call during component initialisation (it starts an effect). */
  constructor(private readonly backend: Backend, private readonly review: Review) {
    // Reload the centre when another action is selected or the preview was recomputed.
    const key = $derived(review.selected ? `${review.selected.id}@${review.selected.createdAtMs}` : '');
    $effect(() => {
      if (!key) return;
      untrack(() => {
        const action = review.selected;
        if (action) void this.load(action);
      });
    });
  }

  toggleMode() {
    this.mode = this.mode === 'unified' ? 'split' : 'unified';
  }

  /** Reads the selected action's files (or rename rows) again, after a failed load. */
  retryFiles() {
    const action = this.review.selected;
    if (action) void this.load(action);
  }

  /** Reads the selected file's diff again, after a failed load. */
  retryDiff() {
    if (this.selectedPath) void this.selectFile(this.selectedPath, this.expanded ? WHOLE_FILE_CONTEXT : null);
  }

  private async load(action: ActionSummary) {
    const token = ++this.loadToken;
    this.files = [];
    this.renames = [];
    this.diff = null;
    this.diffError = null;
    this.filesError = null;
    this.selectedPath = null;
    this.filesLoading = true;
    try {
      if (action.kind === 'rename') {
        const rows = await this.backend.getActionRenames(action.id);
        if (token === this.loadToken) this.renames = rows;
      } else {
        const list = await this.backend.getActionFiles(action.id);
        if (token !== this.loadToken) return;
        this.files = list;
        if (list[0]) void this.selectFile(list[0].path);
      }
    } catch (err) {
      if (token === this.loadToken) this.filesError = message(err);
    } finally {
      if (token === this.loadToken) this.filesLoading = false;
    }
  }

  async selectFile(path: string, context: number | null = null) {
    const action = this.review.selected;
    if (!action) return;
    const token = ++this.diffToken;
    if (path !== this.selectedPath) {
      this.diff = null;
      this.expanded = false;
    }
    this.selectedPath = path;
    this.diffLoading = true;
    this.diffError = null;
    try {
      const d = await this.backend.getFileDiff(action.id, path, context);
      if (token === this.diffToken) {
        this.diff = d;
        this.expanded = context !== null && context >= WHOLE_FILE_CONTEXT;
      }
    } catch (err) {
      if (token === this.diffToken) this.diffError = message(err);
    } finally {
      if (token === this.diffToken) this.diffLoading = false;
    }
  }

  expand() {
    if (this.selectedPath) void this.selectFile(this.selectedPath, WHOLE_FILE_CONTEXT);
  }

  /** j/k: the next or previous of `paths` (the file list as shown, filter applied). */
  moveFile(delta: number, paths: string[] = this.files.map((f) => f.path)) {
    if (paths.length === 0) return;
    const i = this.selectedPath ? paths.indexOf(this.selectedPath) : -1;
    const next = paths[Math.min(paths.length - 1, Math.max(0, i + delta))];
    if (next && next !== this.selectedPath) void this.selectFile(next);
  }
}
