// End to end with the real Claude Code (the npm binary pinned in tests/agents/package.json) in
// a folder wired by the real `rdesk setup claude-code`, its model played by fakellm (the
// Anthropic Messages API, scripted by rules; tests/agents/requirements.txt). Claude's own Edit
// and Write wait in the real window under Xvfb and the person decides there by clicking:
//   - an Edit discarded with a reason: the file is untouched and the reason reaches the model;
//   - an Edit applied: the file holds exactly the preview and Claude's own tool reports success;
//   - a Write commented on and sent back with Request changes: no file, the comment reaches
//     the model.
// What reached the model is checked through the rules: fakellm answers "SAW-…" only when the
// tool result it is sent contains the person's words (or Claude's success text), and the
// answer is Claude's final result.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawn, execFileSync } from "node:child_process";
import { freePort, rdeskBinary, root, startAppWithMcp, tempDir, SHOTS } from "./launch.js";
import { startFakellm } from "./agent-desk.js";

const WAIT = { timeout: 30000, interval: 100 };
const CLAUDE = path.join(root, "tests/agents/node_modules/.bin/claude");

let driver;
let browser;
let ws;
let home;
let llm;
let port;

const DISCARD_REASON = "Keep console.log here, the greeting is logged on purpose";
const COMMENT = "Name it NOTES.md and add a title line";

/** fakellm's rules: the most advanced state of each scenario first (a rule's tool_result_contains sees earlier results too). */
function rules() {
  const file = (p) => path.join(ws, p);
  const call = (name, args) => ({ tool_calls: [{ name, arguments: args }] });
  return {
    version: 1,
    defaults: { fallback: "deterministic_echo" },
    rules: [
      { name: "discard-seen", when: { tool_result_contains: DISCARD_REASON }, respond: { content: "SAW-DISCARD-REASON" } },
      { name: "comment-seen", when: { tool_result_contains: COMMENT }, respond: { content: "SAW-COMMENT" } },
      { name: "apply-seen", when: { messages_contain: "TASK-APPLY", tool_result_contains: "has been updated" }, respond: { content: "SAW-APPLY-SUCCESS" } },
      {
        name: "discard-edit",
        when: { messages_contain: "TASK-DISCARD", tool_result_contains: "console.log(\"greeting\"" },
        respond: call("Edit", { file_path: file("src/apply.ts"), old_string: 'console.log("greeting", name);', new_string: 'logger.debug("greeting", name);' }),
      },
      { name: "discard-read", when: { messages_contain: "TASK-DISCARD" }, respond: call("Read", { file_path: file("src/apply.ts") }) },
      {
        name: "apply-edit",
        when: { messages_contain: "TASK-APPLY", tool_result_contains: "console.warn(\"count\"" },
        respond: call("Edit", { file_path: file("src/discard.ts"), old_string: 'console.warn("count", items.length);', new_string: 'logger.warn("count", items.length);' }),
      },
      { name: "apply-read", when: { messages_contain: "TASK-APPLY" }, respond: call("Read", { file_path: file("src/discard.ts") }) },
      {
        name: "write",
        when: { messages_contain: "TASK-WRITE" },
        respond: call("Write", { file_path: file("notes.md"), content: "release notes\n- the greeting is logged\n" }),
      },
    ],
  };
}

/** Runs `claude -p PROMPT` headless in the workspace; resolves with its JSON result. */
function claude(prompt, conversation) {
  const env = {
    ...process.env,
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    ANTHROPIC_API_KEY: "sk-ant-fake",
    ANTHROPIC_CUSTOM_HEADERS: `X-Fakellm-Conversation-Id: ${conversation}`,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    // The app under test is the desk the hook joins: never start another.
    RESOLVE_DESK_BIN: "/bin/false",
  };
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE, ["-p", prompt, "--output-format", "json", "--permission-mode", "default"], { cwd: ws, env });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        resolve({ code, json: JSON.parse(out), err });
      } catch {
        reject(new Error(`claude exited ${code} without JSON:\n${out}\n${err}`));
      }
    });
  });
}

const cards = () => browser.$$('[data-testid="queue-card"]');
const waitForCards = (n) => browser.waitUntil(async () => (await cards()).length === n, { ...WAIT, timeoutMsg: `expected ${n} queue cards` });

async function openTopCard(label) {
  await waitForCards(1);
  const card = (await cards())[0];
  assert.equal(await card.getAttribute("data-label"), label);
  await card.click();
  await browser.$('[data-testid="proposal-waiting"]').waitForDisplayed({ ...WAIT, timeoutMsg: "Claude Code waits for the person" });
}

