// End to end: a coding agent's MCP client (the official TypeScript SDK, spawning the real
// `rdesk mcp --workspace DIR` over stdio) joins the real app that has DIR open. Its preview
// lands in the window's queue, its `resolve` waits while the person reads, the person clicks
// Apply in the window, and the client receives the person's decision and reason. Closing the
// window while the agent waits applies nothing and tells the agent.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { rdeskBinary, root, startAppWithMcp, textOf, until, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };
const REMINDER = "This is a preview. Call the resolve tool to apply or discard these changes.";
// The three rewrites of tests/fixtures/shop.jsonl, one file each.
const EDIT = { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" };
const WARN_EDIT = { ops: [{ pat: "console.warn($$$A)", out: "logger.warn($$$A)" }], lang: "ts", path: "src/discard.ts" };
const RENAME_EDIT = { ops: [{ pat: "oldName($A)", out: "newName($A)" }], lang: "ts", path: "src/stale.ts" };

let driver;
let browser;
let ws;

const cards = () => browser.$$('[data-testid="queue-card"]');
const waitForCards = (n) =>
  browser.waitUntil(async () => (await cards()).length === n, { ...WAIT, timeoutMsg: `expected ${n} queue cards` });

// The card's "by <client>" line (its text node: WebKitWebDriver's getText is empty for this
// ellipsis-styled span although the screenshots show it).
const pushedBy = async (card) => ((await card.$('[data-testid="pushed-by"]').getProperty("textContent")) ?? "").trim();

/** An MCP client named `name` joined to the open window through `rdesk mcp --workspace`. */
async function agent(name) {
  const client = new Client({ name, version: "1.0.0" });
  const listChanged = { count: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged.count += 1;
  });
  const transport = new StdioClientTransport({
    command: rdeskBinary(),
    args: ["mcp", "--workspace", ws],
    // The app under test must be the one joined: never start another desk.
    env: { ...process.env, RESOLVE_DESK_BIN: "/bin/false" },
    stderr: "inherit",
  });
  await client.connect(transport);
  return { client, listChanged };
}

