// Banners from the backend at the top of the window (a broken decision journal, an
// interrupted apply that was recovered). The backend owns the list: this state shows what
// `listNotices` and `notices-changed` say, and asks the backend to dismiss one.
import type { Backend, Notice } from '../ipc/backend';
import { toBackendError } from '../ipc/backend';

export class Notices {
  list: Notice[] = $state([]);
  /** Why the last dismissal failed (e.g. the banner stays while its problem lasts). */
  error: string | null = $state(null);

  constructor(private readonly backend: Backend) {}

  async load(): Promise<void> {
    try {
      this.list = await this.backend.listNotices();
    } catch (err) {
      this.error = toBackendError(err).message;
    }
  }

  /** The backend's whole list, from `notices-changed`. */
  onChanged(list: Notice[]) {
    this.list = list;
  }

  /** A banner's button: the backend acts and answers with the banners to show now. */
  async act(noticeId: string, actionId: string): Promise<void> {
    this.error = null;
    try {
      this.list = await this.backend.noticeAction(noticeId, actionId);
    } catch (err) {
      this.error = toBackendError(err).message;
    }
  }

  async dismiss(id: string): Promise<void> {
    this.error = null;
    try {
      this.list = await this.backend.dismissNotice(id);
    } catch (err) {
      this.error = toBackendError(err).message;
    }
  }
}
