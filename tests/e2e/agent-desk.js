// The desk an outside agent's hook joins, for the agent tests that decide without the window:
// `rdesk serve-socket --policy human` on the workspace (the window's socket and desk code), its
// stdin standing in for the person's buttons (`resolve` called as the person). The claude-code
// test decides in the real window instead.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { spawn } from "node:child_process";
import { rdeskBinary, tempDir } from "./launch.js";

/** Starts the desk on `ws`; resolves once it listens. */
export async function startDesk(ws) {
  // Short: a socket path must fit in 108 bytes.
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), "rdag-"));
  fs.chmodSync(runtime, 0o700);
  const data = tempDir("rd-agent-data-");
  const child = spawn(rdeskBinary(), ["serve-socket", "--policy", "human", "--workspace", ws], {
    env: { ...process.env, XDG_RUNTIME_DIR: runtime },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const queue = [];
  const waiters = [];
  lines.on("line", (l) => (waiters.length ? waiters.shift()(l) : queue.push(l)));
  const next = () => new Promise((resolve) => (queue.length ? resolve(queue.shift()) : waiters.push(resolve)));
  const socket = await next();
  if (!fs.existsSync(socket.trim())) throw new Error(`rdesk serve-socket did not print its socket: ${socket}`);
  const send = async (call) => {
    child.stdin.write(JSON.stringify(call) + "\n");
    return JSON.parse(await next());
  };
  return {
    runtime,
    /** The environment an agent (and so its hook) runs with to reach this desk and no other. */
    env: { XDG_RUNTIME_DIR: runtime, XDG_DATA_HOME: data, RESOLVE_DESK_BIN: "/bin/false" },
    /** Waits until the top action shows its agent waiting for the person; its proposal. */
    untilWaiting: async () => (await send({ wait_for_proposal: true, waiting: true })).proposal,
    /** The person's `resolve`. */
    resolve: (params) => send({ tool: "resolve", params }),
    stop: () => child.kill(),
  };
}

/** Runs `bin args` in `cwd`; resolves with its exit code and output (never rejects on a code). */
export function run(bin, args, { cwd, env, input = "" }) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

/** Every request body a logging mock model server wrote to `log` (JSON lines). */
export function requests(log) {
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Starts a logging mock model server (tests/agents/mocks/NAME.py) on a free port. */
export async function startMock(name, args, port) {
  const script = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../agents/mocks", `${name}.py`);
  const child = spawn("python3", [script, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  const { until } = await import("./launch.js");
  await until(async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/`)).status > 0;
    } catch {
      return false;
    }
  }, `the ${name} mock on port ${port} (${log})`);
  return child;
}

/** Starts fakellm (tests/agents/.venv) on `port` with `rules` (JSON is YAML); its process, once it answers. */
export async function startFakellm(rules, port) {
  const bin = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../agents/.venv/bin/fakellm");
  if (!fs.existsSync(bin)) throw new Error("fakellm is not installed in tests/agents/.venv: run scripts/setup.sh");
  const { until } = await import("./launch.js");
  const config = path.join(tempDir("rd-e2e-llm-"), "fakellm.yaml");
  fs.writeFileSync(config, JSON.stringify(rules, null, 1));
  const child = spawn(bin, ["serve", "--config", config, "--port", String(port)], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  await until(async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/_fakellm/stats`)).status < 500;
    } catch {
      return false;
    }
  }, `fakellm on port ${port} (${log})`);
  return child;
}
