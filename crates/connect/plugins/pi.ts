// Resolve Desk for pi: every `edit` and `write` waits in the desk until the person decides.
// Written by `rdesk setup pi` (resolve-desk-plugin 1); `rdesk setup pi --remove` deletes it.
//
// pi's own edit and write tools run unchanged, with one difference: where they would write the
// file, they hand the exact text they computed to `rdesk hook pi`, which holds it in the desk.
// Apply: the desk writes what the person approved (their version if they changed it) and the
// tool reports its usual success; Discard / Request changes: the tool fails with the person's
// reason and line comments. Any failure fails the tool: no edit passes unreviewed.
import { spawn } from "node:child_process";
import { access, constants, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { createEditToolDefinition, createWriteToolDefinition } from "@mariozechner/pi-coding-agent";

const HOOK: string[] = __RDESK_HOOK__;

type Answer = { decision: string; reason?: string; text?: string; changed?: boolean };

function ask(payload: unknown, signal?: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const child = spawn(HOOK[0], HOOK.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const onAbort = () => child.kill("SIGTERM");
    signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) =>
      reject(new Error(`Resolve Desk could not run its hook ${HOOK[0]} (${e.message}); the edit was not made. Run \`rdesk setup pi\` again.`)),
    );
    child.on("close", (code) => {
      signal?.removeEventListener("abort", onAbort);
      try {
        const answer = JSON.parse(out) as Answer;
        if (typeof answer?.decision === "string") return resolve(answer);
      } catch {}
      reject(new Error(`Resolve Desk's hook ended (${code}) without a decision, so the edit was not made: ${err.trim() || out.trim()}`));
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

export default function (pi: any) {
  const wrap = (make: (cwd: string, options?: any) => any, tool: string) => {
    const base = make(process.cwd());
    pi.registerTool({
      ...base,
      async execute(id: string, params: any, signal: any, onUpdate: any, ctx: any) {
        const cwd = ctx?.cwd ?? process.cwd();
        const notes: string[] = [];
        const held = async (path: string, content: string) => {
          const answer = await ask({ tool, tool_call_id: id, cwd, path, content, input: params }, signal);
          if (answer.decision === "pass") {
            await mkdir(dirname(path), { recursive: true });
            await writeFile(path, content, "utf-8");
          } else if (answer.decision !== "written") {
            throw new Error(answer.reason || "Resolve Desk did not let this edit through.");
          }
          if (answer.text) notes.push(answer.text);
        };
        const operations =
          tool === "edit"
            ? { readFile: (p: string) => readFile(p), access: (p: string) => access(p, constants.R_OK | constants.W_OK), writeFile: held }
            : { mkdir: async (_dir: string) => {}, writeFile: held };
        const result = await make(cwd, { operations }).execute(id, params, signal, onUpdate, ctx);
        for (const text of notes) result.content.push({ type: "text", text });
        return result;
      },
    });
  };
  wrap(createEditToolDefinition, "edit");
  wrap(createWriteToolDefinition, "write");
}
