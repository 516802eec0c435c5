// A form model generated from a tool's JSON Schema: initial values (`default`), inline
// validation (required, type, enum, pattern, minLength/maxLength, minimum/maximum,
// minItems/maxItems), conversion of the form value into tool params and back (the
// "Edit as JSON" toggle), local `$ref`s (`#/$defs/…`, `#/definitions/…`) inlined with a
// cycle guard, and `anyOf`/`oneOf` of a string and a list of strings as one list of rows
// (`stringList`: sent as a string for one row, a list for several).

export type JsonSchema = {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  definitions?: Record<string, JsonSchema>;
};

export type FieldKind = 'object' | 'array' | 'enum' | 'boolean' | 'integer' | 'number' | 'string' | 'stringList' | 'json';

/**
 * `schema` with every local `$ref` (`#/$defs/x`, `#/definitions/x`, resolved against
 * `schema` itself) replaced by what it names; keywords beside a `$ref` win. A `$ref` that
 * names itself on the way down (a recursive type), or that cannot be found, becomes a JSON
 * box (kind `json`) saying so, so the form always ends.
 */
export function derefSchema(root: JsonSchema): JsonSchema {
  const walk = (s: JsonSchema, stack: string[]): JsonSchema => {
    let node = s;
    let refs = stack;
    if (typeof node.$ref === 'string') {
      const { $ref, ...rest } = node;
      const target = lookup(root, $ref);
      if (!target) return { ...rest, description: joinText(rest.description, `(unsupported reference ${$ref}: edit as JSON)`) };
      if (stack.includes($ref)) return { ...rest, description: joinText(rest.description ?? target.description, `(recursive ${$ref}: edit as JSON)`) };
      refs = [...stack, $ref];
      node = { ...target, ...rest };
      if (typeof node.$ref === 'string') return walk(node, refs);
    }
    const out: JsonSchema = { ...node };
    if (node.properties) out.properties = Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, walk(asSchema(v), refs)]));
    if (node.items) out.items = walk(asSchema(node.items), refs);
    if (node.anyOf) out.anyOf = node.anyOf.map((v) => walk(asSchema(v), refs));
    if (node.oneOf) out.oneOf = node.oneOf.map((v) => walk(asSchema(v), refs));
    return out;
  };
  return walk(root, []);
}

function joinText(a: string | undefined, b: string): string {
  return a ? `${a} ${b}` : b;
}

function lookup(root: JsonSchema, ref: string): JsonSchema | null {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m) return null;
  const table = m[1] === '$defs' ? root.$defs : root.definitions;
  const name = m[2]!.replace(/~1/g, '/').replace(/~0/g, '~');
  const hit = table?.[name];
  return hit && typeof hit === 'object' ? hit : null;
}

/** The alternatives of an `anyOf` / `oneOf`. */
function alternatives(schema: JsonSchema): JsonSchema[] | null {
  const alts = schema.anyOf ?? schema.oneOf;
  return Array.isArray(alts) ? alts.map(asSchema) : null;
}

/** For a `stringList`: the string alternative (if any) and the array one. */
export function listParts(schema: JsonSchema): { one: JsonSchema | null; many: JsonSchema | null; item: JsonSchema } {
  const alts = alternatives(schema) ?? [];
  const one = alts.find((a) => primaryType(a) === 'string') ?? null;
  const many = alts.find((a) => primaryType(a) === 'array') ?? null;
  return { one, many, item: many?.items ?? one ?? {} };
}

function isStringList(schema: JsonSchema): boolean {
  const alts = alternatives(schema);
  if (!alts || alts.length === 0 || alts.length > 2) return false;
  return alts.every((a) => {
    const t = primaryType(a);
    return t === 'string' || (t === 'array' && primaryType(asSchema(a.items)) === 'string');
  }) && alts.some((a) => primaryType(a) === 'array');
}

/** A list of strings that names files: its field offers a "Browse…" picker. */
export function namesPaths(key: string, schema: JsonSchema): boolean {
  return /path|file|folder|director|glob/i.test(`${key} ${schema.title ?? ''} ${schema.description ?? ''}`);
}

export function asSchema(value: unknown): JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonSchema) : {};
}

function primaryType(schema: JsonSchema): string | undefined {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null');
  return schema.type;
}

