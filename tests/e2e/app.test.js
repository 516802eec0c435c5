// End to end: the real Resolve Desk binary in a real WebKitGTK webview under Xvfb, driven
// through tauri-driver + WebKitWebDriver. Each run works on a fresh copy of
// tests/fixtures/shop with the three previews of tests/fixtures/shop.jsonl on the stack
// (LIFO: the console.log rewrite is on top, then console.warn, then oldName).
// Screenshots of the main states go to SHOTS (launch.js).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freePort, root, startDriver, tempDir, until, SHOTS } from "./launch.js";
import { startFakeLlm, textReply, toolCallReply } from "./fakeLlm.js";

const WAIT = { timeout: 20000, interval: 100 };

let driver;
let browser;
let ws;
let data;

const startApp = (args) => driver.startApp(args);

const cards = () => browser.$$('[data-testid="queue-card"]');
const cardLabels = async () => {
  const labels = [];
  for (const c of await cards()) labels.push(await c.getAttribute("data-label"));
  return labels;
};
const waitForCards = (n) =>
  browser.waitUntil(async () => (await cards()).length === n, { ...WAIT, timeoutMsg: `expected ${n} queue cards` });
const shot = (name) => browser.saveScreenshot(path.join(SHOTS, name));
const within = (promise, ms, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))]);

const freshShop = () => tempDir("rd-e2e-agent-ws-", "tests/fixtures/shop");

// Fills the agent settings through the panel's Settings dialog.
async function configureProvider(baseUrl) {
  await browser.$('[data-testid="agent-settings-button"]').click();
  const url = await browser.$('[data-testid="settings-base-url"]');
  await url.waitForDisplayed(WAIT);
  await url.setValue(baseUrl);
  await browser.$('[data-testid="settings-model"]').setValue("fake-model");
  await browser.$('[data-testid="settings-api-key-env"]').setValue("RD_E2E_UNSET_KEY");
  await browser.$('[data-testid="settings-save"]').click();
  await browser.$('[data-testid="settings-saved"]').waitForDisplayed(WAIT);
}

async function closeDialog(testid) {
  await browser.keys("Escape");
  await browser.$(`[data-testid="${testid}"]`).waitForDisplayed({ ...WAIT, reverse: true });
}

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  ws = tempDir("rd-e2e-ws-", "tests/fixtures/shop");
  data = tempDir("rd-e2e-data-");
  driver = await startDriver();
  browser = await startApp([ws, "--script", path.join(root, "tests/fixtures/shop.jsonl"), "--data-dir", data]);
  await browser.setWindowSize(1400, 900).catch(() => {});
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("the queue shows the stack top first, with labels, and only the top resolvable", async () => {
  await waitForCards(3);
  assert.deepEqual(await cardLabels(), [
    "AST Edit: 3 replacements in 1 file",
    "AST Edit: 2 replacements in 1 file",
    "AST Edit: 1 replacement in 1 file",
  ]);
  const [top, second] = await cards();
  assert.ok(await top.$('[data-testid="next-badge"]').isExisting(), "the top card is marked next");
  assert.ok(!(await second.$('[data-testid="next-badge"]').isExisting()), "only the top card is marked next");
  await second.click();
  await browser.$('[data-testid="not-top-message"]').waitForDisplayed(WAIT);
  assert.equal(await browser.$('[data-testid="apply-button"]').isEnabled(), false, "apply is disabled below the top");
  await top.click();
  await shot("queue.png");
});

test("a file's diff opens from the file list", async () => {
  const row = await browser.$('[data-testid="file-row"]');
  await row.waitForDisplayed(WAIT);
  assert.equal(await row.getAttribute("data-path"), "src/apply.ts");
  assert.match(await row.getText(), /apply\.ts/);
  await row.click();
  const diff = await browser.$('[data-testid="diff-view"]');
  await diff.waitForDisplayed(WAIT);
  await browser.waitUntil(async () => (await diff.getText()).includes("logger.debug"), {
    ...WAIT,
    timeoutMsg: "the diff shows the rewrite",
  });
  assert.match(await diff.getText(), /console\.log\("greeting", name\)/);
  await shot("diff.png");
});

