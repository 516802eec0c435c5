// Resolve Desk for opencode: every edit and write waits in the desk until the person decides.
// Written by `rdesk setup opencode` (resolve-desk-plugin 1); `rdesk setup opencode --remove` deletes it.
//
// Before opencode runs its edit, write or apply_patch tool, this plugin hands the call to
// `rdesk hook opencode`, which computes the exact bytes the tool writes, holds them in the desk
// and answers: allow (opencode's tool writes exactly what the person approved; when the person
// changed the edit, with arguments that write their version), or deny with the person's reason
// and line comments, which the model reads as the tool's error. Any failure denies: no edit
// passes unreviewed.
import { spawn } from "node:child_process"

const HOOK = __RDESK_HOOK__
const EDIT_TOOLS = new Set(["edit", "write", "apply_patch", "multiedit", "patch"])

function ask(payload) {
  return new Promise((resolve) => {
    const child = spawn(HOOK[0], HOOK.slice(1), { stdio: ["pipe", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    child.on("error", (e) =>
      resolve({ decision: "deny", reason: `Resolve Desk could not run its hook ${HOOK[0]} (${e.message}); the edit was not made. Run \`rdesk setup opencode\` again.` }),
    )
    child.on("close", (code) => {
      try {
        const answer = JSON.parse(out)
        if (typeof answer?.decision === "string") return resolve(answer)
      } catch {}
      resolve({ decision: "deny", reason: `Resolve Desk's hook ended (${code}) without a decision, so the edit was not made: ${err.trim() || out.trim()}` })
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

export const ResolveDesk = async (ctx) => ({
  "tool.execute.before": async (input, output) => {
    if (!EDIT_TOOLS.has(input.tool)) return
    const answer = await ask({ tool: input.tool, args: output.args, cwd: ctx.directory, call_id: input.callID })
    if (answer.decision === "allow") {
      if (answer.args && typeof answer.args === "object") {
        // In place: opencode hands this same object to the tool.
        for (const k of Object.keys(output.args)) delete output.args[k]
        Object.assign(output.args, answer.args)
      }
      return
    }
    throw new Error(answer.reason || "Resolve Desk did not let this edit through.")
  },
})
