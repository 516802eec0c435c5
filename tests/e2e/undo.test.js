// End to end: Undo from the history in the real app. A fresh copy of tests/fixtures/shop with
// the previews of tests/fixtures/shop.jsonl; the person applies the top one, opens the
// history, presses Undo with a reason, and the old bytes are back on disk; Redo writes the
// applied bytes again; an edit behind the app's back makes the next Undo refuse, naming the
// file, with nothing written. Saves (to SHOTS) history-undo.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };

let driver;
let browser;
let ws;
let data;

const cards = () => browser.$$('[data-testid="queue-card"]');
const waitForCards = (n) =>
  browser.waitUntil(async () => (await cards()).length === n, { ...WAIT, timeoutMsg: `expected ${n} queue cards` });
const read = (p) => fs.readFileSync(path.join(ws, p));

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  ws = tempDir("rd-e2e-undo-ws-", "tests/fixtures/shop");
  data = tempDir("rd-e2e-undo-data-");
  driver = await startDriver();
  browser = await driver.startApp([ws, "--script", path.join(root, "tests/fixtures/shop.jsonl"), "--data-dir", data]);
  await browser.setWindowSize(1400, 900).catch(() => {});
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

async function openHistory() {
  await browser.$('[data-testid="history-button"]').click();
  await browser.$('[data-testid="history-dialog"]').waitForDisplayed(WAIT);
}

async function closeHistory() {
  await browser.keys("Escape");
  await browser.$('[data-testid="history-dialog"]').waitForDisplayed({ ...WAIT, reverse: true });
}

// Presses Undo (or Redo) on the applied entry, types the reason, confirms.
async function revert(button, reason) {
  const b = await browser.$(`[data-testid="${button}"]`);
  await b.waitForDisplayed(WAIT);
  await b.click();
  const input = await browser.$('[data-testid="history-undo-reason"]');
  await input.waitForDisplayed(WAIT);
  await input.setValue(reason);
  const confirm = await browser.$('[data-testid="history-undo-confirm"]');
  await browser.waitUntil(() => confirm.isEnabled(), { ...WAIT, timeoutMsg: "confirm enabled once a reason is typed" });
  await confirm.click();
}

test("apply, then Undo in the history writes the old bytes back; Redo writes the applied ones", async () => {
  await waitForCards(3);
  const original = read("src/apply.ts");
  await browser.$('[data-testid="reason-input"]').setValue("Looks correct");
  const apply = await browser.$('[data-testid="apply-button"]');
  await browser.waitUntil(() => apply.isEnabled(), { ...WAIT, timeoutMsg: "apply enabled" });
  await apply.click();
  await waitForCards(2);
  const applied = read("src/apply.ts");
  assert.notDeepEqual(applied, original, "the apply wrote the file");

  await openHistory();
  await revert("history-undo-button", "Wrong log level");
  await browser.waitUntil(async () => read("src/apply.ts").equals(original), {
    ...WAIT,
    timeoutMsg: "the old bytes are back on disk",
  });
  // The undo is a decision of its own, newest first, and the applied entry now offers Redo.
  const first = await browser.$('[data-testid="history-header"]');
  await browser.waitUntil(async () => /^Undo: 3 replacements in 1 file \[AST Edit\]/.test(await first.getText()), {
    ...WAIT,
    timeoutMsg: "the undo is in the history",
  });
  const redo = await browser.$('[data-testid="history-redo-button"]');
  await redo.waitForDisplayed(WAIT);
  const entries = await browser.$$('[data-testid="history-entry"]');
  assert.match(await entries[0].getText(), /Wrong log level/, "with its reason");
  await browser.saveScreenshot(path.join(SHOTS, "history-undo.png"));

  await revert("history-redo-button", "It was right after all");
  await browser.waitUntil(async () => read("src/apply.ts").equals(applied), {
    ...WAIT,
    timeoutMsg: "the redo writes the applied bytes again",
  });
  await browser.$('[data-testid="history-undo-button"]').waitForDisplayed(WAIT);
  await closeHistory();
});

test("an Undo after the file was edited on disk is refused, names the file and writes nothing", async () => {
  const edited = Buffer.concat([read("src/apply.ts"), Buffer.from("// edited in an editor\n")]);
  fs.writeFileSync(path.join(ws, "src/apply.ts"), edited);
  await openHistory();
  await revert("history-undo-button", "Revert it");
  const result = await browser.$('[data-testid="history-undo-result"]');
  await result.waitForDisplayed(WAIT);
  assert.match(await result.getText(), /1 file changed since the apply: src\/apply\.ts \(content changed\)/);
  assert.match(await result.getText(), /Nothing was written/);
  assert.deepEqual(read("src/apply.ts"), edited, "nothing written");
  await browser.saveScreenshot(path.join(SHOTS, "history-undo-refused.png"));
  await closeHistory();
});