test("apply the top with a reason writes the file and records the history line", async () => {
  const apply = await browser.$('[data-testid="apply-button"]');
  assert.equal(await apply.isEnabled(), false, "apply needs a reason");
  await browser.$('[data-testid="reason-input"]').setValue("Looks correct");
  await browser.waitUntil(() => apply.isEnabled(), { ...WAIT, timeoutMsg: "apply enabled once a reason is typed" });
  await apply.click();
  await waitForCards(2);
  const banner = await browser.$('[data-testid="result-banner"]');
  await banner.waitForDisplayed(WAIT);
  assert.match(await banner.getText(), /Applied 3 replacements in 1 file\./);
  const written = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");
  assert.match(written, /logger\.debug\("greeting", name\);/);
  assert.doesNotMatch(written, /console\.log/);
  await browser.$('[data-testid="history-button"]').click();
  const entry = await browser.$('[data-testid="history-entry"]');
  await entry.waitForDisplayed(WAIT);
  assert.match(await entry.getText(), /Accept: 3 replacements in 1 file \[AST Edit\]/);
  assert.match(await entry.getText(), /Looks correct/);
  await shot("history.png");
  await browser.keys("Escape");
  await entry.waitForDisplayed({ ...WAIT, reverse: true });
});

test("discard the next leaves its file untouched with the default discard text", async () => {
  const before = fs.readFileSync(path.join(ws, "src/discard.ts"), "utf8");
  assert.deepEqual((await cardLabels())[0], "AST Edit: 2 replacements in 1 file");
  await browser.$('[data-testid="reason-input"]').setValue("Wrong scope");
  const discard = await browser.$('[data-testid="discard-button"]');
  await browser.waitUntil(() => discard.isEnabled(), WAIT);
  await discard.click();
  await waitForCards(1);
  const banner = await browser.$('[data-testid="result-banner"]');
  await browser.waitUntil(async () => (await banner.getText()).includes("Discarded:"), WAIT);
  assert.match(await banner.getText(), /Discarded: AST Edit: 2 replacements in 1 file\. Reason: Wrong scope/);
  assert.equal(fs.readFileSync(path.join(ws, "src/discard.ts"), "utf8"), before, "discard writes nothing");
});

test("a file edited on disk turns the card stale without pressing anything; changed back, it is pending again", async () => {
  const file = path.join(ws, "src/stale.ts");
  const previewed = fs.readFileSync(file, "utf8");
  const badge = () => browser.$('[data-testid="queue-card"] [data-testid="status-badge"]');
  assert.equal(await (await badge()).isExisting(), false, "pending before the edit");
  const edited = "// edited outside the app\n" + previewed;
  fs.writeFileSync(file, edited);
  // No click: the workspace watch turns the card stale.
  await browser.waitUntil(async () => (await badge()).isExisting() && (await (await badge()).getText()) === "stale", {
    ...WAIT,
    timeoutMsg: "the edited file makes the card stale by itself",
  });
  const stale = await browser.$('[data-testid="stale-box"]');
  await stale.waitForDisplayed(WAIT);
  assert.match(await browser.$('[data-testid="stale-files"]').getText(), /src\/stale\.ts/);
  assert.match(await stale.getText(), /Preview is stale: 1 file changed on disk since the preview: src\/stale\.ts \(content changed\)/);
  // What changed since the preview: the previewed content → the disk now.
  const since = await browser.$('[data-testid="since-file"][data-path="src/stale.ts"]');
  await since.waitForDisplayed(WAIT);
  assert.match(await since.getText(), /src\/stale\.ts — content changed/);
  assert.match(await since.$('[data-testid="since-lines"]').getText(), /\+ \/\/ edited outside the app/);
  assert.equal(await browser.$('[data-testid="apply-button"]').isEnabled(), false, "a stale preview cannot be applied");
  assert.ok(await browser.$('[data-testid="rerun-button"]').isDisplayed(), "offers to run the preview again");
  await shot("live-stale.png");
  assert.equal(fs.readFileSync(file, "utf8"), edited, "nothing written");

  fs.writeFileSync(file, previewed);
  await browser.waitUntil(async () => !(await (await badge()).isExisting()), {
    ...WAIT,
    timeoutMsg: "the file changed back to the previewed content makes the card pending again",
  });
  await stale.waitForDisplayed({ ...WAIT, reverse: true });

  // Stale again, for the next test (run the preview again).
  fs.writeFileSync(file, edited);
  await stale.waitForDisplayed(WAIT);
  await shot("stale.png");
});

