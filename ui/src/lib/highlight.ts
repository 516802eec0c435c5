// Syntax highlighting (highlight.js core, a handful of languages) merged with
// the diff's word-level emphasis ranges. Output is HTML whose text is escaped.
import hljs from 'highlight.js/lib/core';
import typescript from 'highlight.js/lib/languages/typescript';
import javascript from 'highlight.js/lib/languages/javascript';
import rust from 'highlight.js/lib/languages/rust';
import python from 'highlight.js/lib/languages/python';
import json from 'highlight.js/lib/languages/json';
import css from 'highlight.js/lib/languages/css';
import xml from 'highlight.js/lib/languages/xml';
import markdown from 'highlight.js/lib/languages/markdown';

hljs.registerLanguage('typescript', typescript);
hljs.registerLanguage('javascript', javascript);
hljs.registerLanguage('rust', rust);
hljs.registerLanguage('python', python);
hljs.registerLanguage('json', json);
hljs.registerLanguage('css', css);
hljs.registerLanguage('xml', xml);
hljs.registerLanguage('markdown', markdown);

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;');
}

/** Highlights one line (each line alone: good enough for review, and cheap). */
export function highlightLine(text: string, language: string | null): string {
  if (language && hljs.getLanguage(language)) {
    try {
      return hljs.highlight(text, { language, ignoreIllegals: true }).value;
    } catch {
      // fall through to plain text
    }
  }
  return escapeHtml(text);
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

export function renderLine(text: string, language: string | null, emphasis: ReadonlyArray<readonly [number, number]>): string {
  return mergeEmphasis(highlightLine(text, language), emphasis);
}
