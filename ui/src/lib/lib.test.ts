import { describe, expect, it } from 'vitest';
import { mergeEmphasis } from './highlight';
import { relativeAge } from './time';
import { isTypingTarget } from './shortcuts';

describe('mergeEmphasis', () => {
  it('wraps text ranges, closing marks around tags and counting entities as one unit', () => {
    const html = '<span class="k">a&amp;b</span>cd';
    expect(mergeEmphasis(html, [[1, 4]])).toBe('<span class="k">a<mark class="em">&amp;b</mark></span><mark class="em">c</mark>d');
    expect(mergeEmphasis('abc', [])).toBe('abc');
  });
});

describe('misc', () => {
  it('formats ages', () => {
    expect(relativeAge(0, 10_000)).toBe('just now');
    expect(relativeAge(0, 120_000)).toBe('2 min ago');
    expect(relativeAge(0, 3 * 3_600_000)).toBe('3 h ago');
  });
  it('knows typing targets', () => {
    expect(isTypingTarget(document.createElement('textarea'))).toBe(true);
    expect(isTypingTarget(document.createElement('select'))).toBe(true);
    const cb = document.createElement('input');
    cb.type = 'checkbox';
    expect(isTypingTarget(cb)).toBe(false);
    expect(isTypingTarget(document.createElement('input'))).toBe(true);
    expect(isTypingTarget(document.createElement('button'))).toBe(false);
  });
});
