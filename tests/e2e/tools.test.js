// End to end: a tool written in JavaScript, dropped into the workspace's .resolve/tools folder,
// in the real app. The design note's example (tools/sdk/node, installed under the name
// note_batch_rename because batch_rename_preview is the built-in's) is run from "Run tool…",
// its preview is applied with a reason, and the tool's own apply text comes back. A second
// manifest that takes the built-in's name is refused with SPEC §6's message, in a banner.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";

const WAIT = { timeout: 30000, interval: 100 };

let driver;
let browser;

function install(ws, folder, name) {
  const dir = path.join(ws, ".resolve/tools", folder);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "tool.json"),
    JSON.stringify({
      name,
      label: "Note example",
      description: "The design note's example, as written",
      parameters: { type: "object", properties: { files: { type: "array", items: { type: "string" } } }, required: ["files"] },
      command: "node",
      args: [path.join(root, "tools/sdk/node/run.js"), path.join(root, "examples/tools/node/note-example/tool.mjs")],
    }),
  );
}

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  const ws = tempDir("rd-e2e-tools-ws-", "tests/fixtures/shop");
  install(ws, "note", "note_batch_rename");
  install(ws, "clash", "batch_rename_preview");
  const env = { ...process.env, XDG_CONFIG_HOME: tempDir("rd-e2e-tools-config-"), XDG_STATE_HOME: tempDir("rd-e2e-tools-state-") };
  driver = await startDriver({ env });
  browser = await driver.startApp([ws, "--data-dir", tempDir("rd-e2e-tools-data-")]);
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("a manifest that takes a built-in's name is refused in a banner with SPEC's message", async () => {
  const notices = await browser.$('[data-testid="notices"]');
  await notices.waitForDisplayed(WAIT);
  const text = await notices.getText();
  assert.match(text, /A tool could not be loaded/);
  assert.match(text, /Tool name "batch_rename_preview" conflicts with existing tool/);
  assert.match(text, /\.resolve\/tools\/clash\/tool\.json/);
});

test("a folder's own tool is listed with its command and runs nothing until the person trusts the folder", async () => {
  const banner = await browser.$('[data-testid="notice"][data-id="trust"]');
  await banner.waitForDisplayed(WAIT);
  assert.match(await banner.getText(), /This folder has tools of its own/);
  const details = await banner.$('[data-testid="notice-details"]');
  assert.match(await details.getText(), /note_batch_rename: node \S*run\.js \S*tool\.mjs/);
  // Called before trust: refused, naming the folder and how to trust it; nothing ran.
  await browser.$('[data-testid="run-tool-button"]').click();
  const dialog = await browser.$('[data-testid="run-tool-dialog"]');
  await dialog.waitForDisplayed(WAIT);
  const select = await browser.$('[data-testid="tool-select"]');
  await browser.waitUntil(async () => (await select.getValue()) !== "", { ...WAIT, timeoutMsg: "the tool list arrived" });
  await select.selectByAttribute("value", "note_batch_rename");
  await browser.$('[data-testid="field-files"] [data-testid="array-add"]').click();
  const first = await browser.$('[data-testid="field-files.0"] input');
  await first.waitForDisplayed(WAIT);
  await first.setValue("photos/IMG_1.JPG");
  await browser.$('[data-testid="tool-run"]').click();
  // The refusal is the call's result (an error result, shown in red), not a failure of the dialog.
  const error = await browser.$('[data-testid="tool-result"]');
  await error.waitForDisplayed(WAIT);
  assert.match(await error.getAttribute("class"), /\berror\b/);
  assert.match(await error.getText(), /nothing was run/);
  assert.match(await error.getText(), /rdesk trust/);
  assert.equal(await browser.$('[data-testid="queue-card"]').isExisting(), false, "nothing was pushed");
  await browser.saveScreenshot(path.join(SHOTS, "trust-banner.png"));
  await browser.keys("Escape");
  await browser.waitUntil(async () => !(await dialog.isDisplayed().catch(() => false)), { ...WAIT, timeoutMsg: "the dialog closed" });
  // Trusted as shown: the banner goes.
  await banner.$('[data-testid="notice-action"][data-action^="trust:"]').click();
  await browser.waitUntil(async () => !(await browser.$('[data-testid="notice"][data-id="trust"]').isExisting()), {
    ...WAIT,
    timeoutMsg: "the trust banner went once the tools were trusted",
  });
});

test("the note's example runs from Run tool…, and Apply with a reason runs the tool's own apply", async () => {
  await browser.$('[data-testid="run-tool-button"]').click();
  const dialog = await browser.$('[data-testid="run-tool-dialog"]');
  await dialog.waitForDisplayed(WAIT);
  const select = await browser.$('[data-testid="tool-select"]');
  await browser.waitUntil(async () => (await select.getValue()) !== "", { ...WAIT, timeoutMsg: "the tool list arrived" });
  await select.selectByAttribute("value", "note_batch_rename");
  await browser.$('[data-testid="field-files"] [data-testid="array-add"]').click();
  const first = await browser.$('[data-testid="field-files.0"] input');
  await first.waitForDisplayed(WAIT);
  await first.setValue("photos/IMG_1.JPG");
  await browser.saveScreenshot(path.join(SHOTS, "external-tool-runner.png"));
  await browser.$('[data-testid="tool-run"]').click();
  const card = await browser.$('[data-testid="queue-card"]');
  await card.waitForDisplayed(WAIT).catch(async (e) => {
    const what = async (id) => ((await browser.$(`[data-testid="${id}"]`).isExisting()) ? await browser.$(`[data-testid="${id}"]`).getText() : "(none)");
    throw new Error(`${e.message}; result: ${await what("tool-result")}; error: ${await what("tool-error")}; form: ${await what("run-tool-form")}`);
  });
  await browser.waitUntil(async () => !(await dialog.isDisplayed().catch(() => false)), { ...WAIT, timeoutMsg: "the dialog closed on success" });
  assert.equal(await card.getAttribute("data-label"), "Batch rename: 1 files");
  const reason = await browser.$('[data-testid="reason-input"]');
  await reason.setValue("checked the plan");
  await browser.$('[data-testid="apply-button"]').click();
  const banner = await browser.$('[data-testid="result-banner"]');
  await browser.waitUntil(async () => (await banner.isExisting()) && /Applied batch rename/.test(await banner.getText()), { ...WAIT, timeoutMsg: "the tool's apply text" });
  assert.match(await banner.getText(), /Applied batch rename\. Reason: checked the plan/);
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
  await browser.saveScreenshot(path.join(SHOTS, "external-tool-applied.png"));
});
