# The design note's example, in Python (python3 run.py tool.py; stdlib only).


def factory(pi):
    async def execute(_tool_call_id, params):
        preview_summary = f"Prepared rename plan for {len(params['files'])} files"

        async def apply(reason):
            # apply writes here
            return {
                "content": [{"type": "text", "text": f"Applied batch rename. Reason: {reason}"}],
            }

        async def reject(reason):
            # optional: cleanup or notify on discard
            return {
                "content": [{"type": "text", "text": f"Discarded batch rename. Reason: {reason}"}],
            }

        pi.pushPendingAction({
            "label": f"Batch rename: {len(params['files'])} files",
            "sourceToolName": "batch_rename_preview",
            "apply": apply,
            "reject": reject,
        })

        return {
            "content": [{"type": "text", "text": f"{preview_summary}. Call resolve to apply or discard."}],
        }

    return {
        "name": "batch_rename_preview",
        "label": "Batch Rename Preview",
        "description": "Previews renames and defers commit to resolve",
        "parameters": pi.typebox.Type.Object({
            "files": pi.typebox.Type.Array(pi.typebox.Type.String()),
        }),
        "execute": execute,
    }
