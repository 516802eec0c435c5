// A form model generated from a tool's JSON Schema: initial values, inline
// validation (required, type, enum, minLength/maxLength, minimum/maximum,
// minItems/maxItems) and conversion of the form value into tool params.

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
};

export type FieldKind = 'object' | 'array' | 'enum' | 'boolean' | 'integer' | 'number' | 'string' | 'json';

export function asSchema(value: unknown): JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonSchema) : {};
}

function primaryType(schema: JsonSchema): string | undefined {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null');
  return schema.type;
}

export function fieldKind(schema: JsonSchema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return 'enum';
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

export type FormValue = string | number | boolean | null | FormValue[] | { [key: string]: FormValue };

export function initialValue(schema: JsonSchema): FormValue {
  const kind = fieldKind(schema);
  if (schema.default !== undefined && kind !== 'json' && kind !== 'object') return structuredClone(schema.default) as FormValue;
  switch (kind) {
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
          if (subKind === 'boolean' && v === false && sub.default === undefined) continue;
        }
        out[key] = toParams(sub, v);
      }
      return out;
    }
    case 'array':
      return (Array.isArray(value) ? value : []).map((item) => toParams(schema.items ?? {}, item));
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
