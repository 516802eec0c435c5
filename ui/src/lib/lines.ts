// Lines of a text as the diff numbers them (shared by the main thread and the highlight worker).

/** Split on `\n`; a final newline ends the last line (it does not start another); `\r` dropped. */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}