export function fieldKind(schema: JsonSchema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return 'enum';
  if (isStringList(schema)) return 'stringList';
  const t = primaryType(schema) ?? (schema.properties ? 'object' : undefined);
  switch (t) {
    case 'object': return schema.properties ? 'object' : 'json';
    case 'array': return 'array';
    case 'boolean': return 'boolean';
    case 'integer': return 'integer';
    case 'number': return 'number';
    case 'string': return 'string';
    default: return 'json';
  }
}

/** How a form asks for workspace paths (set as context by the dialog; `null`: cancelled). */
export type PathPicker = (options: { directory: boolean; multiple: boolean }) => Promise<string[] | null>;
export const PICK_PATHS = Symbol('pickPaths');

export type FormValue = string | number | boolean | null | FormValue[] | { [key: string]: FormValue };

export function initialValue(schema: JsonSchema): FormValue {
  const kind = fieldKind(schema);
  if (schema.default !== undefined && kind !== 'object') return fromParams(schema, structuredClone(schema.default));
  switch (kind) {
    case 'stringList': return [''];
    case 'object': {
      const obj: { [key: string]: FormValue } = {};
      for (const [key, sub] of Object.entries(schema.properties ?? {})) obj[key] = initialValue(sub);
      return obj;
    }
    case 'array': {
      const n = schema.minItems ?? 0;
      return Array.from({ length: Math.min(n, 1) }, () => initialValue(schema.items ?? {}));
    }
    case 'enum': return '';
    case 'boolean': return false;
    case 'integer':
    case 'number': return null;
    case 'string': return '';
    case 'json': return '';
  }
}

export type Errors = Record<string, string>;

const isEmpty = (v: FormValue | undefined) => v === undefined || v === null || v === '';
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function patternError(schema: JsonSchema, s: string): string | null {
  if (typeof schema.pattern !== 'string') return null;
  let re: RegExp;
  try {
    re = new RegExp(schema.pattern, 'u');
  } catch {
    return null; // a pattern this engine cannot read is the backend's to check
  }
  return re.test(s) ? null : `Must match the pattern ${schema.pattern}`;
}

