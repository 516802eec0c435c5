// Picks the backend: the Tauri shell when running inside it, otherwise the
// in-memory demo (plain browser, `npm run dev`).
import type { Backend } from './backend';
import { FakeBackend } from './fakeBackend';

export * from './backend';
export { FakeBackend } from './fakeBackend';

export async function detectBackend(): Promise<Backend> {
  if (typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window) {
    const { createTauriBackend } = await import('./tauriBackend');
    return createTauriBackend();
  }
  return new FakeBackend({ latencyMs: 250 });
}
