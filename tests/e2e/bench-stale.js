// Live staleness in the real app (a benchmark, not a test): the time from a file save (the
// write returning) to the top card's "stale" badge, and from the revert to the badge
// leaving, over SAVES saves of src/apply.ts in the shop fixture.
//
//   RESOLVE_DESK_BIN=$CARGO_TARGET_DIR/debug/resolve-desk xvfb-run -a node bench-stale.js [SAVES]
//
// The badge is looked for every 10 ms through WebDriver, so each figure includes up to one
// WebDriver round trip: an upper bound on what a person sees.
import fs from "node:fs";
import path from "node:path";
import { appBinary, median, root, startDriver, tempDir } from "./launch.js";

const SAVES = Number(process.argv[2] ?? 20);
const WAIT = { timeout: 20000, interval: 10 };

const ws = tempDir("rd-bench-stale-", "tests/fixtures/shop");
const data = tempDir("rd-bench-stale-data-");
const driver = await startDriver({ bin: appBinary() });
const browser = await driver.startApp([ws, "--script", path.join(root, "tests/fixtures/shop.jsonl"), "--data-dir", data]);
try {
  await browser.waitUntil(async () => (await browser.$$('[data-testid="queue-card"]')).length === 3, WAIT);
  const file = path.join(ws, "src/apply.ts");
  const previewed = fs.readFileSync(file, "utf8");
  const badge = () => browser.$('[data-testid="queue-card"] [data-testid="status-badge"]');
  const toStale = [];
  const toPending = [];
  for (let i = 0; i < SAVES; i++) {
    let t = performance.now();
    fs.writeFileSync(file, `// save ${i}\n` + previewed);
    await browser.waitUntil(async () => (await badge()).isExisting(), WAIT);
    toStale.push(performance.now() - t);
    t = performance.now();
    fs.writeFileSync(file, previewed);
    await browser.waitUntil(async () => !(await (await badge()).isExisting()), WAIT);
    toPending.push(performance.now() - t);
  }
  const fmt = (xs) => `median ${median(xs).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
  console.log(`save → stale badge: ${fmt(toStale)} over ${SAVES} saves`);
  console.log(`revert → badge gone: ${fmt(toPending)} over ${SAVES} saves`);
} finally {
  await browser.deleteSession().catch(() => {});
  driver.kill();
}
