// Shows the characters the backend found hidden or misleading (`HiddenChar`: bidi controls,
// zero-width and control characters, unusual spaces, look-alike letters) so a person sees what
// is really there: a hidden character is replaced by a chip with its code point (`⟨U+202E⟩`,
// its name as the tooltip), a look-alike is outlined. Which characters these are is the
// engine's rule (crates/engine/src/hidden.rs); this file only renders the ranges it sent.
import type { HiddenChar } from '../ipc/backend';
import { escapeHtml } from './highlight';

const NONE: readonly HiddenChar[] = [];

/** The chip that stands in for `h` (`original` is the escaped HTML of the characters it covers). */
function chip(h: HiddenChar, original: string): string {
  const title = escapeHtml(h.name);
  const shown = h.kind === 'confusable' ? original : escapeHtml(h.marker);
  return `<span class="uc uc-${h.kind}" data-testid="hidden-char" data-kind="${h.kind}" title="${title}" aria-label="${title}">${shown}</span>`;
}

/**
 * `html` (escaped or highlighted text, possibly with `<mark>`s) with each range of `hidden`
 * (UTF-16 offsets of the text, as the emphasis ranges are) replaced by its chip. Tags count
 * for nothing and an entity for one character, as in `mergeEmphasis`.
 */
export function markHidden(html: string, hidden: readonly HiddenChar[] | undefined): string {
  if (!hidden || hidden.length === 0) return html;
  const sorted = [...hidden].sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  let i = 0;
  let next = 0;
  while (i < html.length) {
    const ch = html[i]!;
    if (ch === '<') {
      const end = html.indexOf('>', i);
      out += html.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    let len = 1;
    if (ch === '&') {
      const semi = html.indexOf(';', i);
      if (semi > i) len = semi - i + 1;
    }
    while (next < sorted.length && sorted[next]!.end <= pos) next++;
    const h = sorted[next];
    if (h && h.start === pos) {
      // Take the characters of the range (tags inside it are kept after the chip).
      let original = '';
      let tags = '';
      while (i < html.length && pos < h.end) {
        const c = html[i]!;
        if (c === '<') {
          const end = html.indexOf('>', i);
          tags += html.slice(i, end + 1);
          i = end + 1;
          continue;
        }
        let l = 1;
        if (c === '&') {
          const semi = html.indexOf(';', i);
          if (semi > i) l = semi - i + 1;
        }
        original += html.slice(i, i + l);
        i += l;
        pos += 1;
      }
      out += chip(h, original) + tags;
      next++;
      continue;
    }
    out += html.slice(i, i + len);
    i += len;
    pos += 1;
  }
  return out;
}

/** A name or a label as HTML: escaped, with its hidden characters shown. */
export function hiddenHtml(text: string, hidden: readonly HiddenChar[] | undefined = NONE): string {
  return markHidden(escapeHtml(text), hidden);
}

/** Plain text with each hidden character replaced by its marker (for tooltips and labels). */
export function visibleText(text: string, hidden: readonly HiddenChar[] | undefined = NONE): string {
  if (!hidden || hidden.length === 0) return text;
  let out = '';
  let at = 0;
  for (const h of [...hidden].sort((a, b) => a.start - b.start)) {
    out += text.slice(at, h.start) + (h.kind === 'confusable' ? text.slice(h.start, h.end) : h.marker);
    at = h.end;
  }
  return out + text.slice(at);
}

/** The ranges of `hidden` inside `[start, end)` of the text, made relative to `start`. */
export function sliceHidden(hidden: readonly HiddenChar[] | undefined, start: number, end: number): HiddenChar[] {
  if (!hidden || hidden.length === 0) return [];
  return hidden
    .filter((h) => h.start >= start && h.end <= end)
    .map((h) => ({ ...h, start: h.start - start, end: h.end - start }));
}
