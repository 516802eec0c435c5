// MCP measurement (a benchmark, not a test): the time from an MCP client sending `tools/call`
// of ast_edit (the official TypeScript SDK, through the real `rdesk mcp --workspace DIR`
// bridge) to the preview card being painted in the window that has DIR open.
//
//   RESOLVE_DESK_BIN=$CARGO_TARGET_DIR/debug/resolve-desk xvfb-run -a node bench-mcp.js [RUNS]
//
// One app (policy `human`), one client. After each measurement the person discards the
// preview in the window, so the next run starts from an empty stack. In the page a
// MutationObserver notes the first frame after a queue card appears (Date.now(), the same
// clock as the client's). Prints the median and every run.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { appBinary, median, rdeskBinary, startDriver, tempDir, watchForCard } from "./launch.js";

const BIN = appBinary();
const RUNS = Number(process.argv[2] ?? 15);
const WAIT = { timeout: 60000, interval: 20 };

const ws = tempDir("rd-bench-mcp-ws-", "tests/fixtures/shop");
const runtime = tempDir("rd-bench-mcp-run-");
fs.chmodSync(runtime, 0o700);
process.env.XDG_RUNTIME_DIR = runtime;
const driver = await startDriver({ bin: BIN, logLevel: "error", quiet: true });
const times = [];
let browser;
let client;
try {
  browser = await driver.startApp([ws, "--data-dir", tempDir("rd-bench-mcp-data-")]);
  await browser.setWindowSize(1400, 900).catch(() => {});
  await browser.$('[data-testid="queue-empty"]').waitForDisplayed(WAIT);
  const sockets = path.join(runtime, "resolve-desk");
  await browser.waitUntil(() => fs.existsSync(sockets) && fs.readdirSync(sockets).some((f) => f.endsWith(".sock")), WAIT);
  client = new Client({ name: "bench-agent", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: rdeskBinary(), args: ["mcp", "--workspace", ws], env: { ...process.env, RESOLVE_DESK_BIN: "/bin/false" } }),
  );
  for (let i = 0; i < RUNS; i++) {
    await watchForCard(browser);
    const sentAt = Date.now();
    const result = await client.callTool({
      name: "ast_edit",
      arguments: { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" },
    });
    if (result.isError) throw new Error(`run ${i}: ${JSON.stringify(result.content)}`);
    await browser.waitUntil(() => browser.execute(() => window.__cardAt !== null), { ...WAIT, timeoutMsg: "the preview card" });
    times.push((await browser.execute(() => window.__cardAt)) - sentAt);
    await browser.$('[data-testid="reason-input"]').setValue("benchmark run");
    await browser.$('[data-testid="discard-button"]').click();
    await browser.waitUntil(async () => (await browser.$$('[data-testid="queue-card"]')).length === 0, WAIT);
  }
} finally {
  await client?.close().catch(() => {});
  await browser?.deleteSession().catch(() => {});
  driver.kill();
}
console.log(`binary: ${BIN}\nruns: ${RUNS}; all (ms): ${times.join(", ")}\n`);
console.log("| measurement | median |\n|---|---:|");
console.log(`| MCP tools/call of ast_edit (client sends) → preview card painted in the window | ${median(times)} ms |`);
