// Agent measurement (a benchmark, not a test): the time from the fake model's tool call (the
// moment its last SSE chunk is written) to the preview card being painted in the app.
//
//   RESOLVE_DESK_BIN=$CARGO_TARGET_DIR/debug/resolve-desk xvfb-run -a node bench-agent.js [RUNS]
//
// One app (policy `human`: after each measurement the person discards the preview in the UI,
// which answers the model's waiting resolve, so the next run starts from an empty stack), one
// fake OpenAI-compatible server (./fakeLlm.js). In the page a
// MutationObserver notes the first frame after a queue card appears (Date.now(), the same
// clock as the server's). Prints the median and every run.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { remote } from "webdriverio";
import { startFakeLlm, textReply, toolCallReply } from "./fakeLlm.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const BIN = process.env.RESOLVE_DESK_BIN ?? path.join(root, "target/debug/resolve-desk");
const RUNS = Number(process.argv[2] ?? 10);
const WAIT = { timeout: 60000, interval: 20 };

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function portOpen(p) {
  for (;;) {
    const ok = await new Promise((r) => {
      const s = net.connect(p, "127.0.0.1", () => (s.end(), r(true)));
      s.on("error", () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const llm = await startFakeLlm();
const ws = fs.mkdtempSync(path.join(os.tmpdir(), "rd-bench-agent-ws-"));
fs.cpSync(path.join(root, "tests/fixtures/shop"), ws, { recursive: true });
const data = fs.mkdtempSync(path.join(os.tmpdir(), "rd-bench-agent-data-"));
const config = fs.mkdtempSync(path.join(os.tmpdir(), "rd-bench-agent-config-"));
fs.mkdirSync(path.join(config, "resolve-desk"));
fs.writeFileSync(
  path.join(config, "resolve-desk/agent.json"),
  JSON.stringify({ base_url: llm.baseUrl, model: "fake-model", api_key_env: "RD_BENCH_UNSET_KEY" }),
);
const port = await freePort();
const driver = spawn("tauri-driver", ["--port", String(port), "--native-port", String(await freePort())], { stdio: "ignore" });
await portOpen(port);
const times = [];
let browser;
try {
  browser = await remote({
    hostname: "127.0.0.1",
    port,
    logLevel: "error",
    capabilities: { "tauri:options": { application: BIN, args: [ws, "--data-dir", data, "--config-dir", config] } },
  });
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
  if (!(await browser.$('[data-testid="conversation-panel"]').isExisting())) await browser.$('[data-testid="agent-toggle"]').click();
  for (let i = 0; i < RUNS; i++) {
    llm.push(toolCallReply(`edit_${i}`, "ast_edit", { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" }));
    llm.push(toolCallReply(`resolve_${i}`, "resolve", { action: "discard", reason: "benchmark run" }));
    llm.push(textReply("ok"));
    await browser.execute(() => {
      window.__cardAt = null;
      const obs = new MutationObserver(() => {
        if (document.querySelector('[data-testid="queue-card"]')) {
          obs.disconnect();
          requestAnimationFrame(() => (window.__cardAt = Date.now()));
        }
      });
      obs.observe(document.body, { childList: true, subtree: true });
    });
    const sentBefore = llm.toolCallSentAt.length;
    await browser.$('[data-testid="prompt-input"]').setValue(`run ${i}`);
    await browser.$('[data-testid="send-button"]').click();
    await browser.waitUntil(() => browser.execute(() => window.__cardAt !== null), { ...WAIT, timeoutMsg: "the preview card" });
    const cardAt = await browser.execute(() => window.__cardAt);
    times.push(cardAt - llm.toolCallSentAt[sentBefore]);
    // The person discards the preview; that answers the model's resolve and the turn ends.
    await browser.$('[data-testid="proposal-box"]').waitForDisplayed(WAIT);
    await browser.$('[data-testid="reason-input"]').setValue("benchmark run");
    await browser.$('[data-testid="discard-button"]').click();
    await browser.$('[data-testid="send-button"]').waitForExist(WAIT);
    await browser.waitUntil(async () => (await browser.$$('[data-testid="queue-card"]')).length === 0, WAIT);
  }
} finally {
  await browser?.deleteSession().catch(() => {});
  driver.kill();
  await llm.close();
}
console.log(`binary: ${BIN}\nruns: ${RUNS}; all (ms): ${times.join(", ")}\n`);
console.log("| measurement | median |\n|---|---:|");
console.log(`| model's ast_edit tool call (last SSE chunk written) → preview card painted in the app | ${median(times)} ms |`);
