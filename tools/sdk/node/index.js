// resolve-desk-tool: serve a CustomToolFactory to Resolve Desk over JSON-RPC 2.0 on stdio
// (one message per line; see docs/TOOLS.md). Plain JavaScript, no build step.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { createInterface } from "node:readline";
import { Type } from "@sinclair/typebox";

/** The exact message a runtime without a pending-action store answers (SPEC §6). */
export const STORE_UNAVAILABLE = "Pending action store unavailable for custom tools in this runtime.";

/** The tool protocol this SDK speaks (docs/TOOLS.md); the desk says its own in RESOLVE_DESK_PROTOCOL. */
export const PROTOCOL = 1;

/**
 * Why this SDK cannot serve the desk that started it (another protocol), or null. Both
 * versions are named, with what to do.
 */
export function protocolMismatch(desk = process.env.RESOLVE_DESK_PROTOCOL) {
  if (desk === undefined || desk === "" || Number(desk) === PROTOCOL) return null;
  const fix =
    Number(desk) > PROTOCOL
      ? "Update the tool's SDK: point its manifest at the SDK that came with the desk (`rdesk sdk-path`)."
      : "Update Resolve Desk, or use the SDK that came with it (`rdesk sdk-path`).";
  return `this tool's SDK (resolve-desk-tool) speaks tool protocol ${PROTOCOL}, but this Resolve Desk speaks protocol ${desk}. ${fix}`;
}

export const typebox = { Type };
export { Type };

/** sha256 (hex) of a string or bytes: what a change set pins each file to. */
export function sha256(data) {
  return createHash("sha256").update(data).digest("hex");
}

/** The workspace the host opened (the root every change-set path is relative to). */
export function workspaceRoot() {
  return process.env.RESOLVE_DESK_WORKSPACE || process.cwd();
}

/** Reads a workspace file for a change set: `{ path, text, sha256 }`. */
export function readWorkspaceFile(path) {
  const abs = isAbsolute(path) ? path : join(workspaceRoot(), path);
  const bytes = readFileSync(abs);
  return { path, text: bytes.toString("utf8"), sha256: sha256(bytes) };
}

function toResult(value) {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  return value;
}

function errorMessage(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Serves the tool(s) a factory makes. The host tells which tool to serve in
 * `RESOLVE_DESK_TOOL` (a factory may return several; the only one is served otherwise).
 */
export function serve(factory, options = {}) {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const wanted = options.toolName ?? process.env.RESOLVE_DESK_TOOL;
  // stdout carries JSON-RPC only: console.log goes to stderr (the tool's log).
  if (output === process.stdout) console.log = (...args) => console.error(...args);

  let nextId = 1;
  const waiting = new Map();
  const actions = new Map();
  let pushes = [];
  const send = (message) => output.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = `t${nextId++}`;
      waiting.set(id, { resolve, reject });
      send({ id, method, params });
    });

  const api = {
    typebox,
    /**
     * Queues a pending action; resolves with its id. `apply(reason)` and the optional
     * `reject(reason)` run here when the host asks; or hand `changeSet` and let the engine
     * write it. A push that fails makes the tool call fail with the host's message.
     */
    pushPendingAction(action) {
      if (!action || typeof action.label !== "string" || !action.label.trim()) {
        throw new Error("pushPendingAction: `label` must be a non-empty string");
      }
      if (typeof action.apply !== "function" && !action.changeSet) {
        throw new Error("pushPendingAction: `apply(reason)` is required (or hand a `changeSet`)");
      }
      const params = { label: action.label, hasReject: typeof action.reject === "function" };
      if (action.sourceToolName !== undefined) params.sourceToolName = action.sourceToolName;
      if (action.details !== undefined) params.details = action.details;
      if (action.changeSet) params.changeSet = action.changeSet;
      const pushed = request("pushPendingAction", params).then((r) => {
        if (!action.changeSet) actions.set(r.actionId, action);
        return r.actionId;
      });
      pushed.catch(() => {});
      pushes.push(pushed);
      return pushed;
    },
    /** Reports progress of the running call (shown as the tool's progress). */
    progress(done, total, message) {
      send({ method: "progress", params: { done, total, message } });
    },
    sha256,
    readWorkspaceFile,
    workspaceRoot,
  };

  // A desk of another protocol: every call is answered with why, and nothing else runs.
  const mismatch = protocolMismatch(options.deskProtocol);
  if (mismatch) {
    console.error(`resolve-desk-tool: ${mismatch}`);
    const lines = createInterface({ input, crlfDelay: Infinity });
    lines.on("close", () => process.exit(0));
    lines.on("line", (line) => {
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        return;
      }
      if (message.id !== undefined && message.method !== undefined) {
        send({ id: message.id, error: { code: -32002, message: mismatch } });
      }
    });
    return api;
  }

  const made = factory(api);
  const tools = Array.isArray(made) ? made : [made];
  const tool = tools.find((t) => t && t.name === wanted) ?? (tools.length === 1 ? tools[0] : undefined);

  async function handle(message) {
    const { id, method, params = {} } = message;
    const answer = (result) => send({ id, result: result ?? null });
    const fail = (err, code = -32000) => send({ id, error: { code, message: errorMessage(err) } });
    try {
      if (method === "execute") {
        if (!tool) return fail(new Error(`this program serves ${tools.map((t) => t?.name).join(", ")}, not ${wanted}`));
        pushes = [];
        const result = await tool.execute(params.toolCallId, params.params ?? {});
        const settled = await Promise.allSettled(pushes);
        const refused = settled.find((s) => s.status === "rejected");
        if (refused) return fail(refused.reason, -32001);
        return answer(toResult(result) ?? { content: [] });
      }
      if (method === "apply" || method === "reject") {
        const action = actions.get(params.actionId);
        if (!action) return fail(new Error(`no action ${params.actionId} in this process`));
        actions.delete(params.actionId);
        const fn = method === "apply" ? action.apply : action.reject;
        return answer(fn ? toResult(await fn(params.reason)) : null);
      }
      if (method === "cancel") return;
      if (id !== undefined) fail(new Error(`unknown method ${method}`), -32601);
    } catch (err) {
      if (id !== undefined) fail(err);
    }
  }

  const lines = createInterface({ input, crlfDelay: Infinity });
  lines.on("line", (line) => {
    if (!line.trim()) return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      console.error(`resolve-desk-tool: ignoring a line that is not JSON: ${line.slice(0, 120)}`);
      return;
    }
    if (message.method === undefined && message.id !== undefined) {
      const w = waiting.get(message.id);
      if (!w) return;
      waiting.delete(message.id);
      if (message.error) w.reject(new Error(message.error.message));
      else w.resolve(message.result);
      return;
    }
    handle(message);
  });
  lines.on("close", () => process.exit(0));
  return api;
}
