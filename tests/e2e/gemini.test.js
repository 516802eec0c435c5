// Gemini CLI (the npm binary pinned in tests/agents/package.json) in a folder wired by the real
// `rdesk setup gemini`, its model played by a scripted server that speaks Gemini's
// `streamGenerateContent` (tests/agents/mocks/gemini.py, logging every request). Gemini's own
// replace and write_file wait in the desk (`rdesk serve-socket`, the person answering through
// it) and:
//   - a replace discarded with a reason: the file is untouched, the reason is in the model's
//     next request;
//   - a replace applied: the file holds exactly the bytes Gemini's tool writes (CRLF kept, no
//     trailing newline added) and the model reads Gemini's success text;
//   - a write_file sent back with a line comment: no file, the comment is in the next request.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { freePort, rdeskBinary, root, tempDir } from "./launch.js";
import { requests, run, startDesk, startMock } from "./agent-desk.js";

const GEMINI = path.join(root, "tests/agents/node_modules/.bin/gemini");
const DISCARD_REASON = "Keep hello world, the tests match on it";
const COMMENT = "Put the notes in CHANGES.md instead";
const BEFORE = "line one\r\nhello world\r\nline three";

let ws;
let home;
let mock;
let port;
let desk;
let scenario;
let log;

/** Runs Gemini CLI once with the model answering `call` then a text; the tool results it sent. */
async function gemini(call) {
  fs.writeFileSync(scenario, JSON.stringify({ turns: [[{ functionCall: call }], [{ text: "Done." }]] }));
  const seen = requests(log).length;
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: "dumb",
    GEMINI_API_KEY: "fake-key",
    GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${port}`,
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    GEMINI_TELEMETRY_ENABLED: "false",
    GEMINI_CLI_NO_RELAUNCH: "true",
    ...desk.env,
  };
  const args = ["-m", "gemini-2.5-flash", "--approval-mode", "yolo", "--output-format", "json", "-p", "Please make the edit"];
  const agent = run(GEMINI, args, { cwd: ws, env });
  return {
    agent,
    /** What the model was sent back for its call (functionResponse.response), once it ran. */
    result: async () => {
      const done = await agent;
      const later = requests(log).slice(seen).filter((r) => r.kind.startsWith("main"));
      const parts = later.flatMap((r) => r.body.contents ?? []).flatMap((c) => c.parts ?? []);
      const response = parts.map((p) => p.functionResponse?.response).filter(Boolean).pop();
      assert.ok(response, `Gemini sent its tool's result to the model: ${done.out}\n${done.err}`);
      return { ...done, response };
    },
  };
}

before(async () => {
  assert.ok(fs.existsSync(GEMINI), "Gemini CLI is not installed in tests/agents: run scripts/setup.sh");
  ws = fs.realpathSync(tempDir("rd-e2e-gemini-"));
  fs.writeFileSync(path.join(ws, "target.txt"), BEFORE);
  home = tempDir("rd-e2e-gemini-home-");
  fs.mkdirSync(path.join(home, ".gemini"));
  fs.writeFileSync(
    path.join(home, ".gemini/settings.json"),
    JSON.stringify({
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      security: { auth: { selectedType: "gemini-api-key" } },
    }),
  );
  const setup = execFileSync(rdeskBinary(), ["setup", "gemini", "--workspace", ws], { encoding: "utf8" });
  assert.match(setup, /added a BeforeTool hook on \^\(replace\|write_file\)\$/);
  const dir = tempDir("rd-e2e-gemini-llm-");
  scenario = path.join(dir, "scenario.json");
  log = path.join(dir, "requests.jsonl");
  fs.writeFileSync(scenario, JSON.stringify({ turns: [[{ text: "Done." }]] }));
  port = await freePort();
  mock = await startMock("gemini", ["--port", String(port), "--scenario", scenario, "--log", log], port);
  desk = await startDesk(ws);
});

after(() => {
  desk?.stop();
  mock?.kill();
});

const replace = (old_string, new_string) => ({
  name: "replace",
  args: { file_path: path.join(ws, "target.txt"), instruction: "Change the greeting.", old_string, new_string },
});

test("Gemini CLI: a replace the person discards is not written, and the model reads the reason", async () => {
  const run = await gemini(replace("hello world", "hello there"));
  const proposal = await desk.untilWaiting();
  assert.equal(proposal.client, "Gemini CLI", JSON.stringify(proposal));
  assert.equal((await desk.resolve({ action: "discard", reason: DISCARD_REASON })).is_error, false);
  const { code, err, response } = await run.result();
  assert.equal(code, 0, err);
  assert.equal(fs.readFileSync(path.join(ws, "target.txt"), "utf8"), BEFORE, "the file is untouched");
  assert.match(response.error ?? "", /^Tool execution blocked: /);
  assert.ok(response.error.includes(DISCARD_REASON), JSON.stringify(response));
});

test("Gemini CLI: a replace the person applies is written exactly as Gemini writes it, and the model reads its success", async () => {
  const run = await gemini(replace("hello world", "hello desk"));
  await desk.untilWaiting();
  assert.equal((await desk.resolve({ action: "apply", reason: "fine" })).is_error, false);
  const { code, err, response } = await run.result();
  assert.equal(code, 0, err);
  // CRLF kept; no trailing newline added (the file had none).
  assert.equal(fs.readFileSync(path.join(ws, "target.txt"), "utf8"), "line one\r\nhello desk\r\nline three");
  assert.match(response.output ?? "", /^Successfully modified file: /, JSON.stringify(response));
});

test("Gemini CLI: a write_file sent back with a line comment is not written, and the model reads the comment", async () => {
  const run = await gemini({ name: "write_file", args: { file_path: path.join(ws, "notes.md"), content: "release notes\n- hello\n" } });
  const proposal = await desk.untilWaiting();
  assert.equal(proposal.client, "Gemini CLI");
  const decided = await desk.resolve({
    action: "discard",
    reason: "Not yet",
    review: { request_changes: true, comments: [{ path: "notes.md", start_line: 1, side: "new", text: COMMENT }] },
  });
  assert.equal(decided.is_error, false, JSON.stringify(decided));
  const { code, err, response } = await run.result();
  assert.equal(code, 0, err);
  assert.ok(!fs.existsSync(path.join(ws, "notes.md")), "no file was written");
  assert.ok((response.error ?? "").includes(COMMENT), JSON.stringify(response));
});
