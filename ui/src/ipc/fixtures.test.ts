// The demo fixture (ui/src/ipc/fixtures/demo.json, written from the real demo workspace by
// the shell's tests) drives the test double; and the double stays out of the app's bundle.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import App from '../App.svelte';
import { DEMO, FakeBackend } from '../test/fakeBackend';

const SRC = resolve(__dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'test' ? [] : sources(path);
    return /\.(ts|svelte)$/.test(name) && !name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('demo.json', () => {
  it('has the agreed shape: every pending action has its files (with diffs) or its rename rows', () => {
    expect(Object.keys(DEMO).sort()).toEqual(['diffs', 'files', 'history', 'queue', 'renames', 'scriptSteps', 'session', 'texts', 'tools']);
    expect(DEMO.queue.actions.length).toBeGreaterThan(0);
    for (const a of DEMO.queue.actions) {
      if (a.kind === 'rename') {
        expect(DEMO.renames[a.id]?.filter((r) => r.status === 'rename').length, `rename rows of ${a.id}`).toBe(a.counts.renames);
      } else {
        const files = DEMO.files[a.id] ?? [];
        expect(files.length, `files of ${a.id}`).toBe(a.counts.files);
        for (const f of files) {
          expect(DEMO.diffs[a.id]?.[f.path]?.path, `diff of ${a.id} ${f.path}`).toBe(f.path);
          expect(DEMO.texts?.[a.id]?.[f.path]?.path, `texts of ${a.id} ${f.path}`).toBe(f.path);
        }
      }
    }
    expect(DEMO.queue.actions.map((a) => a.isTop)).toEqual(DEMO.queue.actions.map((_, i) => i === 0));
  });

  it('is what the window shows with the test double', async () => {
    render(App, { backend: new FakeBackend() });
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(DEMO.queue.actions.length));
    expect(screen.getAllByTestId('queue-card').map((c) => c.dataset.label)).toEqual(DEMO.queue.actions.map((a) => a.label));
  });
});

describe('the production bundle', () => {
  it('no app module imports the test double statically (only `npm run dev` loads it, dynamically)', () => {
    const offenders = sources(SRC).filter((path) => /^\s*import\s[^;]*from\s+['"][./]*\/?test\//m.test(readFileSync(path, 'utf8')));
    expect(offenders).toEqual([]);
    expect(readFileSync(join(SRC, 'ipc/index.ts'), 'utf8')).toMatch(/if \(import\.meta\.env\.DEV\) \{\s*const \{ FakeBackend \} = await import\('\.\.\/test\/fakeBackend'\)/);
  });
});
