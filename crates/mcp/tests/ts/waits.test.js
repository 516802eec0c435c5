// Resolve Desk's MCP server and the official MCP TypeScript SDK with its default options: a
// request times out after DEFAULT_REQUEST_TIMEOUT_MSEC (60 s) and the time-out is NOT reset by
// progress notifications (`resetTimeoutOnProgress` is off). A person who takes longer than that
// to review must still get their decision to the agent.
//
// Real life: the bound on a `resolve` wait (45 s) < the client's time-out (60 s) < the person's
// review (minutes). To keep the test fast the same order is kept on a smaller scale: the
// bound is 1 s (`rdesk mcp --resolve-wait 1`), the client's time-out 3 s (the SDK's `timeout`
// request option — the only option set, and only to scale it down) and the person decides
// after more than 3 s. Each step waits for a condition (an answer, a proposal on the card),
// never for a fixed time.
//
// The desk is `rdesk serve-socket` (the window's socket without the window); its stdin stands
// in for the person's buttons. Run by `cargo test -p resolve-cli --test mcp_ts` (RDESK_BIN).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

const RDESK = process.env.RDESK_BIN ?? "rdesk";
const SOURCE = "console.log(1);\nconsole.log(2);\n";
const EDITED = "logger.debug(1);\nlogger.debug(2);\n";
const EDIT = { ops: [{ pat: "console.log($A)", out: "logger.debug($A)" }], lang: "ts" };
const NOT_YET = "The person has not decided yet";
// The scaled-down client time-out (60 s in real life).
const CLIENT_TIMEOUT_MS = 3000;

const textOf = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

/** A workspace with one file, and a private runtime dir short enough for a socket path. */
function workspace() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "rd-ts-"));
  const ws = path.join(base, "ws");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "a.ts"), SOURCE);
  const runtime = path.join(base, "run");
  fs.mkdirSync(runtime, { mode: 0o700 });
  return { base, ws, env: { ...process.env, XDG_RUNTIME_DIR: runtime } };
}

/** `rdesk serve-socket --policy human` on `ws`; `person(obj)` sends one line and reads its answer. */
async function standInDesk(ws, env) {
  const proc = spawn(RDESK, ["serve-socket", "--workspace", ws, "--policy", "human"], {
    env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = readline.createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    assert.ok(!done, "the stand-in desk ended");
    return value;
  };
  const socket = await next();
  assert.ok(fs.existsSync(socket), `the desk's socket ${socket}`);
  const person = async (obj) => {
    proc.stdin.write(JSON.stringify(obj) + "\n");
    return JSON.parse(await next());
  };
  const stop = () =>
    new Promise((resolve) => {
      proc.once("exit", resolve);
      proc.kill("SIGTERM");
    });
  return {
    person,
    stop,
    // The agent's proposal on the top action, once it shows the agent waiting (or not).
    proposal: async (waiting) => (await person({ wait_for_proposal: true, waiting })).proposal,
    decide: async (action, reason) => {
      const decided = await person({ tool: "resolve", params: { action, reason } });
      assert.equal(decided.is_error, false, JSON.stringify(decided));
      return decided;
    },
  };
}

/** The SDK's client, default options, joined to the desk through `rdesk mcp` with `wait` s. */
async function agent(name, ws, env, wait) {
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: RDESK,
    args: ["mcp", "--workspace", ws, "--resolve-wait", String(wait)],
    env: { ...env, RESOLVE_DESK_BIN: "/bin/false" }, // join the stand-in, never start a desk
    stderr: "inherit",
  });
  await client.connect(transport);
  return client;
}

