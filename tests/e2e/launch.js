// What every end-to-end test and app benchmark needs to start the real app: a free port,
// tauri-driver on it, and a WebDriver session whose application is the Resolve Desk binary.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { remote } from "webdriverio";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Where the suite's screenshots go: an ignored folder, so a test run leaves the checkout as it
 * found it. `scripts/screenshots.sh` runs the suite with RD_SCREENSHOTS_DIR=docs/screenshots to
 * refresh the documentation's pictures. */
export const SHOTS = process.env.RD_SCREENSHOTS_DIR ? path.resolve(process.env.RD_SCREENSHOTS_DIR) : path.join(root, "target/screenshots");

/** The app binary: `RESOLVE_DESK_BIN`, else `target/<profile>/resolve-desk` of the checkout. */
export const appBinary = (profile = "debug") =>
  process.env.RESOLVE_DESK_BIN ?? path.join(root, `target/${profile}/resolve-desk`);

/** The headless command (`rdesk`): `RDESK_BIN`, else beside the app binary. */
export const rdeskBinary = () => process.env.RDESK_BIN ?? path.join(path.dirname(appBinary()), "rdesk");

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

// Resolves once something accepts connections on the port (a condition, not a sleep).
async function portOpen(p, deadline) {
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(p, "127.0.0.1", () => {
        s.end();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`tauri-driver did not listen on ${p}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Starts tauri-driver on a free port. Returns `{ startApp(args), kill() }`; `startApp` opens a
 * WebDriver session running the app binary with `args` (one app at a time per driver); `kill`
 * stops the driver and every process it started, the app included.
 */
export async function startDriver({ bin = appBinary(), logLevel = "warn", quiet = false, env = process.env } = {}) {
  if (!fs.existsSync(bin)) throw new Error(`app binary missing at ${bin}; build it with cargo build -p resolve-desk`);
  const port = await freePort();
  const nativePort = await freePort();
  const driver = spawn("tauri-driver", ["--port", String(port), "--native-port", String(nativePort)], {
    stdio: quiet ? "ignore" : ["ignore", "inherit", "inherit"],
    env,
  });
  await portOpen(port, Date.now() + 20000);
  return {
    startApp: (args) =>
      remote({
        hostname: "127.0.0.1",
        port,
        logLevel,
        connectionRetryCount: 1,
        capabilities: { "tauri:options": { application: bin, args } },
      }),
    kill: () => killTree(driver),
  };
}

/** The ids of every process under `pid` (children, their children, …). */
function descendants(pid) {
  const found = [];
  for (let queue = [pid]; queue.length > 0; ) {
    let children = [];
    try {
      children = execFileSync("pgrep", ["-P", String(queue.shift())], { encoding: "utf8" }).trim().split("\n").filter(Boolean).map(Number);
    } catch {} // pgrep exits 1 when there are none
    found.push(...children);
    queue.push(...children);
  }
  return found;
}

/**
 * Stops tauri-driver and everything it started. After `deleteSession` the app may still run: a
 * window with pending actions holds its close for the person's answer (src-tauri/src/leave.rs),
 * and once tauri-driver is gone such an app is an orphan that keeps the test file's output open,
 * so `node --test` never ends (it printed its summary and hung in CI). The app's data is on disk
 * already; it is killed outright.
 */
function killTree(driver) {
  const under = descendants(driver.pid);
  driver.kill();
  for (const pid of under) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {} // already gone
  }
}

/** A fresh temporary folder (`prefix` names it), optionally a copy of `fixture` (relative to the checkout). */
export function tempDir(prefix, fixture) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  if (fixture) fs.cpSync(path.join(root, fixture), dir, { recursive: true });
  return dir;
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** In the page: notes (Date.now()) the first frame painted after a queue card appears, in `window.__cardAt`. */
export function watchForCard(browser) {
  return browser.execute(() => {
    window.__cardAt = null;
    const obs = new MutationObserver(() => {
      if (document.querySelector('[data-testid="queue-card"]')) {
        obs.disconnect();
        requestAnimationFrame(() => (window.__cardAt = Date.now()));
      }
    });
    obs.observe(document.body, { childList: true, subtree: true });
  });
}

/** Resolves once `check()` is true (polled every 50 ms); throws naming `what` after `timeout` ms. */
export async function until(check, what, timeout = 20000) {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text parts of an MCP tool result, joined by newlines. */
export const textOf = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

/**
 * The app on a copy of the shop fixture, with a private runtime folder (`XDG_RUNTIME_DIR`, set for
 * this process so `rdesk mcp` finds the same socket), once its MCP socket is listening.
 * `prefix` names the temporary folders. Returns `{ ws, driver, browser }`.
 */
export async function startAppWithMcp(prefix) {
  const ws = tempDir(`${prefix}-ws-`, "tests/fixtures/shop");
  const runtime = tempDir(`${prefix}-run-`);
  fs.chmodSync(runtime, 0o700);
  process.env.XDG_RUNTIME_DIR = runtime;
  const driver = await startDriver();
  const browser = await driver.startApp([ws, "--data-dir", tempDir(`${prefix}-data-`)]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed({ timeout: 20000, interval: 100 });
  const sockets = path.join(runtime, "resolve-desk");
  await until(() => fs.existsSync(sockets) && fs.readdirSync(sockets).some((f) => f.endsWith(".sock")), "the app's MCP socket");
  return { ws, driver, browser };
}

/**
 * An MCP client named `name` (the official TypeScript SDK) joined to the open window's folder
 * `ws` through the real `rdesk mcp --workspace`. `desk`: the app `rdesk` may start when no
 * window has the folder (`/bin/false`: the app under test must be the one joined).
 */
export async function mcpAgent(name, ws, desk = "/bin/false") {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: rdeskBinary(),
      args: ["mcp", "--workspace", ws],
      env: { ...process.env, RESOLVE_DESK_BIN: desk },
      stderr: "inherit",
    }),
  );
  return client;
}

/**
 * Resident memory (KiB, VmRSS) of process `pid` (`app`) and the sum over its descendants
 * (`webkit`: WebKit's web and network processes are the app's children). For the benchmarks.
 */
export function residentKiB(pid) {
  const kib = (p) => Number((fs.readFileSync(`/proc/${p}/status`, "utf8").match(/VmRSS:\s+(\d+)/) ?? [0, 0])[1]);
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    try {
      tree.push(...execFileSync("pgrep", ["-P", String(tree[i])], { encoding: "utf8" }).trim().split("\n").filter(Boolean).map(Number));
    } catch {}
  }
  return { app: kib(pid), webkit: tree.slice(1).reduce((a, p) => a + kib(p), 0) };
}

/**
 * For the benchmarks: the WebKit renderer people get. Under WebDriver the app keeps WebKit's
 * default renderer (src-tauri/src/renderer.rs); started by a person on a machine without a GPU
 * render node it turns the DMA-BUF renderer off, so a benchmark sets that here (unless set).
 */
export function rendererAsPeopleGetIt() {
  if (!hasGpuRenderNode() && process.env.WEBKIT_DISABLE_DMABUF_RENDERER === undefined) process.env.WEBKIT_DISABLE_DMABUF_RENDERER = "1";
  return process.env.WEBKIT_DISABLE_DMABUF_RENDERER ?? "(WebKit's default)";
}

/** Whether this machine has a GPU render node (`/dev/dri/renderD*`), as src-tauri/src/renderer.rs checks. */
export function hasGpuRenderNode() {
  return fs.existsSync("/dev/dri") && fs.readdirSync("/dev/dri").some((n) => n.startsWith("renderD"));
}

/** The newest process running `bin` (the app WebDriver started). For the benchmarks. */
export const appPid = (bin) => Number(execFileSync("pgrep", ["-n", "-f", `^${bin}`], { encoding: "utf8" }).trim());

/**
 * Prints a memory benchmark's result: the app's and WebKit's resident memory after the first and
 * the last of `n` rounds (`samples`: two `residentKiB` results), and their ratios.
 */
export function printMemoryGrowth({ bin, what, n, renderer, samples: [first, last] }) {
  const mib = (k) => `${(k / 1024).toFixed(0)} MiB`;
  const load = fs.readFileSync("/proc/loadavg", "utf8").split(" ")[0];
  console.log(`binary: ${bin}; ${what}s: ${n}; WEBKIT_DISABLE_DMABUF_RENDERER: ${renderer}; load average: ${load}\n`);
  console.log(`| process | after ${what} 1 | after ${what} ${n} | ratio |\n|---|---:|---:|---:|`);
  console.log(`| app | ${mib(first.app)} | ${mib(last.app)} | ${(last.app / first.app).toFixed(2)}× |`);
  console.log(`| WebKit's processes | ${mib(first.webkit)} | ${mib(last.webkit)} | ${(last.webkit / first.webkit).toFixed(2)}× |`);
}
