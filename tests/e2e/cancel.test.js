// End to end: a "Run tool…" run in the real app shows its progress and Cancel stops it: nothing
// is pushed, nothing is written, and the dialog stays usable. The run is held open on a
// condition the test controls — a tool of the user's own (`hold`, in the config folder) that
// never finishes by itself — so Cancel always lands while it runs (a 20,000-file ast_edit scan
// could end first, one run in ten). ast_edit's own check of the cancellation in its scan is
// tested in tools/ast-edit/tests/ast_edit.rs (cancelled_scan_changes_nothing).
// Saves (to SHOTS) run-progress.png and run-cancelled.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";

/** A tool of the user's own whose run never ends by itself (until the desk stops it). */
function installHold(config) {
  const dir = path.join(config, "resolve-desk/tools/hold");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "hold.mjs"),
    `export default (pi) => ({
  name: "hold",
  label: "Hold",
  description: "Runs until it is cancelled (for the Cancel test)",
  parameters: pi.typebox.Type.Object({}),
  async execute() {
    await new Promise(() => {});
  },
});
`,
  );
  fs.writeFileSync(
    path.join(dir, "tool.json"),
    JSON.stringify({
      name: "hold",
      label: "Hold",
      description: "Runs until it is cancelled",
      parameters: { type: "object", properties: {} },
      command: "node",
      args: [path.join(root, "tools/sdk/node/run.js"), path.join(dir, "hold.mjs")],
    }),
  );
}

const WAIT = { timeout: 20000, interval: 50 };
const FILES = 200;

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
  const config = tempDir("rd-e2e-cancel-config-");
  installHold(config);
  driver = await startDriver({ env: { ...process.env, XDG_CONFIG_HOME: config, XDG_STATE_HOME: tempDir("rd-e2e-cancel-state-") } });
  browser = await driver.startApp([ws, "--data-dir", tempDir("rd-e2e-cancel-data-")]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("Cancel stops a run in flight: nothing pushed, nothing written, the dialog still usable", async () => {
  const sample = path.join(ws, "src/m0/f0.ts");
  const before = fs.readFileSync(sample, "utf8");
  await browser.$('[data-testid="run-tool-button"]').click();
  const dialog = await browser.$('[data-testid="run-tool-dialog"]');
  await dialog.waitForDisplayed(WAIT);
  assert.equal(await dialog.getTagName(), "dialog", "a native <dialog>");
  const select = await browser.$('[data-testid="tool-select"]');
  await browser.waitUntil(async () => (await select.getValue()) !== "", { ...WAIT, timeoutMsg: "the tool list arrived" });
  await browser.waitUntil(async () => (await select.$$("option").map((o) => o.getAttribute("value"))).includes("hold"), { ...WAIT, timeoutMsg: "the user's hold tool is listed" });
  await select.selectByAttribute("value", "hold");
  // The person presses Cancel as soon as it shows (the run never ends by itself).
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
  await shot("run-cancelled.png");
  assert.equal(await browser.$('[data-testid="queue-empty"]').isDisplayed(), true, "nothing was pushed");
  assert.equal(fs.readFileSync(sample, "utf8"), before, "nothing was written");

  // Run ast_edit on one folder: the preview closes the dialog and its card is selected.
  await select.selectByAttribute("value", "ast_edit");
  await browser.$('[data-testid="field-ops"] [data-testid="array-add"]').click();
  const pat = await browser.$('[data-testid="field-ops.0.pat"] input');
  await pat.waitForDisplayed({ ...WAIT, timeoutMsg: "the first rewrite's fields" });
  await pat.setValue("console.log($$$A)");
  await browser.$('[data-testid="field-ops.0.out"] input').setValue("logger.debug($$$A)");
  await browser.$('[data-testid="field-path"] input').setValue("src/m0");
  await browser.$('[data-testid="tool-run"]').click();
  await dialog.waitForDisplayed({ ...WAIT, reverse: true, timeoutMsg: "the dialog closes on a preview" });
  const card = await browser.$('[data-testid="queue-card"]');
  await card.waitForDisplayed(WAIT);
  assert.equal(await card.getAttribute("aria-current"), "true", "the new card is selected");
  assert.match(await browser.$('[data-testid="result-banner"]').getText(), /40 replacements in 1 file/);
  assert.equal(fs.readFileSync(sample, "utf8"), before, "a preview writes nothing");
});
