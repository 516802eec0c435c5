// Codex CLI (the npm binary pinned in tests/agents/package.json) in a folder wired by the real
// `rdesk setup codex` (the hook in .codex/hooks.json, Codex's trust of it in CODEX_HOME's
// config.toml), its model played by a scripted server that speaks the OpenAI Responses API
// with streaming (tests/agents/mocks/responses.py, logging every request). Codex's own
// apply_patch waits in the desk (`rdesk serve-socket`, the person answering through it) and:
//   - a patch discarded with a reason: the file is untouched, the reason is in the model's next
//     request;
//   - a patch applied: the file holds exactly the bytes Codex's apply_patch writes (a CRLF file
//     patched with LF lines keeps CRLF) and the model reads Codex's success;
//   - an added file sent back with a line comment: no file, the comment is in the next request.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { freePort, rdeskBinary, root, tempDir } from "./launch.js";
import { requests, run, startDesk, startMock } from "./agent-desk.js";

const CODEX = path.join(root, "tests/agents/node_modules/.bin/codex");
const DISCARD_REASON = "Keep line two, the parser expects it";
const COMMENT = "Name it CHANGES.md, not notes";
const BEFORE = "line one\r\nline two\r\nline three\r\n";

let ws;
let codexHome;
let mock;
let port;
let desk;
let scenario;
let log;

/** Runs `codex exec` once with the model calling apply_patch with `patch`, then a text. */
async function codex(patch) {
  fs.writeFileSync(
    scenario,
    JSON.stringify({
      turns: [
        [{ type: "custom_tool_call", name: "apply_patch", call_id: "call_patch_1", input: patch }],
        [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Done." }] }],
      ],
    }),
  );
  const seen = requests(log).length;
  const env = {
    PATH: process.env.PATH,
    HOME: tempDir("rd-e2e-codex-home-"),
    SHELL: "/bin/sh",
    CODEX_HOME: codexHome,
    TMPDIR: tempDir("rd-e2e-codex-tmp-"),
    MOCK_API_KEY: "fake-key",
    ...desk.env,
  };
  const agent = run(CODEX, ["exec", "--skip-git-repo-check", "Please make the edit"], { cwd: ws, env });
  return {
    /** What the model was sent back for its patch, once Codex ended. */
    result: async () => {
      const done = await agent;
      const items = requests(log)
        .slice(seen)
        .filter((r) => r.method === "POST")
        .flatMap((r) => r.body?.input ?? []);
      const output = items.filter((i) => i.type === "custom_tool_call_output" && i.call_id === "call_patch_1").pop();
      assert.ok(output, `Codex sent the patch's result to the model: ${done.out}\n${done.err}`);
      return { ...done, output: typeof output.output === "string" ? output.output : JSON.stringify(output.output) };
    },
  };
}

before(async () => {
  assert.ok(fs.existsSync(CODEX), "Codex CLI is not installed in tests/agents: run scripts/setup.sh");
  ws = fs.realpathSync(tempDir("rd-e2e-codex-"));
  fs.writeFileSync(path.join(ws, "hello.txt"), BEFORE);
  // Codex refuses to make its helper binaries (the sandbox's apply_patch) when CODEX_HOME is
  // below the temporary folder, and then fails to write any patch: it runs with a TMPDIR of
  // its own (see `codex`).
  codexHome = tempDir("rd-e2e-codex-config-");
  port = await freePort();
  fs.writeFileSync(
    path.join(codexHome, "config.toml"),
    [
      '# the test\'s own settings; `rdesk setup codex` adds to them',
      'model = "gpt-5.5"',
      'model_provider = "mock"',
      'approval_policy = "never"',
      'sandbox_mode = "workspace-write"',
      "check_for_update_on_startup = false",
      "[model_providers.mock]",
      'name = "mock"',
      `base_url = "http://127.0.0.1:${port}/v1"`,
      'wire_api = "responses"',
      'env_key = "MOCK_API_KEY"',
      "request_max_retries = 0",
      "stream_max_retries = 0",
      "[analytics]",
      "enabled = false",
      "[feedback]",
      "enabled = false",
      "",
    ].join("\n"),
  );
  const setup = execFileSync(rdeskBinary(), ["setup", "codex", "--workspace", ws], { encoding: "utf8", env: { ...process.env, CODEX_HOME: codexHome } });
  assert.match(setup, /added a PreToolUse hook/);
  assert.match(setup, /trusted Resolve Desk's hook/);
  const config = fs.readFileSync(path.join(codexHome, "config.toml"), "utf8");
  assert.match(config, /# the test's own settings/, "the user's config.toml is kept");
  const dir = tempDir("rd-e2e-codex-llm-");
  scenario = path.join(dir, "scenario.json");
  log = path.join(dir, "requests.jsonl");
  fs.writeFileSync(scenario, JSON.stringify({ turns: [[]] }));
  mock = await startMock("responses", [String(port), scenario, log], port);
  desk = await startDesk(ws);
});

after(() => {
  desk?.stop();
  mock?.kill();
});

const update = (from, to) => `*** Begin Patch\n*** Update File: hello.txt\n@@\n line one\n-${from}\n+${to}\n line three\n*** End Patch\n`;

test("Codex CLI: a patch the person discards is not applied, and the model reads the reason", async () => {
  const run = await codex(update("line two", "line 2"));
  const proposal = await desk.untilWaiting();
  assert.equal(proposal.client, "Codex CLI", JSON.stringify(proposal));
  assert.equal((await desk.resolve({ action: "discard", reason: DISCARD_REASON })).is_error, false);
  const { code, err, output } = await run.result();
  assert.equal(code, 0, err);
  assert.equal(fs.readFileSync(path.join(ws, "hello.txt"), "utf8"), BEFORE, "the file is untouched");
  assert.match(output, /Command blocked by PreToolUse hook: /);
  assert.ok(output.includes(DISCARD_REASON), output);
});

test("Codex CLI: a patch the person applies is written exactly as Codex writes it, and the model reads its success", async () => {
  const run = await codex(update("line two", "line TWO"));
  await desk.untilWaiting();
  assert.equal((await desk.resolve({ action: "apply", reason: "fine" })).is_error, false);
  const { code, err, output } = await run.result();
  assert.equal(code, 0, err);
  // Codex gives added lines the file's first line ending.
  assert.equal(fs.readFileSync(path.join(ws, "hello.txt"), "utf8"), "line one\r\nline TWO\r\nline three\r\n", output + err);
  assert.match(output, /Success\. Updated the following files:\nM hello\.txt/, output);
});

test("Codex CLI: an added file sent back with a line comment is not written, and the model reads the comment", async () => {
  const run = await codex("*** Begin Patch\n*** Add File: notes.md\n+release notes\n+- line TWO\n*** End Patch\n");
  const proposal = await desk.untilWaiting();
  assert.equal(proposal.client, "Codex CLI");
  const decided = await desk.resolve({
    action: "discard",
    reason: "Not yet",
    review: { request_changes: true, comments: [{ path: "notes.md", start_line: 1, side: "new", text: COMMENT }] },
  });
  assert.equal(decided.is_error, false, JSON.stringify(decided));
  const { code, err, output } = await run.result();
  assert.equal(code, 0, err);
  assert.ok(!fs.existsSync(path.join(ws, "notes.md")), "no file was written");
  assert.ok(output.includes(COMMENT), output);
});
