// Edit, then apply: the person's own text for files of a pending action, per action id, and
// the file being edited. Nothing is written until Apply, which sends the texts as `edits`; the
// engine writes them in place of the proposal, pinned to the previewed originals.
import type { PersonEdit } from '../ipc/backend';

export class PersonEdits {
  /** Per action id, per path: the whole new text. Replaced (not mutated) so `$state` sees it. */
  private texts: Map<string, Map<string, string>> = $state(new Map());
  /** The file open in the editor, if any. */
  editing: { actionId: string; path: string } | null = $state(null);

  text(actionId: string, path: string): string | undefined {
    return this.texts.get(actionId)?.get(path);
  }

  edited(actionId: string, path: string): boolean {
    return this.texts.get(actionId)?.has(path) ?? false;
  }

  count(actionId: string | null | undefined): number {
    return actionId ? (this.texts.get(actionId)?.size ?? 0) : 0;
  }

  open(actionId: string, path: string) {
    this.editing = { actionId, path };
  }

  close() {
    this.editing = null;
  }

  isOpen(actionId: string | null | undefined, path: string | null | undefined): boolean {
    return !!this.editing && this.editing.actionId === actionId && this.editing.path === path;
  }

  /** Keeps `text` for the file; the same text as the proposal is no edit. */
  keep(actionId: string, path: string, text: string, proposal: string) {
    const map = new Map(this.texts);
    const files = new Map(map.get(actionId) ?? []);
    if (text === proposal) files.delete(path);
    else files.set(path, text);
    if (files.size === 0) map.delete(actionId);
    else map.set(actionId, files);
    this.texts = map;
  }

  /** Back to the proposal for one file. */
  revert(actionId: string, path: string) {
    const files = this.texts.get(actionId);
    if (!files?.has(path)) return;
    const map = new Map(this.texts);
    const next = new Map(files);
    next.delete(path);
    if (next.size === 0) map.delete(actionId);
    else map.set(actionId, next);
    this.texts = map;
  }

  /** What Apply sends; `null` when nothing is edited. */
  list(actionId: string): PersonEdit[] | null {
    const files = this.texts.get(actionId);
    if (!files || files.size === 0) return null;
    return [...files].map(([path, text]) => ({ path, text }));
  }

  /** Forgets an action's edits (it was decided). */
  clear(actionId: string) {
    if (!this.texts.has(actionId)) return;
    const map = new Map(this.texts);
    map.delete(actionId);
    this.texts = map;
    if (this.editing?.actionId === actionId) this.editing = null;
  }
}
