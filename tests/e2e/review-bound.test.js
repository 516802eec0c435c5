// End to end: a decision is bound to what the person read. An MCP client (the official
// TypeScript SDK spawning the real `rdesk mcp --workspace DIR`) pushes a preview while the
// person is reading another one in the real window: the view stays, the panel says "A new
// action is on top", Apply and `a` do nothing on the action that is no longer the top, the
// reason stays with the action it was typed for, and going to the new top starts with an
// empty reason. Saves (to SHOTS) new-top-notice.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { rdeskBinary, root, startAppWithMcp, textOf, until, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };
const EDIT = { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" };
const WARN_EDIT = { ops: [{ pat: "console.warn($$$A)", out: "logger.warn($$$A)" }], lang: "ts", path: "src/discard.ts" };

let driver;
let browser;
let ws;

const cards = () => browser.$$('[data-testid="queue-card"]');
const waitForCards = (n) =>
  browser.waitUntil(async () => (await cards()).length === n, { ...WAIT, timeoutMsg: `expected ${n} queue cards` });
const selectedId = async () => {
  for (const c of await cards()) if ((await c.getAttribute("aria-current")) === "true") return c.getAttribute("data-action-id");
  return null;
};

async function agent(name) {
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: rdeskBinary(),
    args: ["mcp", "--workspace", ws],
    env: { ...process.env, RESOLVE_DESK_BIN: "/bin/false" },
    stderr: "inherit",
  });
  await client.connect(transport);
  return client;
}

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  ({ ws, driver, browser } = await startAppWithMcp("rd-e2e-bound"));
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("a push while the person reads never moves the view nor carries the reason to the new action", async () => {
  const client = await agent("e2e-agent");
  try {
    const first = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.notEqual(first.isError, true, textOf(first));
    await waitForCards(1);
    const read = await selectedId();
    assert.ok(read, "the first preview is shown");
    await browser.$('[data-testid="reason-input"]').setValue("Checked every line of apply.ts");
    const before = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");

    const second = await client.callTool({ name: "ast_edit", arguments: WARN_EDIT });
    assert.notEqual(second.isError, true, textOf(second));
    await waitForCards(2);
    const notice = await browser.$('[data-testid="new-top-notice"]');
    await notice.waitForDisplayed(WAIT);
    assert.match(await notice.getText(), /A new action is on top/);
    assert.equal(await selectedId(), read, "the selection stayed on the action being read");
    assert.equal(await browser.$('[data-testid="reason-input"]').getValue(), "Checked every line of apply.ts");
    const apply = await browser.$('[data-testid="apply-button"]');
    assert.equal(await apply.isEnabled(), false, "Apply is off: the action shown is not the top one");

    // `a` from the page (not the reason box) decides nothing.
    await browser.execute(() => document.activeElement && document.activeElement.blur());
    await browser.keys("a");
    await until(
      async () => ((await browser.$('[data-testid="announcer"]').getProperty("textContent")) ?? "").includes("Only the top action"),
      "the live region saying why a did nothing",
    );
    assert.equal((await cards()).length, 2);
    assert.equal(fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8"), before, "nothing was written");
    await browser.saveScreenshot(path.join(SHOTS, "new-top-notice.png"));

    await browser.$('[data-testid="go-to-new-top"]').click();
    await until(async () => (await selectedId()) !== read, "the new top selected");
    assert.equal(await browser.$('[data-testid="reason-input"]').getValue(), "", "the new action starts without a reason");
    assert.equal(await notice.isExisting(), false);
  } finally {
    await client.close();
  }
});
