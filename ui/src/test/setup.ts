import '@testing-library/jest-dom/vitest';
import { afterEach } from 'vitest';
import { cleanup } from '@testing-library/svelte';

// vitest runs without globals, so testing-library cannot register this itself.
afterEach(() => cleanup());
