import { describe, expect, it } from 'vitest';
import type { HiddenChar } from '../ipc/backend';
import { hiddenHtml, markHidden, sliceHidden, visibleText } from './hidden';
import { renderLine } from './highlight';

// Ranges as the backend sends them (UTF-16 offsets); the rule that finds them is Rust's.
const rlo = (start: number): HiddenChar => ({
  start, end: start + 1, codePoint: 0x202e, kind: 'bidi', name: 'U+202E RIGHT-TO-LEFT OVERRIDE', marker: '⟨U+202E⟩',
});
const tag = (start: number): HiddenChar => ({
  start, end: start + 2, codePoint: 0xe0041, kind: 'invisible', name: "U+E0041 TAG 'A'", marker: '⟨U+E0041⟩',
});
const cyrillicA = (start: number): HiddenChar => ({
  start, end: start + 1, codePoint: 0x430, kind: 'confusable', name: 'U+0430 Cyrillic letter that looks like "a"', marker: '⟨U+0430⟩',
});

function parse(html: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = html;
  return div;
}

describe('hidden characters', () => {
  it('replaces a bidi control with a chip named by its code point, so the text cannot reorder', () => {
    const text = 'if (a != "user\u202e ") {';
    const el = parse(hiddenHtml(text, [rlo(14)]));
    expect(el.textContent).toBe('if (a != "user⟨U+202E⟩ ") {');
    expect(el.textContent).not.toContain('\u202e');
    const chip = el.querySelector('[data-testid="hidden-char"]') as HTMLElement;
    expect(chip.title).toBe('U+202E RIGHT-TO-LEFT OVERRIDE');
    expect(chip.dataset.kind).toBe('bidi');
  });

  it('keeps syntax highlighting and word emphasis around the chip', () => {
    // What highlight.js gives for `x = "a\u202eb"` (the string span), and an emphasis on the string.
    const text = 'x = "a\u202eb"';
    const highlighted = 'x = <span class="hljs-string">&quot;a\u202eb&quot;</span>';
    const el = parse(renderLine(text, highlighted, [[4, 9]], [rlo(6)]));
    const str = el.querySelector('.hljs-string')!;
    expect(str.textContent).toBe('"a⟨U+202E⟩b"');
    expect(str.querySelector('[data-testid="hidden-char"]')).not.toBeNull();
    expect([...el.querySelectorAll('mark.em')].map((m) => m.textContent).join('')).toBe('"a⟨U+202E⟩b"');
  });

  it('counts characters outside the BMP as two UTF-16 units, as the backend does', () => {
    const text = 'ok\u{e0041}🎉\u202e!';
    // 'ok' = 0..2, tag = 2..4, 🎉 = 4..6, RLO = 6..7
    const el = parse(hiddenHtml(text, [tag(2), rlo(6)]));
    expect(el.textContent).toBe('ok⟨U+E0041⟩🎉⟨U+202E⟩!');
  });

  it('outlines a look-alike letter and keeps it, with its name as the tooltip', () => {
    const el = parse(hiddenHtml('p\u0430ypal <b>', [cyrillicA(1)]));
    expect(el.textContent).toBe('p\u0430ypal <b>');
    const chip = el.querySelector('.uc-confusable') as HTMLElement;
    expect(chip.textContent).toBe('\u0430');
    expect(chip.title).toBe('U+0430 Cyrillic letter that looks like "a"');
  });

  it('leaves HTML without findings untouched', () => {
    const html = '<span class="hljs-keyword">let</span> x = 1;';
    expect(markHidden(html, undefined)).toBe(html);
    expect(markHidden(html, [])).toBe(html);
  });

  it('gives plain text with markers for tooltips, and slices ranges for a part of a path', () => {
    expect(visibleText('a\u202eb', [rlo(1)])).toBe('a⟨U+202E⟩b');
    expect(visibleText('plain', undefined)).toBe('plain');
    const path = 'src/x\u202eb.js';
    const hidden = [rlo(5)];
    expect(sliceHidden(hidden, 0, 4)).toEqual([]);
    expect(sliceHidden(hidden, 4, path.length)).toEqual([{ ...hidden[0], start: 1, end: 2 }]);
  });
});
