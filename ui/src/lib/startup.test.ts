import { describe, expect, it, vi } from 'vitest';

describe('start-up marks', () => {
  it('sends the marks once, after the next paint, with painted last', async () => {
    vi.resetModules();
    const { mark, afterNextPaint } = await import('./startup');
    mark('script');
    mark('queue_loaded');
    const sent: Array<Array<[string, number]>> = [];
    const done = new Promise<void>((resolve) => afterNextPaint((marks) => { sent.push(marks); resolve(); }));
    afterNextPaint((marks) => sent.push(marks));
    await done;
    await new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.map(([name]) => name)).toEqual(['script', 'queue_loaded', 'painted']);
    const times = sent[0]!.map(([, t]) => t);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // Marks after the send are not kept (nothing grows after start-up).
    mark('later');
    afterNextPaint((marks) => sent.push(marks));
    await new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
    expect(sent).toHaveLength(1);
  });
});
