// replace_text_preview: replace a text in every file of the workspace (or the files given),
// as one change set the engine writes itself when the person applies it. Nothing is written
// here; every edited file is pinned to the sha256 this preview read, so an edit made in the
// meantime turns the action stale instead of being overwritten.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const SKIP = new Set([".git", "node_modules", ".resolve", "target", "dist", "__pycache__"]);
const MAX_FILES = 5000;
const MAX_BYTES = 1024 * 1024;

function workspaceFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (out.length >= MAX_FILES) return;
      if (SKIP.has(entry.name)) continue;
      const abs = join(dir, entry.name);
      if (entry.isDirectory()) walk(abs);
      else if (entry.isFile() && statSync(abs).size <= MAX_BYTES) out.push(relative(root, abs));
    }
  };
  walk(root);
  return out.sort();
}

/** @type {import("resolve-desk-tool").CustomToolFactory} */
const factory = (pi) => ({
  name: "replace_text_preview",
  label: "Replace Text Preview",
  description:
    "Previews replacing a literal text in the workspace's files (all text files, or `files`); the change is written only when resolved with apply.",
  parameters: pi.typebox.Type.Object(
    {
      find: pi.typebox.Type.String({ minLength: 1, description: "The literal text to find" }),
      replace: pi.typebox.Type.String({ description: "What replaces it" }),
      files: pi.typebox.Type.Optional(
        pi.typebox.Type.Array(pi.typebox.Type.String(), { description: "Workspace-relative files (default: all)" }),
      ),
    },
    { additionalProperties: false },
  ),

  async execute(_toolCallId, params) {
    const root = pi.workspaceRoot();
    const candidates = params.files ?? workspaceFiles(root);
    const changes = [];
    const rows = [];
    let done = 0;
    for (const path of candidates) {
      done += 1;
      if (done % 200 === 0) pi.progress(done, candidates.length, path);
      let file;
      try {
        file = pi.readWorkspaceFile(path);
      } catch (err) {
        if (params.files) throw new Error(`cannot read ${path}: ${err.message}`);
        continue;
      }
      if (file.text.includes("\u0000")) continue; // binary
      const occurrences = file.text.split(params.find).length - 1;
      if (occurrences === 0) continue;
      changes.push({ op: "edit", path, sha256: file.sha256, contents: file.text.split(params.find).join(params.replace) });
      rows.push({ path, occurrences });
    }
    const total = rows.reduce((n, r) => n + r.occurrences, 0);
    if (changes.length === 0) {
      return { content: [{ type: "text", text: `No file contains ${JSON.stringify(params.find)}; nothing to preview.` }] };
    }
    const label = `Replace text: ${JSON.stringify(params.find)} → ${JSON.stringify(params.replace)} in ${changes.length} file${changes.length === 1 ? "" : "s"}`;
    await pi.pushPendingAction({
      label,
      sourceToolName: "replace_text_preview",
      details: { find: params.find, replace: params.replace, occurrences: total, files: rows },
      changeSet: {
        changes,
        appliedText: `Replaced ${total} occurrence${total === 1 ? "" : "s"} in ${changes.length} file${changes.length === 1 ? "" : "s"}.`,
        discardText: `Kept the files as they were (no text replaced).`,
      },
    });
    return {
      content: [
        { type: "text", text: `Previewed ${total} replacement${total === 1 ? "" : "s"} in ${changes.length} file${changes.length === 1 ? "" : "s"}. Call resolve to apply or discard.` },
      ],
    };
  },
});

export default factory;
