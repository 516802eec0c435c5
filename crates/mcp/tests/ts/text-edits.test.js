// The plain edit previews through the real `rdesk mcp --headless --policy agent`, driven by the
// official MCP TypeScript SDK: edit_file and apply_patch write nothing until `resolve`
// applies them, and then exactly the preview; a patch whose context does not match is refused
// naming the file, and nothing is pushed. Run by `cargo test -p resolve-cli --test mcp_ts`.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const RDESK = process.env.RDESK_BIN ?? "rdesk";
const REMINDER = "This is a preview. Call the resolve tool to apply or discard these changes.";
const textOf = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function headless() {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "rd-ts-text-"));
  fs.writeFileSync(path.join(ws, "app.ts"), "export const greeting = \"héllo\";\nexport const n = 1;\n");
  const client = new Client({ name: "ts-text-edits", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: RDESK, args: ["mcp", "--workspace", ws, "--headless", "--policy", "agent"], stderr: "inherit" }));
  return { ws, client };
}

test("edit_file and apply_patch preview, then resolve writes exactly that", async () => {
  const { ws, client } = await headless();
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const n of ["write_file", "edit_file", "apply_patch"]) assert.ok(names.includes(n), `${n} in ${names}`);
    const edit = await client.callTool({ name: "edit_file", arguments: { path: "app.ts", edits: [{ oldText: "\"héllo\"", newText: "\"hello, desk\"" }] } });
    assert.notEqual(edit.isError, true, textOf(edit));
    assert.ok(textOf(edit).trimEnd().endsWith(REMINDER), textOf(edit));
    assert.match(fs.readFileSync(path.join(ws, "app.ts"), "utf8"), /héllo/, "nothing written yet");
    const applied = await client.callTool({ name: "resolve", arguments: { action: "apply", reason: "ok" } });
    assert.notEqual(applied.isError, true, textOf(applied));
    assert.equal(fs.readFileSync(path.join(ws, "app.ts"), "utf8"), "export const greeting = \"hello, desk\";\nexport const n = 1;\n");

    const patch = "*** Begin Patch\n*** Update File: app.ts\n@@\n-export const n = 1;\n+export const n = 2;\n*** End Patch\n";
    const patched = await client.callTool({ name: "apply_patch", arguments: { patch } });
    assert.notEqual(patched.isError, true, textOf(patched));
    assert.match(textOf(patched), /Edit: app\.ts/);
    await client.callTool({ name: "resolve", arguments: { action: "apply", reason: "ok" } });
    assert.match(fs.readFileSync(path.join(ws, "app.ts"), "utf8"), /n = 2;/);
  } finally {
    await client.close();
  }
});

test("a patch whose context does not match is refused naming the file, and nothing is pushed", async () => {
  const { ws, client } = await headless();
  try {
    const bad = "*** Begin Patch\n*** Update File: app.ts\n@@\n-export const missing = 0;\n+x\n*** End Patch\n";
    const r = await client.callTool({ name: "apply_patch", arguments: { patch: bad } });
    assert.equal(r.isError, true, textOf(r));
    assert.match(textOf(r), /app\.ts/);
    const empty = await client.callTool({ name: "resolve", arguments: { action: "apply", reason: "ok" } });
    assert.match(textOf(empty), /No pending action/);
    assert.match(fs.readFileSync(path.join(ws, "app.ts"), "utf8"), /héllo/);
  } finally {
    await client.close();
  }
});
