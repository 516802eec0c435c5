// End to end: leaving a workspace with pending actions asks first, and nothing is lost.
// The window is asked to close the way a window manager does (WM_DELETE_WINDOW, see
// wm-close.py); the app holds the close and asks; "Keep them for next time" closes the
// window with nothing written; the app started again on the same workspace shows the same
// queue, in the same order, and applying it writes the previewed bytes.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };

let driver;
let browser;
let ws;
let data;

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  ws = tempDir("rd-e2e-leave-", "tests/fixtures/shop");
  data = tempDir("rd-e2e-leave-data-");
  driver = await startDriver();
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

async function cardLabels() {
  const cards = await browser.$$('[data-testid="queue-card"]');
  const out = [];
  for (const c of cards) out.push((await c.$('[data-testid="queue-card-label"]').getText()).trim());
  return out;
}

async function waitForCards(n) {
  await browser.waitUntil(async () => (await browser.$$('[data-testid="queue-card"]')).length === n, {
    ...WAIT,
    timeoutMsg: `the queue shows ${n} cards`,
  });
}

/** Every file under `dir` (relative path → contents). */
function snapshot(dir) {
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

const closeWindow = () => execFileSync("python3", [path.join(root, "tests/e2e/wm-close.py"), "Resolve Desk"]);

/** Resolves once the app's window is gone (WebDriver can no longer reach it). */
async function waitForExit() {
  const deadline = Date.now() + WAIT.timeout;
  for (;;) {
    const alive = await browser.getTitle().then(() => true, () => false);
    if (!alive) return;
    if (Date.now() > deadline) throw new Error("the window did not close");
    await new Promise((r) => setTimeout(r, WAIT.interval));
  }
}

test("closing the window with pending actions asks; Cancel stays; Keep closes and writes nothing", async () => {
  browser = await driver.startApp([ws, "--script", path.join(root, "tests/fixtures/shop.jsonl"), "--data-dir", data]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await waitForCards(3);
  const labels = await cardLabels();
  const before = snapshot(ws);

  closeWindow();
  const dialog = await browser.$('[data-testid="leave-dialog"]');
  await dialog.waitForDisplayed(WAIT);
  assert.equal(await dialog.getAttribute("data-destination"), "close");
  assert.match(await dialog.getText(), /Closing the window leaves 3 pending actions in/);
  await browser.saveScreenshot(path.join(SHOTS, "leave-dialog.png"));

  await browser.$('[data-testid="leave-cancel"]').click();
  await dialog.waitForDisplayed({ ...WAIT, reverse: true });
  assert.deepEqual(await cardLabels(), labels, "Cancel keeps the window and every action");

  // Asked again after a Cancel; this time the default answer.
  closeWindow();
  await dialog.waitForDisplayed(WAIT);
  // The window closes while WebDriver waits for the click to finish: it may report the page gone.
  await browser.$('[data-testid="leave-keep"]').click().catch((e) => {
    if (!/page crash|invalid session|no such window/i.test(String(e))) throw e;
  });
  await waitForExit();
  await browser.deleteSession().catch(() => {});
  browser = undefined;
  assert.deepEqual(snapshot(ws), before, "leaving applied nothing");
  fs.writeFileSync(path.join(data, "labels.json"), JSON.stringify(labels));
});

test("started again on the workspace, the queue is back in the same order and applies the previewed bytes", async () => {
  const labels = JSON.parse(fs.readFileSync(path.join(data, "labels.json"), "utf8"));
  browser = await driver.startApp([ws, "--data-dir", data]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await waitForCards(3);
  assert.deepEqual(await cardLabels(), labels);
  await browser.saveScreenshot(path.join(SHOTS, "restored-queue.png"));

  await browser.$('[data-testid="reason-input"]').setValue("Restored and still right");
  const apply = await browser.$('[data-testid="apply-button"]');
  await browser.waitUntil(() => apply.isEnabled(), { ...WAIT, timeoutMsg: "apply enabled once a reason is typed" });
  await apply.click();
  await waitForCards(2);
  const text = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");
  assert.match(text, /logger\.debug\(/);
  assert.doesNotMatch(text, /console\.log\(/);
});
