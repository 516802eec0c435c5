// pi (the npm binary pinned in tests/agents/package.json) in a folder wired by the real
// `rdesk setup pi`, its model played by fakellm (OpenAI Chat Completions, scripted by rules;
// tests/agents/requirements.txt). pi's own edit and write tools, run by the extension, wait in
// the desk (`rdesk serve-socket`, the person answering through it) and:
//   - an edit discarded with a reason: the file is untouched and the reason reaches the model;
//   - an edit applied: the file holds exactly the bytes pi's own edit computes (a BOM and CRLF
//     file, kept as pi keeps them) and pi's tool reports success;
//   - a write sent back with Request changes and a line comment: no file, the comment reaches
//     the model.
// What reached the model is checked through the rules: fakellm answers "SAW-…" only when the
// tool result it is sent contains the person's words (or pi's success text), and pi prints
// that answer.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { freePort, rdeskBinary, root, tempDir } from "./launch.js";
import { run, startDesk, startFakellm } from "./agent-desk.js";

const PI = path.join(root, "tests/agents/node_modules/.bin/pi");
const DISCARD_REASON = "Keep the greeting as it is, it is part of the API";
const COMMENT = "Call it CHANGES.md and start with a title";
const BEFORE = "\uFEFFexport function greet(name) {\r\n  return `hello world, ${name}`;\r\n}\r\n";

let ws;
let home;
let llm;
let port;
let desk;

function rules() {
  const call = (name, args) => ({ tool_calls: [{ name, arguments: args }] });
  return {
    version: 1,
    defaults: { fallback: "deterministic_echo" },
    rules: [
      { name: "discard-seen", when: { tool_result_contains: DISCARD_REASON }, respond: { content: "SAW-DISCARD-REASON" } },
      { name: "comment-seen", when: { tool_result_contains: COMMENT }, respond: { content: "SAW-COMMENT" } },
      { name: "apply-seen", when: { messages_contain: "TASK-APPLY", tool_result_contains: "Successfully replaced 1 block(s)" }, respond: { content: "SAW-APPLY-SUCCESS" } },
      { name: "discard-edit", when: { messages_contain: "TASK-DISCARD" }, respond: call("edit", { path: "src/greet.js", edits: [{ oldText: "hello world", newText: "hi there" }] }) },
      { name: "apply-edit", when: { messages_contain: "TASK-APPLY" }, respond: call("edit", { path: "src/greet.js", edits: [{ oldText: "return `hello world, ${name}`;", newText: "return `hello, ${name}!`;" }] }) },
      { name: "write", when: { messages_contain: "TASK-WRITE" }, respond: call("write", { path: "notes.md", content: "release notes\n- greet says hello\n" }) },
    ],
  };
}

function pi(prompt) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: "dumb",
    PI_CODING_AGENT_DIR: path.join(home, "agent"),
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    PI_SKIP_VERSION_CHECK: "1",
    ...desk.env,
  };
  const args = ["--provider", "mock", "--model", "mock-model", "--no-session", "--no-skills", "--no-prompt-templates", "--no-context-files", "--no-themes", "-p", prompt];
  return run(PI, args, { cwd: ws, env });
}

before(async () => {
  assert.ok(fs.existsSync(PI), "pi is not installed in tests/agents: run scripts/setup.sh");
  ws = fs.realpathSync(tempDir("rd-e2e-pi-"));
  fs.mkdirSync(path.join(ws, "src"));
  fs.writeFileSync(path.join(ws, "src/greet.js"), BEFORE);
  home = tempDir("rd-e2e-pi-home-");
  port = await freePort();
  fs.mkdirSync(path.join(home, "agent"));
  fs.writeFileSync(
    path.join(home, "agent/models.json"),
    JSON.stringify({
      providers: {
        mock: {
          baseUrl: `http://127.0.0.1:${port}/v1`,
          api: "openai-completions",
          apiKey: "fake-key",
          compat: { supportsDeveloperRole: false, supportsReasoningEffort: false, supportsUsageInStreaming: false },
          models: [{ id: "mock-model", reasoning: false, contextWindow: 128000, maxTokens: 4096 }],
        },
      },
    }),
  );
  const setup = execFileSync(rdeskBinary(), ["setup", "pi", "--workspace", ws], { encoding: "utf8" });
  assert.match(setup, /added Resolve Desk's pi extension/);
  assert.ok(fs.existsSync(path.join(ws, ".pi/extensions/resolve-desk.ts")), setup);
  llm = await startFakellm(rules(), port);
  desk = await startDesk(ws);
});

after(() => {
  desk?.stop();
  llm?.kill();
});

test("pi: an edit the person discards is not written, and pi's model reads the reason", async () => {
  const agent = pi("TASK-DISCARD: say hi instead");
  const proposal = await desk.untilWaiting();
  assert.equal(proposal.client, "pi", JSON.stringify(proposal));
  const decided = await desk.resolve({ action: "discard", reason: DISCARD_REASON });
  assert.equal(decided.is_error, false, JSON.stringify(decided));
  const { code, out, err } = await agent;
  assert.equal(code, 0, err);
  assert.equal(fs.readFileSync(path.join(ws, "src/greet.js"), "utf8"), BEFORE, "the file is untouched");
  assert.match(out, /SAW-DISCARD-REASON/, `the model was sent the reason: ${out}\n${err}`);
});

test("pi: an edit the person applies is written exactly as pi computes it, and pi reports success", async () => {
  const agent = pi("TASK-APPLY: greet with an exclamation mark");
  await desk.untilWaiting();
  const decided = await desk.resolve({ action: "apply", reason: "fine" });
  assert.equal(decided.is_error, false, JSON.stringify(decided));
  const { code, out, err } = await agent;
  assert.equal(code, 0, err);
  // pi keeps the BOM and the file's CRLF endings; the desk wrote what pi's own edit computed.
  const want = "\uFEFFexport function greet(name) {\r\n  return `hello, ${name}!`;\r\n}\r\n";
  assert.equal(fs.readFileSync(path.join(ws, "src/greet.js"), "utf8"), want);
  assert.match(out, /SAW-APPLY-SUCCESS/, `pi's tool reported success to the model: ${out}\n${err}`);
  const history = await desk.resolve({ action: "discard", reason: "anything left?" });
  assert.equal(history.is_error, true, "nothing is left pending after the apply");
});

test("pi: a write sent back with a line comment is not written, and the model reads the comment", async () => {
  const agent = pi("TASK-WRITE: write release notes");
  const proposal = await desk.untilWaiting();
  assert.equal(proposal.client, "pi");
  const decided = await desk.resolve({
    action: "discard",
    reason: "Not yet",
    review: { request_changes: true, comments: [{ path: "notes.md", start_line: 1, side: "new", text: COMMENT }] },
  });
  assert.equal(decided.is_error, false, JSON.stringify(decided));
  const { code, out, err } = await agent;
  assert.equal(code, 0, err);
  assert.ok(!fs.existsSync(path.join(ws, "notes.md")), "no file was written");
  assert.match(out, /SAW-COMMENT/, `the model was sent the comment: ${out}\n${err}`);
});
