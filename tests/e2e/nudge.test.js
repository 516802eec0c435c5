// End to end: a nudge when someone is waiting. The real app runs on a real session bus
// (`dbus-run-session`) whose `org.freedesktop.Notifications` is a small stand-in server
// (notify-server.py) that records every call. Two folders are open; while the window is not
// focused, an agent's preview in the other folder becomes a notification through Tauri's
// notification plugin (who, which folder, what — no file contents), the window's title counts
// what is pending, and clicking the notification (the server's `ActionInvoked "default"`)
// brings the window to that folder and action. The tray icon (the stand-in desktop's
// StatusNotifierWatcher) carries the count. Turning notifications and the tray off is kept.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { appBinary, rdeskBinary, root, startDriver, tempDir, textOf, until, SHOTS } from "./launch.js";

const WAIT = { timeout: 30000, interval: 100 };
const EDIT = { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" };
const WAIT_EDIT = { ops: [{ pat: "oldName($A)", out: "newName($A)" }], lang: "ts", path: "src/stale.ts" };

let driver;
let browser;
let server;
let lines;
let client;
const record = path.join(tempDir("rd-e2e-nudge-rec-"), "notifications.jsonl");
const wsA = tempDir("rd-e2e-nudge-a-", "tests/fixtures/shop");
const wsB = tempDir("rd-e2e-nudge-b-", "tests/fixtures/shop");

const notifications = () =>
  fs.existsSync(record) ? fs.readFileSync(record, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];

const trayFile = path.join(path.dirname(record), "tray.json");
/** The labels of the tray items registered on the stand-in desktop's tray, read now. */
async function trayLabels() {
  fs.rmSync(trayFile, { force: true });
  server.stdin.write(`tray ${trayFile}\n`);
  await until(() => fs.existsSync(trayFile), "the tray stand-in's answer", 5000);
  return JSON.parse(fs.readFileSync(trayFile, "utf8")).map((i) => i.XAyatanaLabel);
}

/** Takes the keyboard focus away from the app's window, as switching to another program does. */
const unfocus = () => execFileSync("python3", [path.join(root, "tests/e2e/x-unfocus.py")]);

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  // Its own process group: the bus and whatever the bus starts (portals) are stopped with it.
  server = spawn("dbus-run-session", ["--", "/usr/bin/python3", path.join(root, "tests/e2e/notify-server.py"), record], {
    stdio: ["pipe", "pipe", "inherit"],
    detached: true,
  });
  lines = readline.createInterface({ input: server.stdout });
  const ready = await new Promise((resolve, reject) => {
    lines.once("line", resolve);
    server.once("exit", (code) => reject(new Error(`the notification stand-in exited (${code})`)));
  });
  assert.match(ready, /^ready /);
  process.env.DBUS_SESSION_BUS_ADDRESS = ready.slice("ready ".length);
  const runtime = tempDir("rd-e2e-nudge-run-");
  fs.chmodSync(runtime, 0o700);
  process.env.XDG_RUNTIME_DIR = runtime;
  process.env.XDG_DATA_HOME = tempDir("rd-e2e-nudge-data-");
  process.env.XDG_CONFIG_HOME = tempDir("rd-e2e-nudge-config-");
  driver = await startDriver();
  browser = await driver.startApp([wsA]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
});

