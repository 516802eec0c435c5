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
import fs from "node:fs";
import path from "node:path";
import { appBinary, median, startDriver, tempDir, watchForCard } from "./launch.js";
import { startFakeLlm, textReply, toolCallReply } from "./fakeLlm.js";

const BIN = appBinary();
const RUNS = Number(process.argv[2] ?? 10);
const WAIT = { timeout: 60000, interval: 20 };

const llm = await startFakeLlm();
const ws = tempDir("rd-bench-agent-ws-", "tests/fixtures/shop");
const data = tempDir("rd-bench-agent-data-");
const config = tempDir("rd-bench-agent-config-");
fs.mkdirSync(path.join(config, "resolve-desk"));
fs.writeFileSync(
  path.join(config, "resolve-desk/agent.json"),
  JSON.stringify({ base_url: llm.baseUrl, model: "fake-model", api_key_env: "RD_BENCH_UNSET_KEY" }),
);
const driver = await startDriver({ bin: BIN, logLevel: "error", quiet: true });
const times = [];
let browser;
try {
  browser = await driver.startApp([ws, "--data-dir", data, "--config-dir", config]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
  if (!(await browser.$('[data-testid="conversation-panel"]').isExisting())) await browser.$('[data-testid="agent-toggle"]').click();
  for (let i = 0; i < RUNS; i++) {
    llm.push(toolCallReply(`edit_${i}`, "ast_edit", { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" }));
    llm.push(toolCallReply(`resolve_${i}`, "resolve", { action: "discard", reason: "benchmark run" }));
    llm.push(textReply("ok"));
    await watchForCard(browser);
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
