// Text helpers for the diff view: HTML escaping and the diff's word-level emphasis merged into
// highlighted HTML. Highlighting itself runs on whole files, off the main thread
// (`highlighter.ts` → `highlight.worker.ts` → `wholeHighlight.ts`), so highlight.js is not part
// of the main bundle.

import type { HiddenChar } from '../ipc/backend';
import { markHidden } from './hidden';

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;');
}

/**
 * Wraps the characters of `html`'s text whose UTF-16 offsets fall inside
 * `ranges` (half-open) in `<mark class="em">`, closing and reopening the mark
 * around tags so the result stays well nested.
 */
export function mergeEmphasis(html: string, ranges: ReadonlyArray<readonly [number, number]>): string {
  if (ranges.length === 0) return html;
  const inRange = (pos: number) => ranges.some(([s, e]) => pos >= s && pos < e);
  let out = '';
  let pos = 0;
  let open = false;
  let i = 0;
  while (i < html.length) {
    const ch = html[i]!;
    if (ch === '<') {
      const end = html.indexOf('>', i);
      if (open) { out += '</mark>'; open = false; }
      out += html.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    let len = 1;
    if (ch === '&') {
      const semi = html.indexOf(';', i);
      if (semi > i) len = semi - i + 1;
    }
    const want = inRange(pos);
    if (want && !open) { out += '<mark class="em">'; open = true; }
    if (!want && open) { out += '</mark>'; open = false; }
    out += html.slice(i, i + len);
    i += len;
    pos += 1;
  }
  if (open) out += '</mark>';
  return out;
}

/**
 * One diff line's HTML: its highlighted HTML (or the escaped text) with the emphasis marked
 * and its hidden characters shown as chips (`lib/hidden`).
 */
export function renderLine(
  text: string,
  highlighted: string | null,
  emphasis: ReadonlyArray<readonly [number, number]>,
  hidden?: readonly HiddenChar[],
): string {
  return markHidden(mergeEmphasis(highlighted ?? escapeHtml(text), emphasis), hidden);
}
