// End to end: the History dialog over a real journal of 10,000 decisions (seeded into the
// app's SQLite file): the count, a search that finds one entry, the decision filter, and
// scrolling to the oldest entry, which is read as its page comes into view.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };
const N = 10_000;

let driver;
let browser;
let ws;
let data;

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  ws = fs.realpathSync(tempDir("rd-e2e-history-", "tests/fixtures/shop"));
  data = tempDir("rd-e2e-history-data-");
  driver = await startDriver();
  browser = await driver.startApp([ws, "--data-dir", data]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  // The app created its journal when it opened the workspace; add months of decisions to it.
  await browser.$('[data-testid="history-button"]').waitForDisplayed(WAIT);
  execFileSync("python3", [path.join(root, "tests/e2e/seed-journal.py"), path.join(data, "journal.sqlite3"), ws, String(N)]);
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

const count = () => browser.$('[data-testid="history-count"]').getText();
// Read in one go in the page: the windowed list re-renders while it scrolls.
const headers = () =>
  browser.execute(() =>
    [...document.querySelectorAll('[data-testid="history-header"]')].map((h) => h.textContent.replace(/\s+/g, " ").trim()),
  );

test("the History dialog counts 10,000 entries and renders only a window of them", async () => {
  await browser.$('[data-testid="history-button"]').click();
  await browser.waitUntil(async () => (await count()) === `${N} entries`, { ...WAIT, timeoutMsg: "the count shows every entry" });
  const shown = await browser.$$('[data-testid="history-entry"]');
  assert.ok(shown.length > 0 && shown.length < 60, `a window of entries is in the page (${shown.length})`);
  assert.match((await headers())[0], /Seeded decision 9999/);
  await browser.saveScreenshot(path.join(SHOTS, "history-search.png"));
});

test("scrolling to the end reads the oldest page", async () => {
  await browser.execute(() => {
    const v = document.querySelector('[data-testid="history-viewport"]');
    v.scrollTop = v.scrollHeight;
  });
  await browser.waitUntil(async () => (await headers()).some((h) => /Seeded decision 0 /.test(h + " ")), {
    ...WAIT,
    timeoutMsg: "the oldest entry is shown at the end",
  });
});

test("a search finds the one entry, and the decision filter narrows the list", async () => {
  await browser.$('[data-testid="history-search"]').setValue("NEEDLE in the");
  await browser.waitUntil(async () => (await count()) === "1 entry match", { ...WAIT, timeoutMsg: "one entry matches" });
  assert.deepEqual(await headers(), ["Failed: Seeded decision 4242 [ast_edit]"]);
  await browser.saveScreenshot(path.join(SHOTS, "history-search-found.png"));
  await browser.$('[data-testid="history-clear"]').click();
  await browser.waitUntil(async () => (await count()) === `${N} entries`, WAIT);
  await browser.$('[data-testid="history-outcome"]').selectByAttribute("value", "discarded");
  await browser.waitUntil(async () => (await count()) === `${N / 4} entries match`, { ...WAIT, timeoutMsg: "a quarter are discards" });
  for (const h of await headers()) assert.match(h, /^Discard:/);
});
