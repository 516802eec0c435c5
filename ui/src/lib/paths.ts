// Paths a person picked (absolute, from the system dialog) → what tools take: relative to the
// workspace root, with `/`. A path outside the workspace is refused with a message naming it.

/** Why a picked path cannot be used; `path` is the absolute path as picked. */
export class OutsideWorkspace extends Error {
  constructor(readonly path: string, readonly root: string) {
    super(`${path} is outside the workspace ${root}: pick a file or folder inside it.`);
    this.name = 'OutsideWorkspace';
  }
}

const slashes = (p: string) => p.replace(/\\/g, '/');
const trimEnd = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);

/** `root`/`picked` → the workspace-relative path (`.` for the root itself); throws `OutsideWorkspace`. */
export function toWorkspaceRelative(root: string, picked: string): string {
  const r = trimEnd(slashes(root));
  const p = trimEnd(slashes(picked));
  // Normalise `.` and `..` segments so `root/../x` cannot pass as inside.
  const parts: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '..') parts.pop();
    else if (seg !== '.') parts.push(seg);
  }
  const norm = parts.join('/') || '/';
  if (norm === r) return '.';
  const prefix = r.endsWith('/') ? r : `${r}/`;
  if (!norm.startsWith(prefix)) throw new OutsideWorkspace(picked, root);
  return norm.slice(prefix.length);
}