test("running the preview again replaces the stale action with a fresh one", async () => {
  await browser.$('[data-testid="rerun-button"]').click();
  await browser.waitUntil(async () => {
    const c = await cards();
    return c.length === 1 && !(await c[0].$('[data-testid="status-badge"]').isExisting());
  }, { ...WAIT, timeoutMsg: "a fresh, pending preview replaces the stale one" });
  assert.deepEqual(await cardLabels(), ["AST Edit: 1 replacement in 1 file"]);
});

test("without a workspace the app opens the demo with two previews queued", async () => {
  await browser.deleteSession();
  // The native windows' titles (WebDriver's getTitle is the page's), read from the X server;
  // an earlier app of this file may still be on the display.
  const titled = () =>
    execFileSync("python3", [path.join(root, "tests/e2e/wm-close.py"), "--titles"], { encoding: "utf8" })
      .split("\n")
      .filter((t) => t === "Resolve Desk (2 pending)").length;
  const before = titled();
  browser = await startApp(["--data-dir", data]);
  await waitForCards(2);
  await until(() => titled() > before, "the window's title counts the demo's two pending actions", WAIT.timeout);
  const labels = await cardLabels();
  assert.equal(labels[0], "Batch rename: 6 files", "the rename was pushed last, so it is on top");
  assert.match(labels[1], /^AST Edit: \d+ replacements in 2 files$/);
  const rows = await browser.$$('[data-testid="rename-row"]');
  assert.equal(rows.length, 6, "the top action's old → new table is shown");
  await shot("demo.png");
});

