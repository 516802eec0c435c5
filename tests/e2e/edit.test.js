// End to end: edit, then apply. An MCP client (the official TypeScript SDK through the real
// `rdesk mcp`) pushes a preview and waits on `resolve`; in the real window the person opens
// the file in the editor (CodeMirror's merge view), types a line by hand, keeps it and
// applies. The disk holds the person's text (the proposal plus their line), and the agent's
// one `resolve` result says "Applied with the person's edits" with the diff from its proposal
// to what was written.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { mcpAgent, startAppWithMcp, textOf, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };
const EDIT = { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" };
const MINE = "// checked by hand";

let driver;
let browser;
let ws;

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  ({ ws, driver, browser } = await startAppWithMcp("rd-e2e-edit"));
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("the person's edit is what gets written, and the agent reads what changed from its proposal", async () => {
  const client = await mcpAgent("e2e-editor", ws);
  try {
    const before = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");
    const preview = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.notEqual(preview.isError, true, textOf(preview));
    const card = await browser.$('[data-testid="queue-card"]');
    await card.waitForDisplayed(WAIT);
    await card.click();
    const answer = client.callTool({ name: "resolve", arguments: { action: "apply", reason: "as proposed" } }, undefined, {
      timeout: 120000,
      resetTimeoutOnProgress: true,
    });
    await browser.$('[data-testid="proposal-waiting"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the agent waits" });

    const edit = await browser.$('[data-testid="edit-file-button"]');
    await edit.waitForDisplayed({ ...WAIT, timeoutMsg: "the file can be edited before applying" });
    await edit.click();
    const text = await browser.$('[data-testid="editor-text"]');
    await text.waitForDisplayed({ ...WAIT, timeoutMsg: "CodeMirror opens with the proposal" });
    assert.equal(await browser.$$(".cm-mergeView .cm-editor").length, 2, "the file now beside what will be written");
    // Typed by hand at the top of the proposal, as a person does.
    await text.click();
    await browser.keys(["Control", "Home"]);
    // One key at a time, as a person types (a burst of synthetic keys can lose repeats).
    for (const key of [...MINE, "Enter"]) await browser.keys(key);
    const firstLine = () => browser.execute(() => document.querySelector(".cm-merge-b .cm-line")?.textContent ?? "");
    await browser.waitUntil(async () => (await firstLine()) === MINE, {
      ...WAIT,
      timeoutMsg: "the typed line is the first line of what will be written",
    });
    await browser.saveScreenshot(path.join(SHOTS, "edit-then-apply.png"));
    await browser.$('[data-testid="editor-keep"]').click();
    await browser.$('[data-testid="file-edited"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the edit is kept with the action" });
    const apply = await browser.$('[data-testid="apply-button"]');
    assert.equal((await apply.getText()).trim(), "Apply with my edits (1 file)");
    await browser.$('[data-testid="reason-input"]').setValue("Applied with a comment line of mine");
    await apply.click();

    const result = await answer;
    assert.notEqual(result.isError, true, textOf(result));
    const said = textOf(result);
    assert.match(said, /Applied with the person's edits: AST Edit: 3 replacements in 1 file\./, said);
    assert.ok(said.includes("--- proposal/src/apply.ts\n+++ written/src/apply.ts\n"), said);
    assert.ok(said.includes(`+${MINE}\n`), `the diff shows the person's line: ${said}`);
    const written = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");
    const proposal = before.replaceAll(/console\.log\(/g, "logger.debug(");
    assert.equal(written, `${MINE}\n${proposal}`, "the disk holds exactly the person's text");
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the action left the stack" });
  } finally {
    await client.close();
  }
});
