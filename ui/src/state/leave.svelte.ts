// Leaving with pending actions: closing one folder (its own pending actions only), or closing
// the window (every open folder's). The person chooses: keep them for next time (the default),
// discard them all with a reason, or cancel. Nothing is ever decided by leaving. Opening
// another folder leaves nothing: it opens beside the others.
import type { Backend } from '../ipc/backend';
import { message } from './review.svelte';

/** Where the person is going: away from one folder (its tab closes), or away (the window closes). */
export type Destination = { kind: 'closeFolder'; root: string; name: string } | { kind: 'close' };

export class Leave {
  /** The question on screen, if any. */
  destination: Destination | null = $state(null);
  pending = $state(0);
  reason = $state('');
  busy = $state(false);
  error: string | null = $state(null);

  constructor(
    private readonly backend: Backend,
    /** Closes the folder `root` for real (the folder tabs' close). */
    private readonly closeFolder: (root: string) => Promise<void>,
  ) {}

  /** Goes to `destination` at once when nothing is pending (`pending` = 0), else asks. */
  request(destination: Destination, pending: number): Promise<void> {
    if (pending === 0) return this.go(destination);
    this.destination = destination;
    this.pending = pending;
    this.reason = '';
    this.error = null;
    return Promise.resolve();
  }

  /** "Keep them for next time": leave; the actions stay stored for their folder. */
  keep(): Promise<void> {
    const d = this.destination;
    if (!d || this.busy) return Promise.resolve();
    return this.finish(d, async () => {});
  }

  /** "Discard all": each pending action (of that folder, or of every folder) is discarded as the person with the reason, then leave. */
  discard(): Promise<void> {
    const d = this.destination;
    if (!d || this.busy) return Promise.resolve();
    const reason = this.reason;
    return this.finish(d, async () => {
      await this.backend.discardAll(reason, d.kind === 'closeFolder' ? d.root : null);
    });
  }

  /** "Cancel" (or Escape): stay; a held close is released. */
  async cancel() {
    const d = this.destination;
    this.destination = null;
    if (d?.kind === 'close') {
      try {
        await this.backend.confirmClose(false);
      } catch {
        // The window stays either way.
      }
    }
  }

  private async finish(d: Destination, before: () => Promise<void>) {
    this.busy = true;
    this.error = null;
    try {
      await before();
      this.destination = null;
      await this.go(d);
    } catch (err) {
      this.error = message(err);
    } finally {
      this.busy = false;
    }
  }

  private async go(d: Destination) {
    if (d.kind === 'closeFolder') await this.closeFolder(d.root);
    else await this.backend.confirmClose(true);
  }
}
