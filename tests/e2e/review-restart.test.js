// End to end: a review waiting for the agent's answer survives closing the desk. An MCP client
// (the official TypeScript SDK through the real `rdesk mcp`) pushes a preview; in the real
// window the person comments on a line and presses "Request changes". The desk is closed
// before the agent answers and started again on the same folder and data folder; the agent
// joins again under the same name and pushes its answer: the card says "round 2", and the
// person's comment is shown beside its line, marked "changed since".
// Saves (to SHOTS) review-round-2-after-restart.png.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { mcpAgent, startDriver, tempDir, textOf, until, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };
const EDIT = { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" };
const AGENT = "e2e-restarting-reviewer";

let driver;
let browser;

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

/** The MCP sockets in the runtime folder, as `name:inode` (a new desk's socket is a new file). */
function sockets(runtime) {
  const dir = path.join(runtime, "resolve-desk");
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith(".sock")).map((f) => `${f}:${fs.statSync(path.join(dir, f)).ino}`);
}

async function start(ws, data, runtime) {
  const before = new Set(sockets(runtime));
  browser = await driver.startApp([ws, "--data-dir", data]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
  await until(() => sockets(runtime).some((s) => !before.has(s)), "this app's MCP socket");
}

test("Request changes, the desk closed, then the agent's answer is still round 2 with the comment", async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  const ws = tempDir("rd-e2e-rounds-ws-", "tests/fixtures/shop");
  const data = tempDir("rd-e2e-rounds-data-");
  const runtime = tempDir("rd-e2e-rounds-run-");
  fs.chmodSync(runtime, 0o700);
  process.env.XDG_RUNTIME_DIR = runtime;
  driver = await startDriver();
  await start(ws, data, runtime);

  let client = await mcpAgent(AGENT, ws);
  let line;
  try {
    const preview = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.notEqual(preview.isError, true, textOf(preview));
    await browser.$('[data-testid="queue-card"]').waitForDisplayed(WAIT);
    await browser.$('[data-testid="queue-card"]').click();
    const added = await browser.$('[role="row"][data-kind="added"] [data-testid="comment-line"][data-side="new"]');
    await added.waitForDisplayed({ ...WAIT, timeoutMsg: "the diff's added lines can be commented on" });
    line = await added.getAttribute("data-line");
    await added.click();
    const input = await browser.$('[data-testid="comment-input"]');
    await input.waitForDisplayed(WAIT);
    await input.setValue("info, not debug");
    await browser.$('[data-testid="comment-save"]').click();
    await browser.$('[data-testid="comment"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the comment shows" });

    const answer = client.callTool({ name: "resolve", arguments: { action: "apply", reason: "looks right" } }, undefined, {
      timeout: 120000,
      resetTimeoutOnProgress: true,
    });
    await browser.$('[data-testid="proposal-waiting"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the agent waits" });
    await browser.$('[data-testid="reason-input"]').setValue("See my comment");
    await browser.$('[data-testid="request-changes-button"]').click();
    const result = await answer;
    assert.match(textOf(result), /info, not debug/, "the agent reads the comment");
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the preview is gone" });
  } finally {
    await client.close();
  }

  // The desk closes before the agent answers, and starts again.
  await browser.deleteSession();
  browser = undefined;
  await start(ws, data, runtime);

  client = await mcpAgent(AGENT, ws);
  try {
    const answer = await client.callTool({
      name: "ast_edit",
      arguments: { ...EDIT, ops: [{ pat: "console.log($$$A)", out: "logger.info($$$A)" }] },
    });
    assert.notEqual(answer.isError, true, textOf(answer));
    await browser.waitUntil(
      async () => {
        const el = await browser.$('[data-testid="card-round"]');
        return (await el.isExisting()) && (await el.getText()).trim() === "round 2";
      },
      { ...WAIT, timeoutMsg: "after the restart, the agent's answer is still round 2" },
    );
    await browser.$('[data-testid="queue-card"]').click();
    const note = await browser.$('[data-testid="round-note"]');
    await note.waitForDisplayed(WAIT);
    assert.match(await note.getText(), /Your earlier comment is shown beside its line, which the agent changed\./);
    const selector = '[data-testid="diff-view"] [data-testid="earlier-comment"]';
    await browser.waitUntil(async () => (await browser.$$(selector)).length === 1, { ...WAIT, timeoutMsg: "the comment beside its line" });
    const shown = await browser.execute((sel) => {
      const el = document.querySelector(sel);
      return { line: el.getAttribute("data-now-line"), mark: el.querySelector('[data-testid="earlier-mark"]').textContent.trim(), text: el.textContent };
    }, selector);
    assert.equal(shown.line, line, "on the line it was written on");
    assert.equal(shown.mark, "changed since");
    assert.ok(shown.text.includes("info, not debug"), shown.text);
    await browser.saveScreenshot(path.join(SHOTS, "review-round-2-after-restart.png"));
  } finally {
    await client.close();
  }
});
