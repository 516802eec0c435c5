# {{NAME}}: a Resolve Desk tool, written by `rdesk tools new`. It proposes adding a line at
# the end of a text file. Nothing is written here: the desk writes the change set when a
# person (or, under the agent policy, the agent) applies it, and only if the file is still
# the one this preview read. Change `parameters` and `execute` to make it yours.
import os


def factory(pi):
    Type = pi.typebox.Type

    def execute(_tool_call_id, params):
        path, line = params["path"], params["line"]
        exists = os.path.exists(os.path.join(pi.workspace_root(), path))
        if exists:
            # The file as read now, pinned by its sha256: an edit made before the apply turns
            # the proposal stale instead of being overwritten.
            f = pi.read_workspace_file(path)
            text = f["text"] if f["text"] == "" or f["text"].endswith("\n") else f["text"] + "\n"
            change = {"op": "edit", "path": path, "sha256": f["sha256"], "contents": f"{text}{line}\n"}
        else:
            change = {"op": "create", "path": path, "contents": f"{line}\n"}
        action_id = pi.push_pending_action({
            "label": f"Add a line to {path}",
            "sourceToolName": "{{NAME}}",
            "details": {"path": path, "line": line, "created": not exists},
            "changeSet": {
                "changes": [change],
                "appliedText": f"Added the line to {path}.",
                "discardText": f"Left {path} as it was.",
            },
        })
        return {
            "content": [{"type": "text", "text": f"Previewed adding a line to {path}. Call resolve to apply or discard."}],
            "details": {"action_id": action_id},
        }

    return {
        "name": "{{NAME}}",
        "label": "{{LABEL}}",
        "description": "Proposes adding a line at the end of a text file of the workspace (created if missing); nothing is written until the proposal is applied.",
        "parameters": Type.Object(
            {
                "path": Type.String(min_length=1, description="Workspace-relative file"),
                "line": Type.String(description="The line to add"),
            },
            additional_properties=False,
        ),
        "execute": execute,
    }
