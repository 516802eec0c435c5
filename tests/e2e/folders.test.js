// End to end: one desk, many folders. The real app has folder A open; two MCP clients (the
// official TypeScript SDK spawning the real `rdesk mcp --workspace DIR`) work in A and B. The
// client for B finds no window with B open, so rdesk starts `resolve-desk B`, which joins the
// running desk (its control socket) instead of opening a second window: B opens beside A. Each
// preview lands in its own folder's stack, the folder tabs show the counts and the waiting
// mark, applying in B leaves A untouched, and a restart reopens both folders with their stacks.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { appBinary, rdeskBinary, root, startDriver, tempDir, textOf, until, SHOTS } from "./launch.js";

const WAIT = { timeout: 30000, interval: 100 };
const EDIT = { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" };
const WARN_EDIT = { ops: [{ pat: "console.warn($$$A)", out: "logger.warn($$$A)" }], lang: "ts", path: "src/discard.ts" };
const RENAME_EDIT = { ops: [{ pat: "oldName($A)", out: "newName($A)" }], lang: "ts", path: "src/stale.ts" };

let driver;
let browser;
const clients = [];
const wsA = tempDir("rd-e2e-folders-a-", "tests/fixtures/shop");
const wsB = tempDir("rd-e2e-folders-b-", "tests/fixtures/shop");

const cards = () => browser.$$('[data-testid="queue-card"]');
const cardLabels = async () => {
  const out = [];
  for (const c of await cards()) out.push(await c.getAttribute("data-label"));
  return out;
};

/** The folder tabs as `{ root, name, pending, waiting, active }`, in the order opened. */
async function tabs() {
  return browser.execute(() =>
    [...document.querySelectorAll('[data-testid="folder-tab"]')].map((t) => ({
      root: t.dataset.root,
      name: t.querySelector('[data-testid="folder-name"]').textContent.trim(),
      pending: Number(t.querySelector('[data-testid="folder-pending"]').textContent.trim()),
      waiting: t.dataset.waiting === "true",
      active: t.dataset.active === "true",
    })),
  );
}
const tabOf = async (ws) => (await tabs()).find((t) => t.root === fs.realpathSync(ws));

/** An MCP client for `ws`; `startDesk`: the program rdesk starts when no window has `ws` open. */
async function agent(name, ws, startDesk) {
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: rdeskBinary(),
    args: ["mcp", "--workspace", ws],
    env: { ...process.env, RESOLVE_DESK_BIN: startDesk },
    stderr: "inherit",
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const closeWindow = () => execFileSync("python3", [path.join(root, "tests/e2e/wm-close.py"), "Resolve Desk"]);

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  // Private runtime, data and config folders: the desk's control socket is keyed by the data
  // folder, and the `resolve-desk B` that rdesk starts must find this desk (the default data
  // folder under XDG_DATA_HOME), never a person's.
  const runtime = tempDir("rd-e2e-folders-run-");
  fs.chmodSync(runtime, 0o700);
  process.env.XDG_RUNTIME_DIR = runtime;
  process.env.XDG_DATA_HOME = tempDir("rd-e2e-folders-data-");
  process.env.XDG_CONFIG_HOME = tempDir("rd-e2e-folders-config-");
  driver = await startDriver();
  browser = await driver.startApp([wsA]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
  const sockets = path.join(runtime, "resolve-desk");
  await until(
    () => fs.existsSync(sockets) && fs.readdirSync(sockets).filter((f) => f.endsWith(".sock")).length >= 2,
    "the app's MCP socket and its control socket",
  );
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("two folders, two agents: each preview lands in its folder's stack; applying in one leaves the other untouched", async () => {
  const inA = await agent("agent-a", wsA, "/bin/false");
  const first = await inA.callTool({ name: "ast_edit", arguments: EDIT });
  assert.notEqual(first.isError, true, textOf(first));
  await browser.waitUntil(async () => (await cards()).length === 1, { ...WAIT, timeoutMsg: "A's preview in the window" });
  assert.deepEqual(await tabs(), [], "one folder: no tabs");

  // No window has B open: rdesk starts the real `resolve-desk B`, which joins this desk.
  const inB = await agent("agent-b", wsB, appBinary());
  await browser.waitUntil(async () => (await tabs()).length === 2, { ...WAIT, timeoutMsg: "B opens beside A" });
  assert.equal((await tabOf(wsA)).active, true, "A keeps the screen: the person has a review there");
  for (const edit of [WARN_EDIT, RENAME_EDIT]) {
    const out = await inB.callTool({ name: "ast_edit", arguments: edit });
    assert.notEqual(out.isError, true, textOf(out));
  }
  await browser.waitUntil(async () => (await tabOf(wsB))?.pending === 2, { ...WAIT, timeoutMsg: "B's tab counts its two previews" });
  assert.equal((await tabOf(wsA)).pending, 1);
  assert.deepEqual(await cardLabels(), ["AST Edit: 3 replacements in 1 file"], "A's stack only");

  // The Inbox: every folder's pending actions, newest push first, each with its folder, its
  // agent and its place in its folder's stack; opening one goes to that folder's stack.
  await browser.$('[data-testid="inbox-button"]').click();
  await browser.waitUntil(async () => (await browser.$$('[data-testid="inbox-item"]').length) === 3, {
    ...WAIT,
    timeoutMsg: "the inbox lists the three pending actions",
  });
  const inbox = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="inbox-item"]')].map((i) => [
      i.dataset.root,
      i.dataset.position,
      i.querySelector('[data-testid="inbox-agent"]').textContent.trim(),
    ]),
  );
  const [a, b] = [fs.realpathSync(wsA), fs.realpathSync(wsB)];
  assert.deepEqual(inbox, [
    [b, "1", "by agent-b"],
    [b, "2", "by agent-b"],
    [a, "1", "by agent-a"],
  ], "newest push first: B's two (its top first), then A's");
  await browser.saveScreenshot(path.join(SHOTS, "inbox.png"));
  await browser.keys("Escape");
  await browser.$('[data-testid="inbox-panel"]').waitForDisplayed({ ...WAIT, reverse: true });
  // The native window's title (WebDriver's getTitle is the page's): read from the X server.
  const titles = () => execFileSync("python3", [path.join(root, "tests/e2e/wm-close.py"), "--titles"], { encoding: "utf8" });
  await browser.waitUntil(async () => titles().split("\n").includes("Resolve Desk (3 pending)"), {
    ...WAIT,
    timeoutMsg: "the window's title counts every folder's pending actions",
  });

  const answer = inB.callTool({ name: "resolve", arguments: { action: "apply", reason: "Renames only." } }, undefined, {
    timeout: 120000,
    resetTimeoutOnProgress: true,
  });
  await browser.waitUntil(async () => (await tabOf(wsB)).waiting, { ...WAIT, timeoutMsg: "B's tab shows its agent waiting" });
  assert.equal((await tabOf(wsA)).waiting, false);
  await browser.saveScreenshot(path.join(SHOTS, "folder-tabs.png"));

  const applyBefore = fs.readFileSync(path.join(wsA, "src/apply.ts"), "utf8");
  await browser.$(`[data-testid="folder-tab"][data-root="${fs.realpathSync(wsB)}"] [data-testid="folder-name"]`).click();
  await browser.waitUntil(async () => (await cards()).length === 2, { ...WAIT, timeoutMsg: "B's stack on screen" });
  await browser.$('[data-testid="proposal-text"]').waitForDisplayed(WAIT);
  assert.match(await browser.$('[data-testid="proposal-text"]').getText(), /agent-b proposes: Apply/);
  await browser.$('[data-testid="reason-input"]').setValue("Checked in B");
  const apply = await browser.$('[data-testid="apply-button"]');
  await browser.waitUntil(() => apply.isEnabled(), WAIT);
  await apply.click();
  const result = await answer;
  assert.notEqual(result.isError, true, textOf(result));
  assert.match(textOf(result), /Decided by the person: applied\. Reason: Checked in B/);
  assert.match(fs.readFileSync(path.join(wsB, "src/stale.ts"), "utf8"), /newName\(/, "B's top preview was written");
  assert.equal(fs.readFileSync(path.join(wsA, "src/apply.ts"), "utf8"), applyBefore, "A is untouched");
  await browser.waitUntil(async () => (await tabOf(wsB)).pending === 1, WAIT);
  assert.equal((await tabOf(wsA)).pending, 1, "A's action is still pending");
  assert.equal((await tabOf(wsB)).waiting, false);
});

