// End to end: an apply killed halfway is rolled back when the app opens its workspace.
// A real process (the engine's `apply-probe`, built by `cargo test`) applies a change set to
// a copy of tests/fixtures/shop, stops in the middle of its commit (the test-only hook) and
// is SIGKILLed there, leaving files half-renamed and the intent record behind. The real app
// then opens the folder: every file is back as before, no temporary is left, a banner says
// what happened, and the History shows the apply as failed with the reason "interrupted".
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { appBinary, root, startDriver, tempDir, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };
const PROBE = process.env.RD_APPLY_PROBE ?? path.join(path.dirname(appBinary()), "apply-probe");

let driver;
let browser;

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

/** Every file under `dir` (relative path → bytes as base64), folders as "dir". */
function snapshot(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.isDirectory()) {
        out[rel] = "dir";
        walk(p);
      } else out[rel] = fs.readFileSync(p).toString("base64");
    }
  };
  walk(dir);
  return out;
}

/** Runs the probe until the hook pauses it at `point`, then SIGKILLs it. */
function killAt(ws, planFile, point) {
  return new Promise((resolve, reject) => {
    const child = spawn(PROBE, ["apply", ws, planFile], {
      env: { ...process.env, RDESK_TEST_PAUSE_AT: point },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (chunk) => {
      err += chunk;
      if (err.includes(`RDESK_PAUSED ${point}`)) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      signal === "SIGKILL" ? resolve() : reject(new Error(`the probe ended (${code}) before ${point}: ${err}`)),
    );
  });
}

test("an apply killed halfway is rolled back when the app opens the folder, and the app says so", async () => {
  assert.ok(fs.existsSync(PROBE), `apply-probe missing at ${PROBE}; cargo test --workspace builds it`);
  const ws = tempDir("rd-e2e-recover-ws-", "tests/fixtures/shop");
  const data = tempDir("rd-e2e-recover-data-");
  const before = snapshot(ws);
  const files = Object.keys(before).filter((f) => before[f] !== "dir");
  assert.ok(files.length >= 3, "the fixture has files to change");
  const plan = [
    ...files.slice(0, 3).map((f) => ({ op: "edit", path: f, after: `// rewritten\n${f}\n` })),
    { op: "create", path: "generated/new-file.ts", after: "export {};\n" },
    { op: "rename", from: files[3] ?? files[0], to: "renamed-by-the-apply.ts" },
  ];
  const planFile = path.join(tempDir("rd-e2e-recover-plan-"), "plan.json");
  fs.writeFileSync(planFile, JSON.stringify(plan));

  await killAt(ws, planFile, "commit:2");
  assert.ok(fs.existsSync(path.join(ws, ".rdesk-apply.log")), "the killed apply left its record");
  assert.notDeepEqual(snapshot(ws), before, "the kill left the folder half-applied");

  driver = await startDriver();
  browser = await driver.startApp([ws, "--data-dir", data]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  // The banners' messages, read in the page in one go.
  const messages = () =>
    browser.execute(() => [...document.querySelectorAll('[data-testid="notice-message"]')].map((m) => m.textContent));
  let message = "";
  await browser.waitUntil(
    async () => {
      message = (await messages()).find((m) => m.includes("interrupted")) ?? "";
      return message !== "";
    },
    { ...WAIT, timeoutMsg: "no banner about the interrupted apply" },
  );
  assert.ok(message.includes("Kill test: many files"), `names the action: ${message}`);
  assert.ok(message.includes("restored as before the apply"), `says what was done: ${message}`);
  await browser.saveScreenshot(path.join(SHOTS, "recovered-apply.png"));

  const after = snapshot(ws);
  assert.deepEqual(after, before, "every file byte for byte as before, nothing left behind");

  await browser.$('[data-testid="history-button"]').click();
  const entry = await browser.$('[data-testid="history-entry"][data-kind="error"]');
  await entry.waitForDisplayed({ ...WAIT, timeoutMsg: "the interrupted apply is not in the history" });
  const text = await entry.getText();
  assert.ok(text.includes("interrupted"), `the history gives the reason: ${text}`);
  assert.ok(!text.toLowerCase().includes("applied:"), `never shown as applied: ${text}`);
  await browser.saveScreenshot(path.join(SHOTS, "recovered-apply-history.png"));
});
