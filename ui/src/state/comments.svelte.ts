// The person's line comments on a pending action, and the one comment being written or
// edited (the composer). Comments are kept by the backend with the action until the
// decision, which sends them to the agent; the backend anchors and quotes them, so the UI
// only says where (file, side, lines or a replacement) and what.
import { toBackendError, type Backend, type CommentSide, type ReviewComment } from '../ipc/backend';
import type { Review } from './review.svelte';

/** A comment being written (`editing: null`) or edited (`editing`: its id). */
export type Composer = {
  actionId: string;
  path: string;
  side: CommentSide;
  startLine: number;
  endLine: number;
  /** On one `ast_edit` replacement (its id); its lines are the backend's. */
  replacementId: number | null;
  text: string;
  editing: string | null;
};

export class Comments {
  composer: Composer | null = $state(null);
  busy = $state(false);
  error: string | null = $state(null);

  constructor(
    private readonly backend: Backend,
    private readonly review: Review,
  ) {}

  /** The comments of action `actionId` on `path`, in file order. */
  of(actionId: string, path: string): ReviewComment[] {
    return (this.review.actions.find((a) => a.id === actionId)?.comments ?? []).filter((c) => c.path === path);
  }

  /**
   * A line number was clicked: start a comment on that line, or — with `extend` (Shift) and
   * a new comment started on the same file and side — stretch it to that line.
   */
  pick(actionId: string, path: string, side: CommentSide, line: number, extend = false) {
    const c = this.composer;
    if (extend && c && c.editing === null && c.actionId === actionId && c.path === path && c.side === side && c.replacementId === null) {
      this.composer = { ...c, startLine: Math.min(c.startLine, line), endLine: Math.max(c.endLine, line) };
      return;
    }
    this.error = null;
    this.composer = { actionId, path, side, startLine: line, endLine: line, replacementId: null, text: '', editing: null };
  }

  /** Starts a comment on one `ast_edit` replacement (shown at `line` until the backend anchors it). */
  pickReplacement(actionId: string, path: string, replacementId: number, line: number) {
    this.error = null;
    this.composer = { actionId, path, side: 'new', startLine: line, endLine: line, replacementId, text: '', editing: null };
  }

  /** Opens a kept comment for editing. */
  edit(actionId: string, comment: ReviewComment) {
    this.error = null;
    this.composer = {
      actionId, path: comment.path, side: comment.side, startLine: comment.startLine, endLine: comment.endLine,
      replacementId: comment.replacementId, text: comment.text, editing: comment.id,
    };
  }

  cancel() {
    this.composer = null;
    this.error = null;
  }

  /** Whether the composer is open at `side`/`line` of `path` (it is shown after its last line). */
  composerAt(actionId: string, path: string, side: CommentSide, line: number): boolean {
    const c = this.composer;
    return !!c && c.actionId === actionId && c.path === path && c.side === side && c.endLine === line;
  }

  /** Whether `line` of `side` is inside the range being commented on. */
  inRange(actionId: string, path: string, side: CommentSide, line: number): boolean {
    const c = this.composer;
    return !!c && c.editing === null && c.actionId === actionId && c.path === path && c.side === side && line >= c.startLine && line <= c.endLine;
  }

  /** Saves the composer (a new comment or an edit); stays open with the backend's message when refused. */
  async save(): Promise<boolean> {
    const c = this.composer;
    if (!c || this.busy) return false;
    if (c.text.trim() === '') {
      this.error = 'Write the comment first.';
      return false;
    }
    this.busy = true;
    this.error = null;
    try {
      const list = c.editing !== null
        ? await this.backend.editComment(c.actionId, c.editing, c.text)
        : await this.backend.addComment(c.actionId, {
            path: c.path, side: c.side, startLine: c.startLine, endLine: c.endLine, text: c.text, replacementId: c.replacementId,
          });
      this.show(c.actionId, list);
      this.composer = null;
      this.review.announcer.say(c.editing !== null ? 'Comment saved.' : `Comment added. ${words(list.length)} on this action.`);
      return true;
    } catch (err) {
      this.error = toBackendError(err).message;
      return false;
    } finally {
      this.busy = false;
    }
  }

  async remove(actionId: string, commentId: string) {
    if (this.busy) return;
    this.busy = true;
    this.error = null;
    try {
      const list = await this.backend.deleteComment(actionId, commentId);
      this.show(actionId, list);
      if (this.composer?.editing === commentId) this.composer = null;
      this.review.announcer.say(`Comment deleted. ${words(list.length)} on this action.`);
    } catch (err) {
      this.error = toBackendError(err).message;
    } finally {
      this.busy = false;
    }
  }

  /** Whether file `path` of action `actionId` is marked viewed. */
  viewed(actionId: string, path: string): boolean {
    return (this.review.actions.find((a) => a.id === actionId)?.viewed ?? []).includes(path);
  }

  /**
   * Marks a file viewed (or clears the mark): shown at once, kept by the backend with the
   * action; a refusal puts the mark back and says why.
   */
  async setViewed(actionId: string, path: string, viewed: boolean) {
    const action = this.review.actions.find((a) => a.id === actionId);
    if (!action) return;
    const before = action.viewed ?? [];
    action.viewed = viewed ? [...new Set([...before, path])].sort() : before.filter((p) => p !== path);
    try {
      await this.backend.setFileViewed(actionId, path, viewed);
      this.review.announcer.say(viewed ? `${path} marked viewed.` : `${path} no longer marked viewed.`);
    } catch (err) {
      const now = this.review.actions.find((a) => a.id === actionId);
      if (now) now.viewed = before;
      this.review.banner = { text: toBackendError(err).message, isError: true };
    }
  }

  /** Shows the backend's list at once (the queue read that follows confirms it). */
  private show(actionId: string, list: ReviewComment[]) {
    const action = this.review.actions.find((a) => a.id === actionId);
    if (action) action.comments = list;
  }
}

export function words(n: number): string {
  return `${n} comment${n === 1 ? '' : 's'}`;
}
