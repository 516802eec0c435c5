// End to end: a long "Run tool…" scan in the real app shows its progress and Cancel stops it:
// the tool stops at its next check, nothing is pushed, nothing is written, and the dialog stays
// usable. The workspace is 20,000 TypeScript files, so the scan is still running when Cancel is
// pressed (the test fails, saying so, if the run finished first).
// Saves (to SHOTS) run-progress.png and run-cancelled.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 50 };
const FILES = 20000;

// WebKit's screenshot can show the frame before the last change: wait for two frames first.
const shot = async (name) => {
  await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
  await browser.saveScreenshot(path.join(SHOTS, name));
};

let driver;
let browser;
let ws;

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  ws = tempDir("rd-e2e-cancel-ws-");
  // Every file is parsed; one in a hundred has a match (the scan is long, the preview small).
  const body = (i) => Array.from({ length: 40 }, (_, k) => `  ${i % 100 === 0 ? "console.log" : "logger.info"}("step ${k}", input);`).join("\n");
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(ws, "src", `m${Math.floor(i / 100)}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.ts`), `export function f${i}(input: unknown) {\n${body(i)}\n}\n`);
  }
  driver = await startDriver();
  browser = await driver.startApp([ws, "--data-dir", tempDir("rd-e2e-cancel-data-")]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("Cancel stops a long scan: nothing pushed, nothing written, the dialog still usable", async () => {
  const sample = path.join(ws, "src/m0/f0.ts");
  const before = fs.readFileSync(sample, "utf8");
  await browser.$('[data-testid="run-tool-button"]').click();
  const dialog = await browser.$('[data-testid="run-tool-dialog"]');
  await dialog.waitForDisplayed(WAIT);
  assert.equal(await dialog.getTagName(), "dialog", "a native <dialog>");
  const select = await browser.$('[data-testid="tool-select"]');
  await browser.waitUntil(async () => (await select.getValue()) !== "", { ...WAIT, timeoutMsg: "the tool list arrived" });
  await select.selectByAttribute("value", "ast_edit");
  await browser.$('[data-testid="field-ops"] [data-testid="array-add"]').click();
  const pat = await browser.$('[data-testid="field-ops.0.pat"] input');
  await pat.waitForDisplayed({ ...WAIT, timeoutMsg: "the first rewrite's fields" });
  await pat.setValue("console.log($$$A)");
  await browser.$('[data-testid="field-ops.0.out"] input').setValue("logger.debug($$$A)");
  // The person presses Cancel as soon as it shows (a scan of 20,000 files takes a few seconds).
  await browser.execute(() => {
    window.__cancelClicked = null;
    const obs = new MutationObserver(() => {
      const b = document.querySelector('[data-testid="cancel-run"]');
      if (b && !b.disabled) {
        obs.disconnect();
        b.click();
        window.__cancelClicked = document.querySelector('[data-testid="tool-progress"]')?.textContent ?? "";
      }
    });
    obs.observe(document.body, { childList: true, subtree: true });
  });
  await browser.$('[data-testid="tool-run"]').click();

  await browser.waitUntil(() => browser.execute(() => window.__cancelClicked !== null), { ...WAIT, timeoutMsg: "Cancel was clicked" });

  const note = await browser.$('[data-testid="tool-cancelled"]');
  await note.waitForDisplayed(WAIT).catch(async () => {
    const what = async (id) => ((await browser.$(`[data-testid="${id}"]`).isExisting()) ? await browser.$(`[data-testid="${id}"]`).getText() : "(none)");
    assert.fail(`the run did not end cancelled: dialog open ${await dialog.isExisting()}, progress ${await what("tool-progress")}, result ${await what("tool-result")}, error ${await what("tool-error")}, banner ${await what("result-banner")}`);
  });
  assert.equal(await note.getText(), "Cancelled: nothing was pushed.");
  assert.equal(await dialog.isDisplayed(), true, "the dialog stays open");
  assert.equal(await browser.$('[data-testid="tool-run"]').isEnabled(), true, "and can run again");
  assert.equal(await browser.$('[data-testid="field-ops.0.pat"] input').getValue(), "console.log($$$A)", "the form kept its values");
  await shot("run-cancelled.png");
  assert.equal(await browser.$('[data-testid="queue-empty"]').isDisplayed(), true, "nothing was pushed");
  assert.equal(fs.readFileSync(sample, "utf8"), before, "nothing was written");

  // Run again on one folder: the preview closes the dialog and its card is selected.
  await browser.$('[data-testid="field-path"] input').setValue("src/m0");
  await browser.$('[data-testid="tool-run"]').click();
  await dialog.waitForDisplayed({ ...WAIT, reverse: true, timeoutMsg: "the dialog closes on a preview" });
  const card = await browser.$('[data-testid="queue-card"]');
  await card.waitForDisplayed(WAIT);
  assert.equal(await card.getAttribute("aria-current"), "true", "the new card is selected");
  assert.match(await browser.$('[data-testid="result-banner"]').getText(), /40 replacements in 1 file/);
  assert.equal(fs.readFileSync(sample, "utf8"), before, "a preview writes nothing");
});
