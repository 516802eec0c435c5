// Lean results through the window's own agent (a benchmark, not a test): the app's resident memory
// over many turns of its in-app agent, each previewing the 5,000-replacement rewrite and discarding
// it. The model is the fake OpenAI-compatible provider of the suite (real HTTP, real SSE): per turn
// it calls ast_edit (`console.log($$$A)` → `logger.debug($$$A)` over 1,000 files), then resolve
// (discard; the app runs with `--policy agent`), then answers. The person types each prompt in the
// conversation panel and waits for the turn to end. VmRSS of the app process and of WebKit's
// processes is read after turn 1 and after the last turn, each once the turn has ended and the
// queue is empty.
//
//   RESOLVE_DESK_BIN=$CARGO_TARGET_DIR/release/resolve-desk xvfb-run -a --server-args="-screen 0 1400x900x24" node bench-memory-agent.js [TURNS]
import fs from "node:fs";
import path from "node:path";
import { appBinary, appPid, printMemoryGrowth, rendererAsPeopleGetIt, residentKiB, startDriver, tempDir } from "./launch.js";
import { manyFiles } from "./bigfiles.js";
import { startFakeLlm, textReply, toolCallReply } from "./fakeLlm.js";

const BIN = appBinary("release");
const RENDERER = rendererAsPeopleGetIt();
const TURNS = Number(process.argv[2] ?? 100);
const WAIT = { timeout: 120000, interval: 20 };

const { ws } = manyFiles();
const config = tempDir("rd-bench-agent-config-");
const llm = await startFakeLlm();
fs.mkdirSync(path.join(config, "resolve-desk"));
fs.writeFileSync(
  path.join(config, "resolve-desk/agent.json"),
  JSON.stringify({ base_url: llm.baseUrl, model: "fake-model", api_key_env: "RD_BENCH_UNSET_KEY" }),
);
const driver = await startDriver({ bin: BIN, logLevel: "error", quiet: true });
let browser;
const samples = [];
try {
  browser = await driver.startApp([ws, "--policy", "agent", "--data-dir", tempDir("rd-bench-agent-data-"), "--config-dir", config]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
  if (!(await browser.$('[data-testid="conversation-panel"]').isExisting())) await browser.$('[data-testid="agent-toggle"]').click();
  await browser.$('[data-testid="conversation-panel"]').waitForDisplayed(WAIT);
  const pid = appPid(BIN);
  for (let turn = 1; turn <= TURNS; turn++) {
    llm.push(toolCallReply(`call_edit_${turn}`, "ast_edit", { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts" }));
    llm.push(toolCallReply(`call_resolve_${turn}`, "resolve", { action: "discard", reason: `memory bench, turn ${turn}` }));
    llm.push(textReply(`Turn ${turn}: previewed and discarded.`));
    const answered = llm.requests.length + 3;
    await browser.$('[data-testid="prompt-input"]').setValue(`Preview the logger rewrite again (turn ${turn})`);
    await browser.$('[data-testid="send-button"]').click();
    await llm.waitForRequests(answered);
    // The turn has ended (the Send button is back) and the discarded preview has left the queue.
    await browser.$('[data-testid="send-button"]').waitForDisplayed(WAIT);
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
    if (turn === 1 || turn === TURNS) samples.push({ turn, ...residentKiB(pid) });
  }
  const replies = await browser.$$('[data-testid="chat-assistant"]');
  if (replies.length < TURNS) throw new Error(`expected at least ${TURNS} answers in the conversation, found ${replies.length}`);
} finally {
  await browser?.deleteSession().catch(() => {});
  driver.kill();
  await llm.close();
}
printMemoryGrowth({ bin: BIN, what: "turn", n: TURNS, renderer: RENDERER, samples });
