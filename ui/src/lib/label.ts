// SPEC §4: a label `Source: summary` is split at the first ": " into a badge
// and a summary. Labels without ": " have no badge.
export type SplitLabel = { badge: string | null; summary: string };

export function splitLabel(label: string): SplitLabel {
  const at = label.indexOf(': ');
  if (at <= 0) return { badge: null, summary: label };
  return { badge: label.slice(0, at), summary: label.slice(at + 2) };
}

/**
 * `Accept: <summary> [<source>]` / `Discard: <summary> [<source>]`: the source is the
 * label's badge, or the producing tool's name when the label has none (the engine's
 * `render_resolve_header` follows the same rule).
 */
export function historyHeader(action: 'apply' | 'discard', label: string, sourceToolName: string): string {
  const verb = action === 'apply' ? 'Accept' : 'Discard';
  const { badge, summary } = splitLabel(label);
  return `${verb}: ${summary} [${badge ?? sourceToolName}]`;
}