/** Validates `value` against `schema`; error messages keyed by dotted path. */
export function validate(schema: JsonSchema, value: FormValue | undefined, path = '', required = false, errors: Errors = {}): Errors {
  const kind = fieldKind(schema);
  const at = path || '$';
  switch (kind) {
    case 'object': {
      const obj = (value && typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<string, FormValue>;
      const req = new Set(schema.required ?? []);
      for (const [key, sub] of Object.entries(schema.properties ?? {})) {
        validate(sub, obj[key], path ? `${path}.${key}` : key, req.has(key), errors);
      }
      break;
    }
    case 'array': {
      const items = Array.isArray(value) ? value : [];
      if (required && items.length === 0 && !schema.minItems) errors[at] = 'Required';
      else if (schema.minItems !== undefined && items.length < schema.minItems) errors[at] = `Add at least ${plural(schema.minItems, 'item')}`;
      else if (schema.maxItems !== undefined && items.length > schema.maxItems) errors[at] = `At most ${plural(schema.maxItems, 'item')}`;
      items.forEach((item, i) => validate(schema.items ?? {}, item, `${path}.${i}`, true, errors));
      break;
    }
    case 'stringList': {
      const { many, item } = listParts(schema);
      const rows = (Array.isArray(value) ? value : []).map((v) => (v == null ? '' : String(v)));
      const filled = rows.filter((r) => r !== '');
      if (filled.length === 0) {
        if (required) errors[at] = 'Required: add at least one';
      } else if (filled.length > 1 && many?.maxItems !== undefined && filled.length > many.maxItems) {
        errors[at] = `At most ${plural(many.maxItems, 'item')}`;
      }
      rows.forEach((r, i) => {
        if (r === '') return;
        const bad = (item.minLength !== undefined && r.length < item.minLength) ? `At least ${plural(item.minLength, 'character')}`
          : (item.maxLength !== undefined && r.length > item.maxLength) ? `At most ${plural(item.maxLength, 'character')}`
            : patternError(item, r);
        if (bad) errors[`${path}.${i}`] = bad;
      });
      break;
    }
    case 'enum': {
      if (isEmpty(value)) {
        if (required) errors[at] = 'Required';
      } else if (!(schema.enum ?? []).some((e) => String(e) === String(value))) {
        errors[at] = `Choose one of: ${(schema.enum ?? []).map(String).join(', ')}`;
      }
      break;
    }
    case 'integer':
    case 'number': {
      if (isEmpty(value)) {
        if (required) errors[at] = 'Required';
        break;
      }
      const n = typeof value === 'number' ? value : Number(value);
      if (!Number.isFinite(n)) errors[at] = 'Must be a number';
      else if (kind === 'integer' && !Number.isInteger(n)) errors[at] = 'Must be a whole number';
      else if (schema.minimum !== undefined && n < schema.minimum) errors[at] = `Must be at least ${schema.minimum}`;
      else if (schema.maximum !== undefined && n > schema.maximum) errors[at] = `Must be at most ${schema.maximum}`;
      break;
    }
    case 'string': {
      const s = typeof value === 'string' ? value : value == null ? '' : String(value);
      if (s === '') {
        // A required string is present even when empty ("" is valid JSON Schema);
        // only minLength makes it non-empty.
        if (required && (schema.minLength ?? 0) > 0) errors[at] = 'Required';
        break;
      }
      if (schema.minLength !== undefined && s.length < schema.minLength) errors[at] = `At least ${plural(schema.minLength, 'character')}`;
      else if (schema.maxLength !== undefined && s.length > schema.maxLength) errors[at] = `At most ${plural(schema.maxLength, 'character')}`;
      else {
        const bad = patternError(schema, s);
        if (bad) errors[at] = bad;
      }
      break;
    }
    case 'json': {
      if (isEmpty(value)) {
        if (required) errors[at] = 'Required';
        break;
      }
      try {
        JSON.parse(String(value));
      } catch {
        errors[at] = 'Must be valid JSON';
      }
      break;
    }
    case 'boolean':
      break;
  }
  return errors;
}

/** Converts the form value into tool params: optional empty fields are left out. */
export function toParams(schema: JsonSchema, value: FormValue | undefined): unknown {
  const kind = fieldKind(schema);
  switch (kind) {
    case 'object': {
      const obj = (value && typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<string, FormValue>;
      const req = new Set(schema.required ?? []);
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(schema.properties ?? {})) {
        const v = obj[key];
        const subKind = fieldKind(sub);
        if (!req.has(key)) {
          if (isEmpty(v)) continue;
          if (subKind === 'array' && Array.isArray(v) && v.length === 0) continue;
          if (subKind === 'stringList' && Array.isArray(v) && v.every((r) => r === '' || r == null)) continue;
          if (subKind === 'boolean' && v === false && sub.default === undefined) continue;
        }
        out[key] = toParams(sub, v);
      }
      return out;
    }
    case 'array':
      return (Array.isArray(value) ? value : []).map((item) => toParams(schema.items ?? {}, item));
    case 'stringList': {
      // What the tool takes: a string for one row (when it accepts one), a list otherwise.
      const rows = (Array.isArray(value) ? value : [value]).map((v) => (v == null ? '' : String(v))).filter((r) => r !== '');
      return rows.length === 1 && listParts(schema).one ? rows[0] : rows;
    }
    case 'integer':
    case 'number':
      return isEmpty(value) ? null : Number(value);
    case 'json':
      return isEmpty(value) ? null : JSON.parse(String(value));
    case 'enum': {
      const match = (schema.enum ?? []).find((e) => String(e) === String(value));
      return match ?? value;
    }
    default:
      return value;
  }
}

/** Tool params → the form's value for `schema` (the inverse of `toParams`; "Edit as JSON"). */
export function fromParams(schema: JsonSchema, params: unknown): FormValue {
  const kind = fieldKind(schema);
  switch (kind) {
    case 'object': {
      const obj = params && typeof params === 'object' && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
      const out: { [key: string]: FormValue } = {};
      for (const [key, sub] of Object.entries(schema.properties ?? {})) {
        out[key] = key in obj ? fromParams(sub, obj[key]) : initialValue(sub);
      }
      return out;
    }
    case 'array':
      return Array.isArray(params) ? params.map((p) => fromParams(schema.items ?? {}, p)) : [];
    case 'stringList': {
      const rows = Array.isArray(params) ? params.map((p) => (p == null ? '' : String(p))) : params == null ? [] : [String(params)];
      return rows.length === 0 ? [''] : rows;
    }
    case 'enum':
      return params == null ? '' : String(params);
    case 'boolean':
      return params === true;
    case 'integer':
    case 'number':
      return typeof params === 'number' ? params : params == null || params === '' ? null : Number(params);
    case 'string':
      return params == null ? '' : String(params);
    case 'json':
      return params === undefined || params === null ? '' : JSON.stringify(params);
  }
}
