// Lean results in the app (a benchmark, not a test): the app's resident memory over many previews
// of the 5,000-replacement rewrite, pushed by a real agent over MCP (the official TypeScript SDK,
// through `rdesk mcp --workspace DIR`) into the window that has DIR open.
//
// Each round: the agent calls ast_edit (`console.log($$$A)` → `logger.debug($$$A)` over 1,000
// files, 5,000 replacements), the window paints the card and loads the preview (file list, first
// diff, its highlighting), then the agent discards it (the app runs with `--policy agent`) and
// the window shows the empty queue again. VmRSS of the app process and of WebKit's processes is
// read after round 1 and after the last round, each time once the window shows the empty queue.
//
//   RESOLVE_DESK_BIN=$CARGO_TARGET_DIR/release/resolve-desk xvfb-run -a --server-args="-screen 0 1400x900x24" node bench-memory-app.js [ROUNDS]
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { appBinary, appPid, printMemoryGrowth, rdeskBinary, rendererAsPeopleGetIt, residentKiB, startDriver, tempDir, textOf } from "./launch.js";
import { manyFiles } from "./bigfiles.js";

const BIN = appBinary("release");
const RENDERER = rendererAsPeopleGetIt();
const ROUNDS = Number(process.argv[2] ?? 100);
const WAIT = { timeout: 120000, interval: 20 };

const { ws } = manyFiles();
const runtime = tempDir("rd-bench-mem-run-");
fs.chmodSync(runtime, 0o700);
process.env.XDG_RUNTIME_DIR = runtime;
const driver = await startDriver({ bin: BIN, logLevel: "error", quiet: true });
let browser;
let client;
const samples = [];
try {
  browser = await driver.startApp([ws, "--policy", "agent", "--data-dir", tempDir("rd-bench-mem-data-")]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
  const pid = appPid(BIN);
  const sockets = path.join(runtime, "resolve-desk");
  await browser.waitUntil(() => fs.existsSync(sockets) && fs.readdirSync(sockets).some((f) => f.endsWith(".sock")), WAIT);
  client = new Client({ name: "bench-memory", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: rdeskBinary(), args: ["mcp", "--workspace", ws], env: { ...process.env, RESOLVE_DESK_BIN: "/bin/false" } }),
  );
  for (let round = 1; round <= ROUNDS; round++) {
    const pushed = await client.callTool({
      name: "ast_edit",
      arguments: { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts" },
    });
    if (pushed.isError) throw new Error(`round ${round}: ${textOf(pushed)}`);
    // The window shows the preview: its card, the file list and the first file's diff.
    await browser.$('[data-testid="diff-line"]').waitForDisplayed(WAIT);
    const discarded = await client.callTool({ name: "resolve", arguments: { action: "discard", reason: `memory bench, round ${round}` } });
    if (discarded.isError) throw new Error(`round ${round}: ${textOf(discarded)}`);
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
    if (round === 1 || round === ROUNDS) samples.push({ round, ...residentKiB(pid) });
  }
} finally {
  await client?.close().catch(() => {});
  await browser?.deleteSession().catch(() => {});
  driver.kill();
}
printMemoryGrowth({ bin: BIN, what: "round", n: ROUNDS, renderer: RENDERER, samples });