test("a decision journal that cannot be opened is a banner at the top that cannot be dismissed", async () => {
  await browser.deleteSession();
  // The data folder is a file, so the journal inside it cannot be created.
  const blocked = path.join(tempDir("rd-e2e-blocked-"), "not-a-folder");
  fs.writeFileSync(blocked, "x");
  const shop = freshShop();
  browser = await startApp([shop, "--script", path.join(root, "tests/fixtures/shop.jsonl"), "--data-dir", blocked]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await waitForCards(3);
  await browser.$('[data-testid="file-row"]').waitForDisplayed(WAIT);
  const banner = await browser.$('[data-testid="notice"][data-id="journal"]');
  await banner.waitForDisplayed(WAIT);
  assert.equal(await banner.getAttribute("role"), "alert");
  const message = await banner.$('[data-testid="notice-message"]').getText();
  assert.ok(message.includes(path.join(blocked, "journal.sqlite3")), `names the database: ${message}`);
  assert.ok(message.includes("restart Resolve Desk"), `says what to do: ${message}`);
  assert.equal((await banner.$$('[data-testid="notice-dismiss"]')).length, 0, "no close button while the journal is broken");
  await shot("journal-banner.png");
});

test("the agent: a prompt, the model's preview, its proposal, and the person's Apply is the model's answer", async () => {
  const llm = await startFakeLlm([
    toolCallReply(
      "call_edit",
      "ast_edit",
      { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" },
      "I'll preview the rewrite first.",
    ),
    toolCallReply("call_resolve", "resolve", { action: "apply", reason: "Only logging calls change; tests pass." }),
    textReply("Done: src/apply.ts now logs through logger.debug."),
  ]);
  const agentWs = freshShop();
  const config = tempDir("rd-e2e-config-");
  try {
    await browser.deleteSession();
    browser = await startApp([agentWs, "--data-dir", data, "--config-dir", config]);
    await browser.setWindowSize(1400, 900).catch(() => {});
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
    // At 1400 px the review columns come first: the agent panel opens from the top bar.
    if (!(await browser.$('[data-testid="conversation-panel"]').isExisting())) {
      await browser.$('[data-testid="agent-toggle"]').click();
    }
    await browser.$('[data-testid="conversation-panel"]').waitForDisplayed(WAIT);

    await configureProvider(llm.baseUrl);
    assert.match(await browser.$('[data-testid="settings-key-status"]').getText(), /RD_E2E_UNSET_KEY is not set/);
    const saved = JSON.parse(fs.readFileSync(path.join(config, "resolve-desk/agent.json"), "utf8"));
    assert.equal(saved.base_url, llm.baseUrl, "the settings file has the base URL typed in the panel");
    await closeDialog("agent-settings-dialog");

    const before = fs.readFileSync(path.join(agentWs, "src/apply.ts"), "utf8");
    await browser.$('[data-testid="prompt-input"]').setValue("Use logger.debug instead of console.log in src/apply.ts");
    await browser.$('[data-testid="send-button"]').click();
    await waitForCards(1);
    assert.deepEqual(await cardLabels(), ["AST Edit: 3 replacements in 1 file"]);
    const proposal = await browser.$('[data-testid="proposal-text"]');
    await proposal.waitForDisplayed(WAIT);
    assert.match(await proposal.getText(), /fake-model proposes: Apply — “Only logging calls change; tests pass\.”/);
    await browser.$('[data-testid="agent-waiting"]').waitForDisplayed(WAIT);
    assert.ok(await browser.$('[data-testid="chat-preview-link"]').isDisplayed(), "the preview is linked from the conversation");
    assert.equal(fs.readFileSync(path.join(agentWs, "src/apply.ts"), "utf8"), before, "nothing is written while the agent waits");
    assert.equal(await browser.$('[data-testid="policy-agent"]').isEnabled(), false, "the policy is locked while an action is pending");
    await shot("conversation.png");

    await browser.$('[data-testid="reason-input"]').setValue("Checked the diff: only logging changes");
    const apply = await browser.$('[data-testid="apply-button"]');
    await browser.waitUntil(() => apply.isEnabled(), WAIT);
    await apply.click();
    await within(llm.waitForRequests(3), WAIT.timeout, "the model's request after the person's decision");
    const toolMessage = llm.requests[2].messages.find((m) => m.role === "tool" && m.tool_call_id === "call_resolve");
    assert.ok(toolMessage, "the resolve call's result is in the model's next request");
    assert.match(toolMessage.content, /Decided by the person: applied\. Reason: Checked the diff: only logging changes/);
    assert.match(fs.readFileSync(path.join(agentWs, "src/apply.ts"), "utf8"), /logger\.debug\("greeting", name\);/);

    const resolved = await browser.$('[data-testid="chat-resolved"]');
    await resolved.waitForDisplayed(WAIT);
    assert.match(await resolved.getText(), /decided by you/);
    await browser.waitUntil(
      async () => (await browser.$$('[data-testid="chat-assistant"]')).length >= 2 && (await browser.$('[data-testid="send-button"]').isExisting()),
      { ...WAIT, timeoutMsg: "the model's closing answer and the turn's end" },
    );
    await shot("conversation-done.png");
    await browser.$('[data-testid="history-button"]').click();
    const who = await browser.$('[data-testid="history-who"]');
    await who.waitForDisplayed(WAIT);
    assert.match(await who.getText(), /Decided by the person; asked by fake-model, which proposed Apply/);
    await closeDialog("history-dialog");
  } finally {
    await llm.close();
  }
});

test("an unreachable provider is explained in the conversation", async () => {
  const closed = await freePort();
  await configureProvider(`http://127.0.0.1:${closed}/v1`);
  await closeDialog("agent-settings-dialog");
  await browser.$('[data-testid="prompt-input"]').setValue("Anything");
  await browser.$('[data-testid="send-button"]').click();
  const error = await browser.$('[data-testid="chat-error"]');
  await error.waitForDisplayed(WAIT);
  assert.match(await error.getText(), new RegExp(`127\\.0\\.0\\.1:${closed}.*connection refused`, "s"));
  assert.match(await error.getText(), /Check the base URL in Settings/);
  await browser.$('[data-testid="send-button"]').waitForExist(WAIT);
  await shot("agent-unreachable.png");
});
