// End to end: pending actions survive a restart of the real app, and a restart applies
// nothing. The app opens a copy of tests/fixtures/shop with the three previews of
// tests/fixtures/shop.jsonl (pushed through its script runner, so journalled as pushes), is
// closed, a file one preview read is edited while it is closed, and the app is started
// again on the same folder and data folder: the same queue comes back in the same order,
// nothing written, the edited file's preview marked stale. Applying the top then writes
// exactly what its preview showed; a third start shows only what is still pending.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };

let driver;
let browser;

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

const cards = () => browser.$$('[data-testid="queue-card"]');
async function queue() {
  const out = [];
  for (const c of await cards()) {
    out.push({ label: await c.getAttribute("data-label"), status: await c.getAttribute("data-status") });
  }
  return out;
}
const waitForCards = (n) =>
  browser.waitUntil(async () => (await cards()).length === n, { ...WAIT, timeoutMsg: `expected ${n} queue cards` });

/** Every file under `dir` (relative path → contents). */
function files(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p, "utf8");
    }
  };
  walk(dir);
  return out;
}

async function start(args) {
  browser = await driver.startApp(args);
  await browser.setWindowSize(1400, 900).catch(() => {});
}

async function close() {
  await browser.deleteSession();
  browser = undefined;
}

test("the queue is back after a restart, in order, re-checked, and applies the previewed bytes", async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  const ws = tempDir("rd-e2e-persist-ws-", "tests/fixtures/shop");
  const data = tempDir("rd-e2e-persist-data-");
  driver = await startDriver();

  await start([ws, "--script", path.join(root, "tests/fixtures/shop.jsonl"), "--data-dir", data]);
  await waitForCards(3);
  const before = await queue();
  assert.deepEqual(
    before.map((a) => a.label),
    ["AST Edit: 3 replacements in 1 file", "AST Edit: 2 replacements in 1 file", "AST Edit: 1 replacement in 1 file"],
  );
  const previewed = files(ws);
  await close();

  // Edited in an editor while the desk is closed: that preview must come back stale.
  const stale = path.join(ws, "src/stale.ts");
  const edited = fs.readFileSync(stale, "utf8") + "// edited while the desk was closed\n";
  fs.writeFileSync(stale, edited);

  await start([ws, "--data-dir", data]);
  await waitForCards(3);
  const restored = await queue();
  assert.deepEqual(
    restored.map((a) => a.label),
    before.map((a) => a.label),
    "the same actions in the same LIFO order",
  );
  assert.deepEqual(
    restored.map((a) => a.status),
    ["pending", "pending", "stale"],
    "re-checked against the disk: the edited file's preview is stale",
  );
  assert.deepEqual(files(ws), { ...previewed, "src/stale.ts": edited }, "opening the app applied nothing");
  await (await cards())[2].click();
  await browser.$('[data-testid="stale-box"]').waitForDisplayed(WAIT);
  await (await cards())[0].click();
  await browser.$('[data-testid="file-row"]').waitForDisplayed(WAIT);
  await browser.saveScreenshot(path.join(SHOTS, "restored-queue.png"));

  // Apply the restored top: exactly its preview is written.
  const apply = await browser.$('[data-testid="apply-button"]');
  await browser.$('[data-testid="reason-input"]').setValue("Looks correct after the restart");
  await browser.waitUntil(() => apply.isEnabled(), { ...WAIT, timeoutMsg: "apply enabled once a reason is typed" });
  await apply.click();
  await waitForCards(2);
  const banner = await browser.$('[data-testid="result-banner"]');
  await banner.waitForDisplayed(WAIT);
  assert.match(await banner.getText(), /Applied 3 replacements in 1 file\./, "the same result text as before the restart");
  const written = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");
  assert.equal(
    written,
    previewed["src/apply.ts"].replaceAll(/console\.log\(/g, "logger.debug("),
    "the previewed bytes, exactly",
  );
  await close();

  // The applied action is no longer kept; the other two are.
  await start([ws, "--data-dir", data]);
  await waitForCards(2);
  assert.deepEqual(
    (await queue()).map((a) => a.label),
    before.slice(1).map((a) => a.label),
  );
});
