// Demo workspace content for the fake backend: small realistic sources whose
// "new" version differs by a rewrite, plus a generated 1,000-file action.

export type DemoFile = {
  path: string;
  oldPath?: string | null;
  change: 'modified' | 'added' | 'deleted' | 'renamed';
  binary?: boolean;
  tooLarge?: boolean;
  summary?: string;
  oldLines: () => string[];
  newLines: () => string[];
};

const CLIENT_TS = `import { logger } from '../logger';
import type { Order, OrderId } from '../model/order';

const BASE_URL = import.meta.env.VITE_API_URL ?? 'http://localhost:8080';

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export async function fetchJson<T>(url: string): Promise<T> {
  const res = await fetch(BASE_URL + url, { headers: { Accept: 'application/json' } });
  console.log(res.status);
  if (!res.ok) {
    throw new ApiError(res.status, \`HTTP \${res.status} for \${url}\`);
  }
  return (await res.json()) as T;
}

export async function getOrder(id: OrderId): Promise<Order> {
  return fetchJson<Order>(\`/orders/\${encodeURIComponent(id)}\`);
}

export async function listOrders(page = 1): Promise<Order[]> {
  const orders = await fetchJson<Order[]>(\`/orders?page=\${page}\`);
  return orders.filter((o) => o.status !== 'archived');
}

export async function cancelOrder(id: OrderId): Promise<void> {
  const res = await fetch(\`\${BASE_URL}/orders/\${id}/cancel\`, { method: 'POST' });
  if (!res.ok) {
    throw new ApiError(res.status, 'cancel failed');
  }
}

export function report(err: unknown): void {
  console.log('request failed', err);
}`;

const FORMAT_TS = `export function formatPrice(cents: number, currency = 'EUR'): string {
  return new Intl.NumberFormat('en-GB', { style: 'currency', currency }).format(cents / 100);
}

export function formatDate(ms: number): string {
  const d = new Date(ms);
  console.log('formatting', ms);
  return d.toISOString().slice(0, 10);
}

export const plural = (n: number, word: string) => \`\${n} \${word}\${n === 1 ? '' : 's'}\`;`;

const MAIN_RS = `// Copyright 2023 Shop Contributors
// SPDX-License-Identifier: MIT

use std::net::SocketAddr;

fn main() -> anyhow::Result<()> {
    let addr: SocketAddr = "127.0.0.1:8080".parse()?;
    println!("listening on {addr}");
    server::run(addr)
}`;

const BUILD_PY = `# Copyright 2023 Shop Contributors
# SPDX-License-Identifier: MIT
import subprocess
import sys


def main() -> int:
    """Build the front end and copy it into dist/."""
    result = subprocess.run(["npm", "run", "build"], check=False)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())`;

const APP_CSS = `/* Copyright 2023 Shop Contributors */
:root {
  --brand: #0b6bcb;
  --radius: 6px;
}

.button {
  border-radius: var(--radius);
  background: var(--brand);
  color: white;
}`;

const CONFIG_JSON = `{
  "name": "shop-frontend",
  "copyright": "2023 Shop Contributors",
  "features": ["orders", "returns"],
  "telemetry": false
}`;

const README_MD = `# Shop front end

Copyright 2023 Shop Contributors.

## Running

\`npm run dev\` starts the server on port 5173.`;

const LEGACY_TS = `// Deprecated: use logger instead.
export function debug(...args: unknown[]): void {
  // eslint-disable-next-line no-console
  console.log('[debug]', ...args);
}`;

const GUIDE_MD = `# Contributing

1. Fork the repository.
2. Create a branch.
3. Open a pull request with a clear description.`;

const lines = (s: string) => s.split('\n');
const swap = (s: string, from: string, to: string) => lines(s.split(from).join(to));

export function smallAstEditFiles(): DemoFile[] {
  return [
    {
      path: 'src/api/client.ts', change: 'modified',
      oldLines: () => lines(CLIENT_TS),
      newLines: () => swap(CLIENT_TS, 'console.log(', 'logger.debug('),
    },
    {
      path: 'src/util/format.ts', change: 'modified',
      oldLines: () => lines(FORMAT_TS),
      newLines: () => swap(FORMAT_TS, 'console.log(', 'logger.debug('),
    },
  ];
}

export function headerFiles(): DemoFile[] {
  const year = (s: string) => swap(s, '2023', '2023-2025');
  return [
    { path: 'src/main.rs', change: 'modified', oldLines: () => lines(MAIN_RS), newLines: () => year(MAIN_RS) },
    { path: 'scripts/build.py', change: 'modified', oldLines: () => lines(BUILD_PY), newLines: () => year(BUILD_PY) },
    { path: 'styles/app.css', change: 'modified', oldLines: () => lines(APP_CSS), newLines: () => year(APP_CSS) },
    { path: 'config/app.json', change: 'modified', oldLines: () => lines(CONFIG_JSON), newLines: () => year(CONFIG_JSON) },
    { path: 'README.md', change: 'modified', oldLines: () => lines(README_MD), newLines: () => year(README_MD) },
    { path: 'docs/CONTRIBUTING.md', change: 'added', oldLines: () => [], newLines: () => lines(GUIDE_MD) },
    { path: 'src/legacy/debug.ts', change: 'deleted', oldLines: () => lines(LEGACY_TS), newLines: () => [] },
    {
      path: 'public/logo.png', change: 'modified', binary: true,
      summary: 'Binary file changed (14.2 KiB → 13.9 KiB)', oldLines: () => [], newLines: () => [],
    },
    {
      path: 'vendor/bundle.min.js', change: 'modified', tooLarge: true,
      summary: 'File too large to show (4.8 MiB, 1 line changed)', oldLines: () => [], newLines: () => [],
    },
  ];
}

/** The stress case: `fileCount` files with `perFile` replacements each, built on demand. */
export function bulkFiles(fileCount: number, perFile: number, pat = 'console.log(', out = 'logger.debug('): DemoFile[] {
  const areas = ['checkout', 'catalog', 'orders', 'returns', 'search', 'account', 'admin', 'shipping'];
  const files: DemoFile[] = [];
  for (let i = 0; i < fileCount; i++) {
    const area = areas[i % areas.length]!;
    const n = String(i + 1).padStart(4, '0');
    const body = () => {
      const src: string[] = [
        `import { logger } from '../../logger';`,
        `import { track } from '../../analytics';`,
        '',
        `/** ${area} step ${n}: generated demo module. */`,
        `export function step${n}(input: Record<string, unknown>): number {`,
      ];
      for (let k = 0; k < perFile; k++) {
        src.push(`  const v${k} = Number(input['field${k}'] ?? ${k});`);
        src.push(`  ${pat}'${area} ${n} field${k}', v${k});`);
        src.push(`  track('${area}.${n}.${k}', v${k});`);
        if (k % 2 === 1) src.push('');
      }
      src.push(`  return ${Array.from({ length: perFile }, (_, k) => `v${k}`).join(' + ')};`, '}');
      return src;
    };
    files.push({
      path: `src/${area}/steps/step-${n}.ts`, change: 'modified',
      oldLines: body,
      newLines: () => body().map((l) => l.split(pat).join(out)),
    });
  }
  return files;
}

/** Files in the demo workspace that batch_rename_preview can match. */
export const DEMO_ASSETS = [
  'assets/img_001.PNG', 'assets/img_002.PNG', 'assets/img_003.PNG', 'assets/img_004.PNG',
  'assets/image-005.png', 'assets/icons', 'assets/banner.JPG', 'assets/Hero Photo.JPG',
];
