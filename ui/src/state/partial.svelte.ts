// Partial apply: what the person unticked, per action id. Nothing unticked = a full apply
// exactly as before (no `leaveOut` is sent). The engine checks the selection and says what
// was left out; this only keeps the ticks and words the Apply button.
import { untrack } from 'svelte';
import { toBackendError, type Backend, type FileReplacements, type LeaveOut, type PieceUnit } from '../ipc/backend';
import type { Preview } from './preview.svelte';
import type { Review } from './review.svelte';

/** `replacements`: per path, the ids unticked; `units`: whether a path's ids are ast_edit
 * replacements or hunks of its diff (what the backend's list said). */
type Picks = { files: Set<string>; replacements: Map<string, Set<number>>; units: Map<string, PieceUnit> };

export class PartialPicks {
  /** Per action id. Replaced (not mutated) on each change so `$state` sees it. */
  private picks: Map<string, Picks> = $state(new Map());

  private get(actionId: string): Picks | undefined {
    return this.picks.get(actionId);
  }

  private update(actionId: string, change: (p: Picks) => void) {
    const old = this.picks.get(actionId);
    const next: Picks = {
      files: new Set(old?.files ?? []),
      replacements: new Map([...(old?.replacements ?? new Map())].map(([k, v]) => [k, new Set(v)])),
      units: new Map(old?.units ?? []),
    };
    change(next);
    const map = new Map(this.picks);
    if (next.files.size === 0 && [...next.replacements.values()].every((s) => s.size === 0)) map.delete(actionId);
    else map.set(actionId, next);
    this.picks = map;
  }

  /** True when the whole file is left out. */
  fileLeftOut(actionId: string, path: string): boolean {
    return this.get(actionId)?.files.has(path) ?? false;
  }

  toggleFile(actionId: string, path: string) {
    this.update(actionId, (p) => {
      if (p.files.has(path)) p.files.delete(path);
      else p.files.add(path);
    });
  }

  replacementLeftOut(actionId: string, path: string, id: number): boolean {
    return this.get(actionId)?.replacements.get(path)?.has(id) ?? false;
  }

  /** Ticks or unticks one piece of `path`: an ast_edit replacement, or a hunk (`unit`). */
  toggleReplacement(actionId: string, path: string, id: number, unit: PieceUnit = 'replacement') {
    this.update(actionId, (p) => {
      p.units.set(path, unit);
      const ids = p.replacements.get(path) ?? new Set<number>();
      if (ids.has(id)) ids.delete(id);
      else ids.add(id);
      if (ids.size === 0) p.replacements.delete(path);
      else p.replacements.set(path, ids);
    });
  }

  /** Replacements left out of `path` (its file still applied). */
  replacementsLeftOut(actionId: string, path: string): number {
    return this.get(actionId)?.replacements.get(path)?.size ?? 0;
  }

  /** What to send with an apply; `null` when nothing is unticked (a full apply). */
  leaveOut(actionId: string): LeaveOut | null {
    const p = this.get(actionId);
    if (!p) return null;
    const replacements: Record<string, number[]> = {};
    const hunks: Record<string, number[]> = {};
    for (const [path, ids] of p.replacements) {
      if (ids.size === 0 || p.files.has(path)) continue;
      const into = p.units.get(path) === 'hunk' ? hunks : replacements;
      into[path] = [...ids].sort((a, b) => a - b);
    }
    const files = [...p.files];
    if (files.length === 0 && Object.keys(replacements).length === 0 && Object.keys(hunks).length === 0) return null;
    return Object.keys(hunks).length > 0 ? { files, replacements, hunks } : { files, replacements };
  }

  /** The Apply button's words: `Apply`, `Apply 38 of 40 files`, `Apply, leaving out 3 replacements`. */
  applyText(actionId: string | null, totalFiles: number): string {
    if (!actionId) return 'Apply';
    const sel = this.leaveOut(actionId);
    if (!sel) return 'Apply';
    const parts: string[] = [];
    if (sel.files.length > 0) {
      const kept = Math.max(totalFiles - sel.files.length, 0);
      parts.push(`Apply ${kept.toLocaleString('en-US')} of ${totalFiles.toLocaleString('en-US')} file${totalFiles === 1 ? '' : 's'}`);
    } else {
      parts.push('Apply');
    }
    const reps = Object.values(sel.replacements).reduce((n, ids) => n + (ids?.length ?? 0), 0);
    const hunks = Object.values(sel.hunks ?? {}).reduce((n, ids) => n + (ids?.length ?? 0), 0);
    const left: string[] = [];
    if (reps > 0) left.push(`${reps.toLocaleString('en-US')} replacement${reps === 1 ? '' : 's'}`);
    if (hunks > 0) left.push(`${hunks.toLocaleString('en-US')} hunk${hunks === 1 ? '' : 's'}`);
    if (left.length > 0) parts.push(`leaving out ${left.join(' and ')}`);
    return parts.join(', ');
  }

  /** Forgets an action's ticks (it was decided). */
  clear(actionId: string) {
    if (!this.picks.has(actionId)) return;
    const map = new Map(this.picks);
    map.delete(actionId);
    this.picks = map;
  }
}

/**
 * The pieces of the selected file of a change-set action, read when the selection changes
 * (for the list's checkboxes): an `ast_edit` file's replacements, any other text edit's hunks.
 */
export class FileReplacementsView {
  data: FileReplacements | null = $state.raw(null);
  loading = $state(false);
  error: string | null = $state(null);
  private token = 0;

  /** Call during component initialisation (it starts an effect). */
  constructor(private readonly backend: Backend, review: Review, preview: Preview) {
    const key = $derived.by(() => {
      const a = review.selected;
      const path = preview.selectedPath;
      return a && path && a.kind === 'changeSet' ? `${a.id}\u0000${path}` : '';
    });
    $effect(() => {
      const k = key;
      untrack(() => {
        if (!k) {
          this.token++;
          this.data = null;
          this.error = null;
          this.loading = false;
          return;
        }
        const at = k.indexOf('\u0000');
        void this.load(k.slice(0, at), k.slice(at + 1));
      });
    });
  }

  async load(actionId: string, path: string) {
    const token = ++this.token;
    this.loading = true;
    this.error = null;
    this.data = null;
    try {
      const data = await this.backend.getFileReplacements(actionId, path);
      if (token === this.token) this.data = data;
    } catch (err) {
      if (token === this.token) this.error = toBackendError(err).message;
    } finally {
      if (token === this.token) this.loading = false;
    }
  }
}
