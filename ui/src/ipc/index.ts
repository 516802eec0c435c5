// Picks the backend: the Tauri shell when running inside it. In a plain browser the
// development server (`npm run dev`) serves the test double with the demo fixture; it is
// imported only under `import.meta.env.DEV`, so the production bundle does not contain it.
import type { Backend } from './backend';

export * from './backend';

export async function detectBackend(): Promise<Backend> {
  if (typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window) {
    const { createTauriBackend } = await import('./tauriBackend');
    return createTauriBackend();
  }
  if (import.meta.env.DEV) {
    const { FakeBackend } = await import('../test/fakeBackend');
    return new FakeBackend({ latencyMs: 250 });
  }
  throw new Error('Resolve Desk runs inside its window (the Tauri shell); for a plain browser use `npm run dev`.');
}