test("a decision made after the client's time-out reaches the agent through bounded waits", async () => {
  const { base, ws, env } = workspace();
  const desk = await standInDesk(ws, env);
  const client = await agent("ts-default", ws, env, 1);
  try {
    const pushed = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.notEqual(pushed.isError, true, textOf(pushed));
    const id = pushed.structuredContent.action_id;

    // The agent keeps calling `resolve`; each call ends before the client's time-out.
    const started = Date.now();
    const answers = [];
    // The person reads for longer than the client's time-out: they decide only once the agent
    // has had more "not decided yet" answers (each at least the 1 s bound) than the time-out
    // has seconds.
    const needed = Math.ceil(CLIENT_TIMEOUT_MS / 1000) + 1;
    let enough;
    const enoughAnswers = new Promise((resolve) => (enough = resolve));
    const agentLoop = (async () => {
      for (;;) {
        const t = Date.now();
        const result = await client.callTool(
          { name: "resolve", arguments: { action: "apply", reason: "tests pass" } },
          undefined,
          { timeout: CLIENT_TIMEOUT_MS },
        );
        answers.push({ took: Date.now() - t, result });
        if (answers.length === needed) enough();
        if (!textOf(result).startsWith(NOT_YET)) return result;
      }
    })();
    await enoughAnswers;
    // The agent's next call is waiting (a call's answer comes after its proposal is marked as
    // no longer waiting, so this is the next one).
    await desk.proposal(true);
    assert.ok(Date.now() - started > CLIENT_TIMEOUT_MS, "the person decides after the client's time-out");
    assert.equal(fs.readFileSync(path.join(ws, "a.ts"), "utf8"), SOURCE, "nothing written while the person reads");
    await desk.decide("apply", "read every line");

    const result = await agentLoop;
    assert.notEqual(result.isError, true, textOf(result));
    assert.match(textOf(result), /Decided by the person: applied\. Reason: read every line$/);
    assert.equal(result.structuredContent.action_id, id);
    assert.equal(result.structuredContent.decided_by, "person");
    for (const { took, result: r } of answers.slice(0, -1)) {
      assert.ok(took < CLIENT_TIMEOUT_MS, `each wait ended (${took} ms) before the client's time-out`);
      assert.notEqual(r.isError, true, "not deciding yet is a normal result, not an error");
      assert.match(textOf(r), new RegExp(`^${NOT_YET} in 1 s on ${id} `));
    }
    assert.ok(answers.length > needed, `${answers.length} calls`);
    assert.equal(fs.readFileSync(path.join(ws, "a.ts"), "utf8"), EDITED);
  } finally {
    await client.close();
    await desk.stop();
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test("with a wait longer than the client's time-out, the decision still reaches the agent's next call", async () => {
  const { base, ws, env } = workspace();
  const desk = await standInDesk(ws, env);
  // Misconfigured on purpose: the bound (30 s) is above the client's time-out.
  const client = await agent("ts-impatient", ws, env, 30);
  try {
    await client.callTool({ name: "ast_edit", arguments: EDIT });
    await assert.rejects(
      client.callTool(
        { name: "resolve", arguments: { action: "apply", reason: "go" } },
        undefined,
        { timeout: CLIENT_TIMEOUT_MS },
      ),
      (e) => e instanceof McpError && e.code === ErrorCode.RequestTimeout,
      "the SDK gives up on the call (and sends notifications/cancelled)",
    );
    // The desk saw the cancel: the proposal stays, nobody waits on it.
    const proposal = await desk.proposal(false);
    assert.equal(proposal.client, "ts-impatient");
    await desk.decide("discard", "not this way");
    // The model moved on to another tool: the decision comes first in that call's result.
    const nothing = { ops: [{ pat: "no_such_call($A)", out: "x" }], lang: "ts" };
    const next = textOf(await client.callTool({ name: "ast_edit", arguments: nothing }));
    assert.match(next, /^Decisions made on your earlier previews while you were not waiting:/);
    assert.match(next, /Decided by the person: discarded\. Reason: not this way/);
    assert.match(next, /\nNo replacements made$/);
    assert.equal(fs.readFileSync(path.join(ws, "a.ts"), "utf8"), SOURCE);
  } finally {
    await client.close();
    await desk.stop();
    fs.rmSync(base, { recursive: true, force: true });
  }
});