before(async () => {
  assert.ok(fs.existsSync(CLAUDE), `Claude Code is not installed in tests/agents: run scripts/setup.sh`);
  fs.mkdirSync(SHOTS, { recursive: true });
  ({ ws, driver, browser } = await startAppWithMcp("rd-e2e-claude"));
  home = tempDir("rd-e2e-claude-home-");
  fs.mkdirSync(path.join(home, ".claude"));
  const setup = execFileSync(rdeskBinary(), ["setup", "claude-code", "--workspace", ws], { encoding: "utf8" });
  assert.match(setup, /added a PreToolUse hook on Edit\|MultiEdit\|Write\|NotebookEdit/);
  port = await freePort();
  llm = await startFakellm(rules(), port);
});

after(async () => {
  llm?.kill();
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("Claude Code's Edit waits in the window; discarded with a reason, the file is untouched and the model reads why", async () => {
  const before = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");
  const run = claude("TASK-DISCARD: log the greeting with the logger", "discard");
  await openTopCard("Claude Code Edit: src/apply.ts");
  assert.equal(fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8"), before, "nothing is written while the person reads");
  await browser.saveScreenshot(path.join(SHOTS, "claude-code-edit.png"));
  await browser.$('[data-testid="reason-input"]').setValue(DISCARD_REASON);
  const discard = await browser.$('[data-testid="discard-button"]');
  await browser.waitUntil(() => discard.isEnabled(), WAIT);
  await discard.click();
  const { json } = await run;
  assert.equal(json.result, "SAW-DISCARD-REASON", `the person's reason reached the model: ${JSON.stringify(json)}`);
  assert.equal(fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8"), before, "a discarded edit writes nothing");
  await waitForCards(0);
});

test("Claude Code's Edit applied in the window: the file holds exactly the preview and Claude's tool reports success", async () => {
  const before = fs.readFileSync(path.join(ws, "src/discard.ts"), "utf8");
  const expected = before.replace('console.warn("count", items.length);', 'logger.warn("count", items.length);');
  const run = claude("TASK-APPLY: warn through the logger", "apply");
  await openTopCard("Claude Code Edit: src/discard.ts");
  await browser.$('[data-testid="reason-input"]').setValue("Fine");
  const apply = await browser.$('[data-testid="apply-button"]');
  await browser.waitUntil(() => apply.isEnabled(), WAIT);
  await apply.click();
  const { json } = await run;
  assert.equal(json.result, "SAW-APPLY-SUCCESS", `Claude's own Edit reported success to the model: ${JSON.stringify(json)}`);
  assert.equal(fs.readFileSync(path.join(ws, "src/discard.ts"), "utf8"), expected, "exactly the previewed bytes");
  await waitForCards(0);
  // The History has it, so undo covers it.
  await browser.$('[data-testid="history-button"]').click();
  const who = await browser.$('[data-testid="history-who"]');
  await who.waitForDisplayed(WAIT);
  assert.match(await who.getText(), /Decided by the person; asked by Claude Code/);
  await browser.keys("Escape");
  await who.waitForDisplayed({ ...WAIT, reverse: true });
});

test("Claude Code's Write sent back with Request changes and a line comment: no file, the comment reaches the model", async () => {
  const run = claude("TASK-WRITE: write the release notes", "write");
  await openTopCard("Claude Code Write: notes.md");
  const added = '[role="row"][data-kind="added"] [data-testid="comment-line"][data-side="new"]';
  await browser.$(added).waitForDisplayed({ ...WAIT, timeoutMsg: "the new file's lines can be commented on" });
  await (await browser.$$(added))[0].click();
  const input = await browser.$('[data-testid="comment-input"]');
  await input.waitForDisplayed(WAIT);
  await input.setValue(COMMENT);
  await browser.$('[data-testid="comment-save"]').click();
  await browser.waitUntil(async () => (await browser.$$('[data-testid="comment"]')).length === 1, { ...WAIT, timeoutMsg: "the comment shows" });
  await browser.$('[data-testid="reason-input"]').setValue("Not yet");
  await browser.saveScreenshot(path.join(SHOTS, "claude-code-write-comment.png"));
  await browser.$('[data-testid="request-changes-button"]').click();
  const { json } = await run;
  assert.equal(json.result, "SAW-COMMENT", `the comment reached the model: ${JSON.stringify(json)}`);
  assert.ok(!fs.existsSync(path.join(ws, "notes.md")), "a Write sent back creates nothing");
});
