// {{NAME}}: a Resolve Desk tool, written by `rdesk tools new`. It proposes adding a line at
// the end of a text file. Nothing is written here: the desk writes the change set when a
// person (or, under the agent policy, the agent) applies it, and only if the file is still
// the one this preview read. Change `parameters` and `execute` to make it yours.
import { existsSync } from "node:fs";
import { join } from "node:path";

/** @type {import("resolve-desk-tool").CustomToolFactory} */
const factory = (pi) => ({
  name: "{{NAME}}",
  label: "{{LABEL}}",
  description:
    "Proposes adding a line at the end of a text file of the workspace (created if missing); nothing is written until the proposal is applied.",
  parameters: pi.typebox.Type.Object(
    {
      path: pi.typebox.Type.String({ minLength: 1, description: "Workspace-relative file" }),
      line: pi.typebox.Type.String({ description: "The line to add" }),
    },
    { additionalProperties: false },
  ),

  async execute(_toolCallId, params) {
    const exists = existsSync(join(pi.workspaceRoot(), params.path));
    let change;
    if (exists) {
      // The file as read now, pinned by its sha256: an edit made before the apply turns the
      // proposal stale instead of being overwritten.
      const file = pi.readWorkspaceFile(params.path);
      const text = file.text === "" || file.text.endsWith("\n") ? file.text : `${file.text}\n`;
      change = { op: "edit", path: params.path, sha256: file.sha256, contents: `${text}${params.line}\n` };
    } else {
      change = { op: "create", path: params.path, contents: `${params.line}\n` };
    }
    const actionId = await pi.pushPendingAction({
      label: `Add a line to ${params.path}`,
      sourceToolName: "{{NAME}}",
      details: { path: params.path, line: params.line, created: !exists },
      changeSet: {
        changes: [change],
        appliedText: `Added the line to ${params.path}.`,
        discardText: `Left ${params.path} as it was.`,
      },
    });
    return {
      content: [{ type: "text", text: `Previewed adding a line to ${params.path}. Call resolve to apply or discard.` }],
      details: { action_id: actionId },
    };
  },
});

export default factory;
