// Highlights whole files off the main thread: one worker, the newest request first. A request
// that is no longer wanted (another file was selected) stops the worker, so a 1 MB file never
// delays the next one. Without Worker support (tests), it highlights inline.
import type { HighlightRequest, HighlightResponse } from './highlight.worker';

type Pending = { resolve: (lines: string[]) => void; reject: (err: Error) => void };

let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, Pending>();

function startWorker(): Worker | null {
  if (typeof Worker === 'undefined') return null;
  try {
    const w = new Worker(new URL('./highlight.worker.ts', import.meta.url), { type: 'module' });
    w.onmessage = (event: MessageEvent<HighlightResponse>) => {
      const p = pending.get(event.data.id);
      if (!p) return;
      pending.delete(event.data.id);
      if ('lines' in event.data) p.resolve(event.data.lines);
      else p.reject(new Error(event.data.error));
    };
    w.onerror = (event) => {
      event.preventDefault();
      failAll(new Error(event.message || 'the highlight worker failed'));
      worker = null;
      w.terminate();
    };
    return w;
  } catch {
    return null;
  }
}

function failAll(err: Error) {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

/** Stops whatever the worker is highlighting (its callers get an error they ignore). */
export function cancelHighlighting() {
  if (pending.size === 0) return;
  worker?.terminate();
  worker = null;
  failAll(new Error('superseded'));
}

/** One HTML string per line of `text`, highlighted as a whole. */
export async function highlightFile(text: string, language: string | null): Promise<string[]> {
  worker ??= startWorker();
  if (!worker) {
    const { highlightText } = await import('./wholeHighlight');
    return highlightText(text, language);
  }
  const id = nextId++;
  const w = worker;
  return new Promise<string[]>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    const request: HighlightRequest = { id, text, language };
    w.postMessage(request);
  });
}
