// opencode (the npm binary pinned in tests/agents/package.json) in a folder wired by the real
// `rdesk setup opencode`, its model played by fakellm (OpenAI Chat Completions through
// opencode's openai-compatible provider, scripted by rules; tests/agents/requirements.txt).
// opencode's own edit and write wait in the desk (`rdesk serve-socket`, the person answering
// through it) and:
//   - an edit discarded with a reason: the file is untouched and the reason reaches the model;
//   - an edit applied: the file holds exactly the bytes opencode's edit writes (the file's CRLF
//     given to the new lines) and opencode's tool reports success;
//   - a write sent back with Request changes and a line comment: no file, the comment reaches
//     the model.
// What reached the model is checked through the rules: fakellm answers "SAW-…" only when the
// tool result it is sent contains the person's words (or opencode's success text).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { freePort, rdeskBinary, root, tempDir } from "./launch.js";
import { run, startDesk, startFakellm } from "./agent-desk.js";

// opencode-ai is only a launcher of this package, its binary (tests/agents/package.json).
const OPENCODE = path.join(root, "tests/agents/node_modules/opencode-linux-x64/bin/opencode");
const DISCARD_REASON = "Keep the old name, scripts call it";
const COMMENT = "Call it CHANGES.md and start with a title";
const BEFORE = "const name = \"desk\";\r\nconsole.log(name);\r\n";

let ws;
let home;
let llm;
let port;
let desk;

function rules() {
  const call = (name, args) => ({ tool_calls: [{ name, arguments: args }] });
  const file = (p) => path.join(ws, p);
  return {
    version: 1,
    defaults: { fallback: "deterministic_echo" },
    rules: [
      { name: "discard-seen", when: { tool_result_contains: DISCARD_REASON }, respond: { content: "SAW-DISCARD-REASON" } },
      { name: "comment-seen", when: { tool_result_contains: COMMENT }, respond: { content: "SAW-COMMENT" } },
      { name: "apply-seen", when: { messages_contain: "TASK-APPLY", tool_result_contains: "Edit applied successfully" }, respond: { content: "SAW-APPLY-SUCCESS" } },
      { name: "other-result", when: { tool_result_contains: "" }, respond: { content: "SAW-SOMETHING-ELSE" } },
      { name: "discard-edit", when: { tools_include: "edit", messages_contain: "TASK-DISCARD" }, respond: call("edit", { filePath: file("src/name.js"), oldString: 'const name = "desk";', newString: 'const title = "desk";' }) },
      { name: "apply-edit", when: { tools_include: "edit", messages_contain: "TASK-APPLY" }, respond: call("edit", { filePath: file("src/name.js"), oldString: "console.log(name);", newString: "console.log(name);\nconsole.log(name.length);" }) },
      { name: "write", when: { tools_include: "write", messages_contain: "TASK-WRITE" }, respond: call("write", { filePath: file("notes.md"), content: "release notes\n- the name is logged\n" }) },
      { name: "title", when: {}, respond: { content: "A title" } },
    ],
  };
}

function opencode(prompt) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local/state"),
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    ...desk.env,
  };
  // opencode keeps its sessions in XDG_DATA_HOME; the desk's journal has its own (desk.env's).
  env.XDG_DATA_HOME = desk.env.XDG_DATA_HOME;
  return run(OPENCODE, ["run", "--format", "json", prompt], { cwd: ws, env });
}

before(async () => {
  assert.ok(fs.existsSync(OPENCODE), "opencode is not installed in tests/agents: run scripts/setup.sh");
  ws = fs.realpathSync(tempDir("rd-e2e-opencode-"));
  fs.mkdirSync(path.join(ws, "src"));
  fs.writeFileSync(path.join(ws, "src/name.js"), BEFORE);
  home = tempDir("rd-e2e-opencode-home-");
  port = await freePort();
  fs.writeFileSync(
    path.join(ws, "opencode.json"),
    JSON.stringify({
      $schema: "https://opencode.ai/config.json",
      autoupdate: false,
      share: "disabled",
      model: "mock/mock-model",
      small_model: "mock/mock-model",
      provider: {
        mock: {
          npm: "@ai-sdk/openai-compatible",
          name: "Mock",
          options: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "fake-key" },
          models: { "mock-model": { name: "Mock model", tool_call: true, limit: { context: 128000, output: 4096 } } },
        },
      },
    }),
  );
  const setup = execFileSync(rdeskBinary(), ["setup", "opencode", "--workspace", ws], { encoding: "utf8" });
  assert.match(setup, /added Resolve Desk's opencode plugin/);
  llm = await startFakellm(rules(), port);
  desk = await startDesk(ws);
});

after(() => {
  desk?.stop();
  llm?.kill();
});

test("opencode: an edit the person discards is not written, and the model reads the reason", async () => {
  const agent = opencode("TASK-DISCARD: rename the constant");
  const proposal = await desk.untilWaiting();
  assert.equal(proposal.client, "opencode", JSON.stringify(proposal));
  assert.equal((await desk.resolve({ action: "discard", reason: DISCARD_REASON })).is_error, false);
  const { code, out, err } = await agent;
  assert.equal(code, 0, err);
  assert.equal(fs.readFileSync(path.join(ws, "src/name.js"), "utf8"), BEFORE, "the file is untouched");
  assert.match(out, /SAW-DISCARD-REASON/, `the model was sent the reason: ${out}\n${err}`);
});

test("opencode: an edit the person applies is written exactly as opencode writes it, and opencode reports success", async () => {
  const agent = opencode("TASK-APPLY: log the length too");
  await desk.untilWaiting();
  assert.equal((await desk.resolve({ action: "apply", reason: "fine" })).is_error, false);
  const { code, out, err } = await agent;
  assert.equal(code, 0, err);
  // opencode gives the new lines the file's CRLF.
  assert.equal(fs.readFileSync(path.join(ws, "src/name.js"), "utf8"), 'const name = "desk";\r\nconsole.log(name);\r\nconsole.log(name.length);\r\n');
  assert.match(out, /SAW-APPLY-SUCCESS/, `opencode's tool reported success to the model: ${out}\n${err}`);
});

test("opencode: a write sent back with a line comment is not written, and the model reads the comment", async () => {
  const agent = opencode("TASK-WRITE: write release notes");
  const proposal = await desk.untilWaiting();
  assert.equal(proposal.client, "opencode");
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