test("a restart reopens both folders with their stacks", async () => {
  closeWindow();
  const keep = await browser.$('[data-testid="leave-keep"]');
  await keep.waitForDisplayed(WAIT);
  assert.match(await browser.$('[data-testid="leave-dialog"]').getText(), /Closing the window leaves 2 pending actions in 2 open folders/);
  await keep.click().catch((e) => {
    if (!/page crash|invalid session|no such window/i.test(String(e))) throw e;
  });
  const deadline = Date.now() + WAIT.timeout;
  while (await browser.getTitle().then(() => true, () => false)) {
    if (Date.now() > deadline) throw new Error("the window did not close");
    await new Promise((r) => setTimeout(r, WAIT.interval));
  }
  await browser.deleteSession().catch(() => {});

  browser = await driver.startApp([wsA]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.waitUntil(async () => (await tabs()).length === 2, { ...WAIT, timeoutMsg: "both folders are back" });
  const [a, b] = [await tabOf(wsA), await tabOf(wsB)];
  assert.equal(a.pending, 1);
  assert.equal(b.pending, 1);
  assert.equal(a.active, true, "the folder named on the command line is shown");
  await browser.waitUntil(async () => (await cardLabels()).length === 1, WAIT);
  assert.deepEqual(await cardLabels(), ["AST Edit: 3 replacements in 1 file"]);
  await browser.$(`[data-testid="folder-tab"][data-root="${fs.realpathSync(wsB)}"] [data-testid="folder-name"]`).click();
  await browser.waitUntil(async () => (await cardLabels())[0] === "AST Edit: 2 replacements in 1 file", {
    ...WAIT,
    timeoutMsg: "B's remaining preview",
  });
});