after(async () => {
  await client?.close().catch(() => {});
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
  server?.stdin.end();
  lines?.close();
  // The bus's services keep the output pipe open: read no more from it, and stop the group.
  server?.stdout.destroy();
  if (server?.pid) {
    try {
      process.kill(-server.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
});

test("an agent's preview in a background folder becomes a notification; its click shows that action", async () => {
  // The agent works in B, which no window has open: `resolve-desk B` joins this desk.
  client = new Client({ name: "claude-code", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: rdeskBinary(),
      args: ["mcp", "--workspace", wsB],
      env: { ...process.env, RESOLVE_DESK_BIN: appBinary() },
      stderr: "inherit",
    }),
  );
  const b = fs.realpathSync(wsB);
  const tab = `[data-testid="folder-tab"][data-root="${b}"]`;
  await browser.$(tab).waitForExist(WAIT);
  // The person goes on reading folder A, then switches to another program.
  const a = fs.realpathSync(wsA);
  await browser.$(`[data-testid="folder-tab"][data-root="${a}"] [data-testid="folder-name"]`).click();
  await browser.waitUntil(async () => (await browser.$('[data-testid="workspace-name"]').getText()) === path.basename(a), {
    ...WAIT,
    timeoutMsg: "folder A is shown",
  });
  unfocus();
  const out = await client.callTool({ name: "ast_edit", arguments: EDIT });
  assert.notEqual(out.isError, true, textOf(out));

  await until(() => notifications().length > 0, "a notification on the session bus", WAIT.timeout);
  const [n] = notifications();
  const name = path.basename(b);
  assert.equal(n.summary, "Resolve Desk");
  assert.equal(n.body, `claude-code sent a preview for your review in ${name}: AST Edit: 3 replacements in 1 file`);
  assert.ok(!/console\.|logger\./.test(n.body), "never file contents");
  assert.ok(n.actions.includes("default"), "a click on it is reported");
  // The native window's title (WebDriver's getTitle is the page's): read from the X server.
  const titles = () => execFileSync("python3", [path.join(root, "tests/e2e/wm-close.py"), "--titles"], { encoding: "utf8" });
  await until(() => titles().split("\n").includes("Resolve Desk (1 pending)"), "the title counts the pending action", WAIT.timeout);
  // The tray (the desktop's StatusNotifierWatcher) shows the same count on the app's icon.
  await until(async () => (await trayLabels()).includes("1"), "the tray icon's label counts the pending action", WAIT.timeout);

  // The folder on screen is A; the click brings B with that action.
  assert.equal(await browser.$('[data-testid="workspace-name"]').getText(), path.basename(fs.realpathSync(wsA)));
  server.stdin.write(`click ${n.id}\n`);
  await browser.waitUntil(async () => (await browser.$('[data-testid="workspace-name"]').getText()) === name, {
    ...WAIT,
    timeoutMsg: "the clicked notification's folder is shown",
  });
  const card = await browser.$('[data-testid="queue-card"][aria-current="true"]');
  await card.waitForExist(WAIT);
  assert.equal(await card.getAttribute("data-label"), "AST Edit: 3 replacements in 1 file");
  await browser.saveScreenshot(path.join(SHOTS, "nudge-revealed.png"));
});

test("notifications can be turned off in the inbox, and stay off", async () => {
  await browser.$('[data-testid="inbox-button"]').click();
  const box = await browser.$('[data-testid="setting-notifications"]');
  await box.waitForDisplayed(WAIT);
  assert.equal(await box.isSelected(), true, "on by default");
  await box.click();
  const file = path.join(process.env.XDG_CONFIG_HOME, "resolve-desk", "desk.json");
  await until(() => fs.existsSync(file) && JSON.parse(fs.readFileSync(file, "utf8")).notifications === false, "the setting is saved");
  const tray = await browser.$('[data-testid="setting-tray"]');
  assert.equal(await tray.isSelected(), true, "the tray icon is on by default");
  await tray.click();
  await until(() => JSON.parse(fs.readFileSync(file, "utf8")).tray === false, "the tray setting is saved");
  await browser.keys("Escape");
});

test("an agent that starts waiting on resolve in the background is a notification too", async () => {
  // Pushed while notifications are off: no notification, nothing remembered for that action.
  const out = await client.callTool({ name: "ast_edit", arguments: WAIT_EDIT });
  assert.notEqual(out.isError, true, textOf(out));
  const before = notifications().length;
  await browser.$('[data-testid="inbox-button"]').click();
  const box = await browser.$('[data-testid="setting-notifications"]');
  await box.waitForDisplayed(WAIT);
  await box.click();
  const file = path.join(process.env.XDG_CONFIG_HOME, "resolve-desk", "desk.json");
  await until(() => JSON.parse(fs.readFileSync(file, "utf8")).notifications === true, "notifications are on again");
  await browser.keys("Escape");
  unfocus();
  // The agent now waits for the person's decision (bounded; ended with the client after this test).
  client.callTool({ name: "resolve", arguments: { action: "apply", reason: "please check" } }, undefined, { timeout: 120000 }).catch(() => {});
  await until(() => notifications().length > before, "a notification for the waiting agent", WAIT.timeout);
  const n = notifications().at(-1);
  const name = path.basename(fs.realpathSync(wsB));
  assert.equal(n.body, `claude-code is waiting for your review in ${name}: AST Edit: 1 replacement in 1 file`);
});
