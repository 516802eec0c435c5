// The page's side of `next_events`: one call in flight, events dispatched in order, a failing
// handler does not stop the others. The shell's side (and the real thing end to end) is tested
// in src-tauri (events.rs, tests/shell.rs) and tests/e2e.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import type { EventBatch } from './generated/protocol';

afterEach(() => clearMocks());

/** A stand-in for the shell's queue: `next_events` answers at once with what was pushed after
 * `after`, or waits until something is. */
function shell() {
  const pushed: Array<{ name: string; payload: unknown }> = [];
  const waiting: Array<() => void> = [];
  const calls: Array<number | null> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  mockIPC(async (cmd, args) => {
    if (cmd !== 'next_events') throw new Error(`unexpected command ${cmd}`);
    const after = (args as { after: number | null }).after;
    calls.push(after);
    if (after === null) return { events: [], last: pushed.length, missed: false } satisfies EventBatch;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    while (pushed.length <= after) await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight--;
    return { events: pushed.slice(after), last: pushed.length, missed: false } satisfies EventBatch;
  });
  return {
    push(name: string, payload: unknown) {
      pushed.push({ name, payload });
      waiting.splice(0).forEach((wake) => wake());
    },
    calls,
    maxInFlight: () => maxInFlight,
  };
}

describe('events over next_events', () => {
  it('reach their handlers in order, once, and only after the subscription', async () => {
    const queue = shell();
    queue.push('queue-changed', { revision: 1 }); // before the page started: not seen
    const { createTauriBackend } = await import('./tauriBackend');
    const backend = createTauriBackend();
    const seen: string[] = [];
    const unsubQueue = await backend.onQueueChanged((e) => seen.push(`queue ${e.revision}`));
    await backend.onToolProgress(() => {
      throw new Error('a broken handler');
    });
    await backend.onToolProgress((p) => seen.push(`progress ${p.done}`));
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});

    queue.push('queue-changed', { revision: 2 });
    queue.push('tool-progress', { callId: 'c1', done: 5, total: 10, message: null });
    queue.push('queue-changed', { revision: 3 });
    await vi.waitFor(() => expect(seen).toEqual(['queue 2', 'progress 5', 'queue 3']));
    expect(consoleError).toHaveBeenCalled();

    unsubQueue();
    queue.push('queue-changed', { revision: 4 });
    queue.push('tool-progress', { callId: 'c1', done: 10, total: 10, message: null });
    await vi.waitFor(() => expect(seen).toContain('progress 10'));
    expect(seen).not.toContain('queue 4');

    expect(queue.calls[0]).toBeNull();
    expect(queue.calls.filter((c) => c === null)).toHaveLength(1);
    expect(queue.maxInFlight()).toBe(1);
    consoleError.mockRestore();
  });
});
