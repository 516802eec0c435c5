// Live staleness: for the selected stale action, what changed since its preview, one diff
// per stale file (the previewed content → the disk now). Reloaded whenever the stale status
// changes (another file, another reason); emptied when the action is pending again.
import { untrack } from 'svelte';
import type { Backend, SincePreview } from '../ipc/backend';
import { message, type Review } from './review.svelte';

export class SinceChanges {
  items: SincePreview[] = $state([]);
  loading = $state(false);
  error: string | null = $state(null);

  private token = 0;
  private last: { actionId: string; files: string[] } | null = null;

  /** Call during component initialisation (it starts an effect). */
  constructor(private readonly backend: Backend, review: Review) {
    const key = $derived.by(() => {
      const a = review.selected;
      return a && a.status.kind === 'stale' ? `${a.id}\n${a.status.message}\n${a.status.files.join('\n')}` : '';
    });
    $effect(() => {
      const k = key;
      untrack(() => {
        const a = review.selected;
        if (!k || !a || a.status.kind !== 'stale') {
          this.token++;
          this.items = [];
          this.error = null;
          this.loading = false;
          return;
        }
        void this.load(a.id, a.status.files);
      });
    });
  }

  /** Reads the same files again (after a failed load). */
  retry() {
    if (this.last) void this.load(this.last.actionId, this.last.files);
  }

  private async load(actionId: string, files: string[]) {
    this.last = { actionId, files };
    const token = ++this.token;
    this.loading = true;
    this.error = null;
    try {
      const items = await Promise.all(files.map((f) => this.backend.getSincePreview(actionId, f)));
      if (token === this.token) this.items = items;
    } catch (err) {
      if (token === this.token) {
        this.items = [];
        this.error = message(err);
      }
    } finally {
      if (token === this.token) this.loading = false;
    }
  }
}
