// End to end: the window a person sees is usable by everyone and fits their screen.
// - axe-core (the real engine, injected through WebDriver) finds no serious or critical
//   violation in the main window, the Run tool dialog and the History;
// - on a 1280×800 screen without a window manager (its own Xvfb), the window opens inside the
//   screen and Apply and Discard are within it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const WAIT = { timeout: 20000, interval: 100 };

async function axeViolations(browser) {
  await browser.execute(`${AXE}\n;window.axe = window.axe || (typeof axe !== "undefined" ? axe : undefined);`);
  const violations = await browser.executeAsync((done) => {
    window.axe
      .run(document, { resultTypes: ["violations"] })
      .then((r) => done(r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }))))
      .catch((e) => done([{ id: "axe-error", impact: "critical", help: String(e), nodes: [] }]));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** An Xvfb of its own at `size` (no window manager), its display number. */
function startXvfb(size) {
  return new Promise((resolve, reject) => {
    const x = spawn("Xvfb", ["-displayfd", "1", "-screen", "0", `${size}x24`, "-nolisten", "tcp"], { stdio: ["ignore", "pipe", "ignore"] });
    x.stdout.once("data", (d) => resolve({ display: `:${String(d).trim()}`, kill: () => x.kill() }));
    x.once("error", reject);
    x.once("exit", (code) => reject(new Error(`Xvfb exited with ${code}`)));
  });
}

let driver;
let browser;

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  driver = await startDriver();
  browser = await driver.startApp(["--data-dir", tempDir("rd-e2e-a11y-data-")]);
  await browser.$('[data-testid="queue-card"]').waitForExist(WAIT);
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("axe-core finds no serious or critical violation in the main window", async () => {
  await browser.$('[data-testid="diff-view"], [data-testid="rename-table"]').waitForExist(WAIT);
  const found = await axeViolations(browser);
  assert.deepEqual(found, [], JSON.stringify(found, null, 2));
});

test("axe-core finds none in the Run tool dialog and the History", async () => {
  await browser.keys(["Escape"]);
  const runTool = await browser.$('[data-testid="run-tool-button"]');
  await runTool.waitForClickable(WAIT);
  await runTool.click();
  await browser.$("dialog[open]").waitForExist(WAIT);
  let found = await axeViolations(browser);
  assert.deepEqual(found, [], `Run tool: ${JSON.stringify(found, null, 2)}`);
  await browser.keys(["Escape"]);
  await browser.waitUntil(async () => !(await browser.$("dialog[open]").isExisting()), WAIT);
  const history = await browser.$('[data-testid="history-button"]');
  await history.click();
  await browser.$("dialog[open]").waitForExist(WAIT);
  found = await axeViolations(browser);
  assert.deepEqual(found, [], `History: ${JSON.stringify(found, null, 2)}`);
  await browser.keys(["Escape"]);
});

test("on a 1280×800 screen without a window manager the window and its decision buttons fit", async () => {
  const x = await startXvfb("1280x800");
  const small = await startDriver({ env: { ...process.env, DISPLAY: x.display } });
  const app = await small.startApp(["--data-dir", tempDir("rd-e2e-fit-data-")]);
  try {
    await app.$('[data-testid="queue-card"]').waitForExist(WAIT);
    const view = await app.execute(() => ({ w: window.innerWidth, h: window.innerHeight, sw: screen.width, sh: screen.height }));
    assert.ok(view.w <= 1280 && view.h <= 800, `the window is ${view.w}×${view.h} on a 1280×800 screen`);
    for (const name of ["Apply", "Discard"]) {
      const button = await app.$(`[data-testid="${name.toLowerCase()}-button"]`);
      await button.waitForExist(WAIT);
      const r = await app.execute((el) => el.getBoundingClientRect().toJSON(), button);
      assert.ok(r.right <= view.w && r.bottom <= view.h && r.left >= 0 && r.top >= 0, `${name} at ${JSON.stringify(r)} is inside ${view.w}×${view.h}`);
    }
    await app.saveScreenshot(path.join(SHOTS, "fits-1280x800.png"));
    // At the minimum size (900×600) every decision control is still reachable: the panel scrolls.
    await app.setWindowSize(900, 600);
    await app.waitUntil(async () => (await app.execute(() => window.innerWidth)) <= 900, WAIT);
    const small = await app.execute(() => ({ w: window.innerWidth, h: window.innerHeight }));
    for (const id of ["reason-input", "apply-button", "discard-button"]) {
      const el = await app.$(`[data-testid="${id}"]`);
      const r = await app.execute((e) => {
        e.scrollIntoView({ block: "nearest", inline: "nearest" });
        return e.getBoundingClientRect().toJSON();
      }, el);
      assert.ok(r.bottom <= small.h && r.right <= small.w && r.top >= 0 && r.left >= 0, `${id} at ${JSON.stringify(r)} is reachable in ${small.w}×${small.h}`);
    }
  } finally {
    await app.deleteSession().catch(() => {});
    small.kill();
    x.kill();
  }
});