const toolNames = async (client) => (await client.listTools()).tools.map((t) => t.name);

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  ({ ws, driver, browser } = await startAppWithMcp("rd-e2e-mcp"));
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("an MCP client's preview waits in the window, and the person's Apply is its answer", async () => {
  const { client, listChanged } = await agent("e2e-agent");
  try {
    assert.ok((await toolNames(client)).includes("resolve"), "resolve is listed from the first list, whatever is pending");
    const before = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");

    const preview = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.notEqual(preview.isError, true, textOf(preview));
    assert.ok(textOf(preview).trimEnd().endsWith(REMINDER), textOf(preview));
    await waitForCards(1);
    await browser.saveScreenshot(path.join(SHOTS, "mcp-queue.png"));
    const card = (await cards())[0];
    assert.equal(await card.getAttribute("data-label"), "AST Edit: 3 replacements in 1 file");
    assert.match(await pushedBy(card), /by e2e-agent/);
    await client.ping();
    assert.equal(listChanged.count, 0, "a push does not change the tool list");

    const progress = [];
    const answer = client.callTool({ name: "resolve", arguments: { action: "apply", reason: "Only logging changes." } }, undefined, {
      timeout: 120000,
      resetTimeoutOnProgress: true,
      onprogress: (p) => progress.push(p),
    });
    const proposal = await browser.$('[data-testid="proposal-text"]');
    await proposal.waitForDisplayed(WAIT);
    assert.match(await proposal.getText(), /e2e-agent proposes: Apply — “Only logging changes\.”/);
    // The engine reports progress every 10 s while the person reads (this client resets its
    // time-out on progress; most do not, hence the bounded wait, 45 s by default).
    await until(() => progress.length > 0, "a progress notification during the wait", 30000);
    assert.equal(fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8"), before, "nothing is written while the person reads");
    await browser.saveScreenshot(path.join(SHOTS, "mcp-proposal.png"));

    await browser.$('[data-testid="reason-input"]').setValue("Read the diff in the window");
    const apply = await browser.$('[data-testid="apply-button"]');
    await browser.waitUntil(() => apply.isEnabled(), WAIT);
    await apply.click();
    const result = await answer;
    assert.notEqual(result.isError, true, textOf(result));
    assert.match(textOf(result), /Decided by the person: applied\. Reason: Read the diff in the window/);
    assert.match(fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8"), /logger\.debug\("greeting", name\);/);
    await waitForCards(0);

    await browser.$('[data-testid="history-button"]').click();
    const who = await browser.$('[data-testid="history-who"]');
    await who.waitForDisplayed(WAIT);
    assert.match(await who.getText(), /Decided by the person; asked by e2e-agent, which proposed Apply/);
    await browser.keys("Escape");
    await who.waitForDisplayed({ ...WAIT, reverse: true });
  } finally {
    await client.close();
  }
});

test("two MCP clients share the window's stack: LIFO across both, each card names its client", async () => {
  const one = await agent("agent-one");
  const two = await agent("agent-two");
  try {
    const first = await one.client.callTool({ name: "ast_edit", arguments: WARN_EDIT });
    assert.notEqual(first.isError, true, textOf(first));
    await waitForCards(1);
    const second = await two.client.callTool({ name: "ast_edit", arguments: RENAME_EDIT });
    assert.notEqual(second.isError, true, textOf(second));
    await waitForCards(2);
    const who = [];
    for (const c of await cards()) who.push(await pushedBy(c));
    assert.deepEqual(who, ["by agent-two", "by agent-one"], "the newest preview is on top");
    await browser.saveScreenshot(path.join(SHOTS, "mcp-two-agents.png"));

    // The person discards agent-two's preview: the History says who asked for it. A push never
    // moves the person's selection: they go to the new top first.
    await (await cards())[0].click();
    await browser.waitUntil(async () => (await (await cards())[0].getAttribute("aria-current")) === "true", { ...WAIT, timeoutMsg: "the top card is shown" });
    await browser.$('[data-testid="reason-input"]').setValue("Not this one");
    const discard = await browser.$('[data-testid="discard-button"]');
    await browser.waitUntil(() => discard.isEnabled(), { ...WAIT, timeoutMsg: "discard enabled once a reason is typed" });
    await discard.click();
    await waitForCards(1);
    await browser.$('[data-testid="history-button"]').click();
    const asked = await browser.$('[data-testid="history-asked-by"]');
    await asked.waitForDisplayed({ ...WAIT, timeoutMsg: "the History names who asked" });
    assert.equal(await asked.getText(), "agent-two");
    await browser.keys("Escape");
    await asked.waitForDisplayed({ ...WAIT, reverse: true });
  } finally {
    await one.client.close();
    await two.client.close();
  }
});

test("Not now answers the waiting agent without deciding: the action stays pending", async () => {
  const { client } = await agent("e2e-snoozer");
  try {
    const discardFile = fs.readFileSync(path.join(ws, "src/discard.ts"), "utf8");
    const answer = client.callTool({ name: "resolve", arguments: { action: "discard", reason: "Not sure about it" } }, undefined, {
      timeout: 120000,
      resetTimeoutOnProgress: true,
    });
    await (await cards())[0].click();
    const notNow = await browser.$('[data-testid="not-now-button"]');
    await notNow.waitForDisplayed({ ...WAIT, timeoutMsg: "Not now is offered while the agent waits" });
    assert.ok(await browser.$('[data-testid="card-agent-waiting"]').isDisplayed(), "the card shows the agent waiting");
    await browser.saveScreenshot(path.join(SHOTS, "not-now.png"));
    await notNow.click();
    const result = await answer;
    assert.notEqual(result.isError, true, textOf(result));
    assert.match(textOf(result), /will review .* later; nothing was applied or discarded/);
    await browser.$('[data-testid="proposal-not-waiting"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the proposal stays, not waiting" });
    assert.equal((await cards()).length, 1, "the action stays on the stack");
    assert.ok(!(await browser.$('[data-testid="not-now-button"]').isExisting()), "nobody waits now");
    assert.equal(fs.readFileSync(path.join(ws, "src/discard.ts"), "utf8"), discardFile, "nothing was discarded or written");
  } finally {
    await client.close();
  }
});

test("closing the window while an agent waits applies nothing and tells the agent", async () => {
  const { client } = await agent("e2e-agent");
  // Closed whatever happens, so a failure here cannot leave the test file waiting on it.
  try {
    const stale = fs.readFileSync(path.join(ws, "src/stale.ts"), "utf8");
    const answer = client.callTool({ name: "resolve", arguments: { action: "apply", reason: "go" } }, undefined, {
      timeout: 120000,
      resetTimeoutOnProgress: true,
    });
    answer.catch(() => {});
    // The proposal is shown beside the top action, once the person looks at it.
    await (await cards())[0].click();
    await browser.$('[data-testid="proposal-text"]').waitForDisplayed(WAIT);
    await browser.deleteSession();
    browser = undefined;
    const result = await answer;
    assert.equal(result.isError, true, "the waiting resolve ends with an error");
    assert.match(textOf(result), /nothing was applied|closed/i);
    assert.equal(fs.readFileSync(path.join(ws, "src/stale.ts"), "utf8"), stale, "nothing applied");
    const later = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.equal(later.isError, true);
    assert.match(textOf(later), /resolve-desk /, "later calls say how to reopen the desk");
  } finally {
    await client.close();
  }
});
