import { describe, expect, it } from 'vitest';
import { highlightText, splitHtmlLines } from './wholeHighlight';
import { splitLines } from './lines';

/** The text of an HTML fragment (entities decoded), as a browser would show it. */
function textOf(html: string): string {
  const div = document.createElement('div');
  div.innerHTML = html;
  return div.textContent ?? '';
}

describe('whole-file highlighting', () => {
  const source = [
    'const a = 1; /* a comment',
    '   that spans',
    '   three lines */ const b = `template',
    'literal ${a} still` + "x<y&z";',
    '',
  ].join('\n');

  it('colours every line of a multi-line comment and template literal as what it is', () => {
    const lines = highlightText(source, 'typescript');
    expect(lines).toHaveLength(4);
    // Line 2 is entirely inside the comment: highlighting it alone would colour `that` as code.
    expect(lines[1]).toMatch(/^<span class="hljs-comment">   that spans<\/span>$/);
    expect(lines[2]).toContain('<span class="hljs-comment">   three lines */</span>');
    expect(lines[3]!.startsWith('<span class="hljs-string">literal ')).toBe(true);
    // Each line is well-formed on its own and keeps its exact text.
    lines.forEach((html, i) => {
      expect(textOf(html)).toBe(splitLines(source)[i]);
      expect((html.match(/<span/g) ?? []).length).toBe((html.match(/<\/span>/g) ?? []).length);
    });
  });

  it('escapes the text of an unknown language and keeps the line count of the diff', () => {
    const lines = highlightText('a <b>\r\nc & d\n', null);
    expect(lines).toEqual(['a &lt;b&gt;', 'c &amp; d']);
    expect(highlightText('no final newline', 'rust')).toHaveLength(1);
  });

  it('closes and reopens nested spans at each newline', () => {
    expect(splitHtmlLines('<span class="a">x<span class="b">y\nz</span>w\n</span>v')).toEqual([
      '<span class="a">x<span class="b">y</span></span>',
      '<span class="a"><span class="b">z</span>w</span>',
      '<span class="a"></span>v',
    ]);
  });
});
