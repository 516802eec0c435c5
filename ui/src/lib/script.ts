// The JSON Lines script format of `rdesk run` and "Run script…", for stepping
// through a script line by line. Mirrors `parse_line` in crates/agent/src/script.rs:
// one `{"tool": NAME, "params": {...}}` per line, `params` optional (then `{}`),
// blank lines and lines starting with `#` skipped, a malformed line names its number.

/** One runnable line. `line` is 1-based in the script text. */
export interface ScriptCall {
  line: number;
  tool: string;
  params: Record<string, unknown>;
}

/** A line that is not a tool call; `message` starts with `line N: `. */
export class ScriptLineError extends Error {
  readonly line: number;
  constructor(line: number, detail: string) {
    super(`line ${line}: ${detail}`);
    this.name = 'ScriptLineError';
    this.line = line;
  }
}

/** The script's lines (a final newline does not start another line). */
export function scriptLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Whether a line is skipped (blank or a `#` comment). */
export function isSkipped(text: string): boolean {
  const t = text.trim();
  return t === '' || t.startsWith('#');
}

/** 1-based numbers of the lines that run, in order. */
export function runnableLines(text: string): number[] {
  return scriptLines(text).flatMap((l, i) => (isSkipped(l) ? [] : [i + 1]));
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'boolean': return 'a boolean';
    case 'number': return 'a number';
    case 'string': return 'a string';
    default: return 'an object';
  }
}

/** Parses line `line` (1-based); `null` for blank and comment lines. Throws `ScriptLineError`. */
export function parseScriptLine(line: number, text: string): ScriptCall | null {
  if (isSkipped(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text.trim());
  } catch (e) {
    throw new ScriptLineError(line, `not valid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ScriptLineError(line, `expected an object like {"tool": "resolve", "params": {...}}, got ${kindOf(value)}`);
  }
  const obj = value as Record<string, unknown>;
  const unknown = Object.keys(obj).find((k) => k !== 'tool' && k !== 'params');
  if (unknown !== undefined) throw new ScriptLineError(line, `unknown field \`${unknown}\`, expected \`tool\` or \`params\``);
  if (!('tool' in obj)) throw new ScriptLineError(line, 'missing field `tool`');
  if (typeof obj.tool !== 'string') throw new ScriptLineError(line, `\`tool\` must be a string, got ${kindOf(obj.tool)}`);
  if (obj.tool.trim() === '') throw new ScriptLineError(line, '`tool` must be a non-empty tool name');
  const params = obj.params === undefined ? {} : obj.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new ScriptLineError(line, `\`params\` must be an object, got ${kindOf(params)}`);
  }
  return { line, tool: obj.tool, params: params as Record<string, unknown> };
}
