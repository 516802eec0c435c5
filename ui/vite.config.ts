/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The Tauri shell loads ui/dist from disk, so asset URLs must be relative.
export default defineConfig({
  base: './',
  plugins: [svelte()],
  clearScreen: false,
  server: { host: '127.0.0.1', port: 5173, strictPort: true },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // One module chunk plus CSS; no inline scripts, no eval (CSP: script-src 'self').
    modulePreload: { polyfill: false },
  },
  // The highlight worker is an ES module, like the app.
  worker: { format: 'es' },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.ts'],
    // A hang guard, not a speed check: the 1,000-file App tests take 2-5 s on a loaded
    // 2-core machine, and a timed-out test leaks its keystrokes into the next one.
    testTimeout: 30_000,
  },
});
