// SPEC §4: a label `Source: summary` is split at the first ": " into a badge
// and a summary. Labels without ": " have no badge.
export type SplitLabel = { badge: string | null; summary: string };

export function splitLabel(label: string): SplitLabel {
  const at = label.indexOf(': ');
  if (at <= 0) return { badge: null, summary: label };
  return { badge: label.slice(0, at), summary: label.slice(at + 2) };
}

/** `Accept: <summary> [<source>]` / `Discard: <summary> [<source>]`. */
export function historyHeader(action: 'apply' | 'discard', label: string, source: string): string {
  const verb = action === 'apply' ? 'Accept' : 'Discard';
  return `${verb}: ${splitLabel(label).summary} [${source}]`;
}
