# delete_generated_preview: previews deleting generated files (by default: __pycache__
# folders' *.pyc, *.pyo, .DS_Store, *.orig, *.rej, *~) as one change set the engine deletes
# itself when the person applies it. Each file is pinned to the sha256 this preview read.
import fnmatch
import os

SKIP = {".git", "node_modules", ".resolve", "target", ".venv", "venv"}
DEFAULT_PATTERNS = ["*.pyc", "*.pyo", ".DS_Store", "*.orig", "*.rej", "*~"]
MAX_FILES = 2000


def factory(pi):
    Type = pi.typebox.Type

    def execute(_tool_call_id, params):
        root = pi.workspace_root()
        patterns = params.get("patterns") or DEFAULT_PATTERNS
        found = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP)
            for name in sorted(filenames):
                if any(fnmatch.fnmatch(name, p) for p in patterns):
                    found.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
                    if len(found) >= MAX_FILES:
                        break
        if not found:
            return f"No generated files match {', '.join(patterns)}; nothing to preview."
        changes = []
        total = 0
        for i, path in enumerate(found):
            f = pi.read_workspace_file(path)
            size = os.path.getsize(os.path.join(root, path))
            total += size
            changes.append({"op": "delete", "path": path, "sha256": f["sha256"]})
            if i % 100 == 0:
                pi.progress(i, len(found), path)
        n = len(changes)
        pi.push_pending_action({
            "label": f"Delete generated files: {n} file{'s' if n != 1 else ''}",
            "sourceToolName": "delete_generated_preview",
            "details": {"patterns": patterns, "bytes": total, "files": found},
            "changeSet": {
                "changes": changes,
                "appliedText": f"Deleted {n} generated file{'s' if n != 1 else ''} ({total} bytes).",
                "discardText": "Kept the generated files.",
            },
        })
        return f"Previewed deleting {n} generated file{'s' if n != 1 else ''} ({total} bytes). Call resolve to apply or discard."

    return {
        "name": "delete_generated_preview",
        "label": "Delete Generated Files Preview",
        "description": "Previews deleting generated files (*.pyc, .DS_Store, *.orig, *.rej, *~ or the given patterns); nothing is deleted until resolved with apply.",
        "parameters": Type.Object(
            {"patterns": Type.Optional(Type.Array(Type.String(min_length=1)))},
            additional_properties=False,
        ),
        "execute": execute,
    }
