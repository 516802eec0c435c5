// The queue refresh rules of the review state, against a backend stub whose store
// revision the test moves by hand.
import { describe, expect, it, vi } from 'vitest';
import type { Backend, QueueSnapshot } from '../ipc/backend';
import { Review } from './review.svelte';

function stubBackend() {
  const store = { revision: 0, ids: [] as string[] };
  const snapshot = (): QueueSnapshot => ({
    revision: store.revision,
    actions: store.ids.map((id, i) => ({
      id, label: id, badge: null, summary: id, sourceToolName: 'ast_edit', pushedBy: null, createdAtMs: 0,
      status: { kind: 'pending' }, isTop: i === 0, kind: 'changeSet', counts: { files: 1, added: 1, removed: 1, renames: 0 },
      filesText: '1 file', renamesText: '0 renames', origin: null, proposal: null, comments: [], viewed: [],
    })),
  });
  const backend = {
    listActions: vi.fn(async () => snapshot()),
    listHistory: vi.fn(async () => []),
    openWorkspace: vi.fn(async (path: string) => ({ workspaceRoot: path, isDemo: false, policy: 'human' as const, revision: 0 })),
    recentWorkspaces: vi.fn(async () => []),
  };
  return {
    store,
    backend,
    review: new Review(backend as unknown as Backend),
  };
}

describe('Review queue refreshes', () => {
  it('skips a queue-changed the screen already shows and reads a newer one', async () => {
    const { store, backend, review } = stubBackend();
    store.revision = 5;
    store.ids = ['act-1'];
    await review.refreshAll();
    backend.listActions.mockClear();
    review.onQueueChanged(5);
    expect(backend.listActions).not.toHaveBeenCalled();
    store.revision = 6;
    store.ids = ['act-2', 'act-1'];
    review.onQueueChanged(6);
    expect(backend.listActions).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(review.actions.map((a) => a.id)).toEqual(['act-2', 'act-1']));
  });

  it('after a workspace switch, reads the new store though its revisions start again, and keeps the newest read', async () => {
    const { store, backend, review } = stubBackend();
    store.revision = 40;
    store.ids = ['old-1'];
    await review.refreshAll();

    // The new session's store starts at 0; while the switch reads it, a script pushes (revision 1).
    store.revision = 0;
    store.ids = [];
    const release = stubRelease(backend, store);
    const switching = review.openWorkspace('/ws/b');
    await vi.waitFor(() => expect(backend.listActions).toHaveBeenCalledTimes(2));
    store.revision = 1;
    store.ids = ['new-1'];
    review.onQueueChanged(1);
    release();
    await switching;
    await vi.waitFor(() => expect(review.actions.map((a) => a.id)).toEqual(['new-1']));
  });
});

/** Holds the next listActions answer (as read before the push) until released: it finishes last. */
function stubRelease(backend: ReturnType<typeof stubBackend>['backend'], store: ReturnType<typeof stubBackend>['store']) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const original = backend.listActions.getMockImplementation()!;
  backend.listActions.mockImplementationOnce(async () => {
    const before = { revision: store.revision, ids: [...store.ids] };
    await gate;
    const s = await original();
    return { ...s, revision: before.revision, actions: s.actions.filter((a) => before.ids.includes(a.id)) };
  });
  return release;
}

describe('Review: what the person reads stays put', () => {
  it('a push keeps the selection and marks the new top; a decided action is dropped with its reason', async () => {
    const { store, review } = stubBackend();
    store.revision = 1;
    store.ids = ['act-1'];
    await review.refreshAll();
    expect(review.selectedId).toBe('act-1');
    review.reason = 'read it all';
    expect(review.reasons).toEqual({ 'act-1': 'read it all' });

    store.revision = 2;
    store.ids = ['act-2', 'act-1'];
    await review.refreshQueue();
    expect(review.selectedId).toBe('act-1');
    expect(review.newTopId).toBe('act-2');
    expect(review.newTop?.id).toBe('act-2');
    expect(review.reason).toBe('read it all');

    review.goToTop();
    expect(review.selectedId).toBe('act-2');
    expect(review.newTop).toBeNull();
    expect(review.reason).toBe('');

    // act-1 decided elsewhere: its reason goes with it.
    store.revision = 3;
    store.ids = ['act-2'];
    await review.refreshQueue();
    expect(review.reasons).toEqual({});
    expect(review.announcer.text, 'only the action on screen leaving is announced').not.toContain('No longer pending');
  });

  it('the first read of a session announces nothing and marks nothing new', async () => {
    const { store, review } = stubBackend();
    store.revision = 4;
    store.ids = ['act-3', 'act-2'];
    await review.refreshAll();
    expect(review.selectedId).toBe('act-3');
    expect(review.newTopId).toBeNull();
    expect(review.announcer.text).toBe('');
  });
});
