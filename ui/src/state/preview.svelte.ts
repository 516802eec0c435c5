// The centre of the window: the selected action's files (or rename rows) and the diff of
// the selected file. Reloads when another action is selected or its preview was recomputed.
import { untrack } from 'svelte';
import type { ActionSummary, Backend, FileDiff, FileEntry, RenameRow } from '../ipc/backend';
import type { DiffMode } from '../components/DiffView.svelte';
import { allUnfolded, UNFOLD_STEP, unfoldAll, type LineHiddenMap, type Unfold } from '../lib/diffRows';
import { cancelHighlighting, highlightFile } from '../lib/highlighter';
import { splitLines } from '../lib/lines';
import { mark } from '../lib/startup';
import { message, type Review } from './review.svelte';

/** The selected file's whole text, each side cut into lines, and its highlighted lines once ready. */
export type FileLines = {
  old: string[] | null;
  new: string[] | null;
  oldHtml: string[] | null;
  newHtml: string[] | null;
  /** The old side's hidden characters by line (unfolded lines show them as diff lines do). */
  oldHidden?: LineHiddenMap;
};

export class Preview {
  // Raw (not deeply reactive): replaced whole on each load, never changed in place; a deep proxy of a
  // 25,000-line diff costs seconds and hundreds of MiB.
  files: FileEntry[] = $state.raw([]);
  filesLoading = $state(false);
  /** The file list (or rename table) could not be read. */
  filesError: string | null = $state(null);
  renames: RenameRow[] = $state.raw([]);
  selectedPath: string | null = $state(null);
  diff: FileDiff | null = $state.raw(null);
  diffLoading = $state(false);
  diffError: string | null = $state(null);
  /** The selected file's text (for unfolding and highlighting); `null` until loaded. */
  lines: FileLines | null = $state.raw(null);
  /** How much of each gap between hunks is unfolded, by gap index. */
  unfolds: Record<number, Unfold> = $state({});
  mode: DiffMode = $state('unified');
  /** Nothing is folded any more ("Show whole file" done). */
  get expanded(): boolean {
    return this.diff !== null && allUnfolded(this.diff, this.lines?.old?.length ?? (this.lines ? 0 : null), this.unfolds);
  }

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
    if (this.selectedPath) void this.selectFile(this.selectedPath);
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
        mark('files_loaded');
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
      this.lines = null;
      this.unfolds = {};
    }
    this.selectedPath = path;
    this.diffLoading = true;
    this.diffError = null;
    try {
      const d = await this.backend.getFileDiff(action.id, path, context);
      if (token === this.diffToken) {
        this.diff = d;
        mark('diff_loaded');
        if (!d.summary && d.hunks.length > 0) void this.loadLines(action.id, path, d.language, token);
      }
    } catch (err) {
      if (token === this.diffToken) this.diffError = message(err);
    } finally {
      if (token === this.diffToken) this.diffLoading = false;
    }
  }

  /** What changed in one file of a review's next round since the previous round. */
  roundDiff(actionId: string, path: string) {
    return this.backend.getRoundDiff(actionId, path);
  }

  /** Both sides of one file whole (the editor of "edit, then apply" starts from them). */
  fileTexts(actionId: string, path: string) {
    return this.backend.getFileTexts(actionId, path);
  }

  /**
   * The file's whole text (both sides), then its highlighting, whole file at a time in the
   * highlight worker. The diff is on screen meanwhile (plain text); a failure here only costs
   * the colours and the unfolding, never the diff.
   */
  private async loadLines(actionId: string, path: string, language: string | null, token: number) {
    try {
      const texts = await this.backend.getFileTexts(actionId, path);
      if (token !== this.diffToken) return;
      const lines: FileLines = {
        old: texts.old === null ? null : splitLines(texts.old),
        new: texts.new === null ? null : splitLines(texts.new),
        oldHtml: null,
        newHtml: null,
      };
      if (texts.oldHidden?.length) lines.oldHidden = new Map(texts.oldHidden.map((l) => [l.line, l.chars]));
      this.lines = lines;
      mark('texts_loaded');
      cancelHighlighting();
      const [oldHtml, newHtml] = await Promise.all([
        texts.old === null ? null : highlightFile(texts.old, language),
        texts.new === null ? null : highlightFile(texts.new, language),
      ]);
      if (token !== this.diffToken) return;
      this.lines = { ...lines, oldHtml, newHtml };
      mark('highlighted');
    } catch {
      // Unfolding and colours are extras: the diff itself is shown.
    }
  }

  /** Unfolds `count` more lines of gap `index`, from the hunk above it (`down`) or below it (`up`). */
  unfold(index: number, direction: 'up' | 'down' | 'all', count = UNFOLD_STEP) {
    const u = this.unfolds[index] ?? { top: 0, bottom: 0 };
    const big = Number.MAX_SAFE_INTEGER;
    const next =
      direction === 'all' ? { top: big, bottom: 0 }
      : direction === 'down' ? { top: u.top + count, bottom: u.bottom }
      : { top: u.top, bottom: u.bottom + count };
    this.unfolds = { ...this.unfolds, [index]: next };
  }

  /** "Show whole file": every gap unfolded (once the file's text is here). */
  expand() {
    if (this.diff && this.lines) this.unfolds = unfoldAll(this.diff, this.lines.old?.length ?? 0);
  }

  /** j/k: the next or previous of `paths` (the file list as shown, filter applied). */
  moveFile(delta: number, paths: string[] = this.files.map((f) => f.path)) {
    if (paths.length === 0) return;
    const i = this.selectedPath ? paths.indexOf(this.selectedPath) : -1;
    const next = paths[Math.min(paths.length - 1, Math.max(0, i + delta))];
    if (next && next !== this.selectedPath) void this.selectFile(next);
  }
}
