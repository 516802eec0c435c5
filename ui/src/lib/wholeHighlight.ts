// Highlights a whole file once with highlight.js, then cuts the HTML into lines, so constructs
// that span lines (block comments, strings, template literals) are coloured as what they are.
// Runs in the highlight worker (or inline where there is no Worker, e.g. tests).
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import elixir from 'highlight.js/lib/languages/elixir';
import go from 'highlight.js/lib/languages/go';
import haskell from 'highlight.js/lib/languages/haskell';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import lua from 'highlight.js/lib/languages/lua';
import markdown from 'highlight.js/lib/languages/markdown';
import php from 'highlight.js/lib/languages/php';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import scala from 'highlight.js/lib/languages/scala';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { escapeHtml } from './highlight';
import { splitLines } from './lines';

const LANGUAGES = {
  bash, c, cpp, csharp, css, elixir, go, haskell, java, javascript, json, kotlin, lua, markdown, php, python,
  ruby, rust, scala, swift, typescript, xml, yaml,
};
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);

/** The language ids this highlighter knows (the engine's `language_for_path` ids). */
export const KNOWN_LANGUAGES: ReadonlySet<string> = new Set(Object.keys(LANGUAGES));

/**
 * Cuts highlight.js HTML into one string per line: every `<span …>` open at a newline is
 * closed at the end of the line and opened again at the start of the next, so each line is
 * well-formed HTML on its own.
 */
export function splitHtmlLines(html: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let line = '';
  let i = 0;
  while (i < html.length) {
    const ch = html[i]!;
    if (ch === '<') {
      const end = html.indexOf('>', i);
      const tag = html.slice(i, end + 1);
      if (tag.startsWith('</')) open.pop();
      else open.push(tag);
      line += tag;
      i = end + 1;
    } else if (ch === '\n') {
      lines.push(line + '</span>'.repeat(open.length));
      line = open.join('');
      i += 1;
    } else {
      const next = html.slice(i).search(/[<\n]/);
      const stop = next < 0 ? html.length : i + next;
      line += html.slice(i, stop);
      i = stop;
    }
  }
  lines.push(line + '</span>'.repeat(open.length));
  return lines;
}

/** The highlighted HTML of each line of `text` (escaped plain text for an unknown language). */
export function highlightText(text: string, language: string | null): string[] {
  const count = splitLines(text).length;
  let lines: string[];
  if (language && KNOWN_LANGUAGES.has(language)) {
    const html = hljs.highlight(text, { language, ignoreIllegals: true }).value;
    lines = splitHtmlLines(html).map((l) => l.replace(/\r/g, ''));
  } else {
    lines = splitLines(text).map(escapeHtml);
  }
  return lines.slice(0, count);
}
