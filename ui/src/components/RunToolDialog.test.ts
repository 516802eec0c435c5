import { describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import RunToolDialog from './RunToolDialog.svelte';
import type { ToolInfo } from '../ipc/backend';
import { derefSchema, fieldKind, fromParams, initialValue, toParams, validate, type JsonSchema } from '../lib/schemaForm';
import { DEMO } from '../test/fakeBackend';

const schema: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 3, description: 'A name' },
    mode: { type: 'string', enum: ['fast', 'safe'] },
    count: { type: 'integer', minimum: 1 },
    dry: { type: 'boolean' },
    tags: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
    target: {
      type: 'object',
      properties: { dir: { type: 'string', minLength: 1 }, depth: { type: 'integer' } },
      required: ['dir'],
    },
  },
  required: ['name', 'mode', 'tags', 'target'],
};
const tools: ToolInfo[] = [
  { name: 'demo', label: 'Demo', description: 'Form test', parameters: schema, hidden: false },
  { name: 'secret', label: 'Secret', description: 'hidden', parameters: { type: 'object' }, hidden: true },
];

describe('schema form model', () => {
  it('validates required, minLength, enum, integer, minimum, minItems and nested objects', () => {
    const v = initialValue(schema);
    const errors = validate(schema, v);
    expect(errors).toMatchObject({ name: 'Required', mode: 'Required', 'target.dir': 'Required' });
    expect(errors.tags ?? errors['tags.0']).toBeDefined();
    const filled = { name: 'ab', mode: 'slow', count: 2.5, dry: false, tags: [], target: { dir: 'src', depth: null } };
    const e2 = validate(schema, filled);
    expect(e2.name).toBe('At least 3 characters');
    expect(e2.mode).toBe('Choose one of: fast, safe');
    expect(e2.count).toBe('Must be a whole number');
    expect(e2.tags).toBe('Add at least 1 item');
    expect(validate(schema, { ...filled, count: 0 }).count).toBe('Must be at least 1');
  });

  it('drops empty optional fields from the params', () => {
    const params = toParams(schema, { name: 'abc', mode: 'fast', count: null, dry: false, tags: ['x'], target: { dir: 'src', depth: null } });
    expect(params).toEqual({ name: 'abc', mode: 'fast', tags: ['x'], target: { dir: 'src' } });
  });
});

describe('RunToolDialog', () => {
  it('generates fields from the schema and hides hidden tools', () => {
    render(RunToolDialog, { tools, onRun: () => {} });
    expect([...screen.getByTestId<HTMLSelectElement>('tool-select').options].map((o) => o.value)).toEqual(['demo']);
    expect(screen.getByTestId('field-name').dataset.kind).toBe('string');
    expect(screen.getByTestId('field-mode').querySelector('select')).not.toBeNull();
    expect(screen.getByTestId('field-count').querySelector('input[type="number"]')).not.toBeNull();
    expect(screen.getByTestId('field-dry').querySelector('input[type="checkbox"]')).not.toBeNull();
    expect(screen.getByTestId('field-tags').dataset.kind).toBe('array');
    expect(screen.getByTestId('field-target').dataset.kind).toBe('object');
    expect(screen.getByTestId('field-target.dir')).toBeInTheDocument();
    expect(screen.getByTestId('field-name')).toHaveTextContent('(required)');
  });

  it('shows inline errors on submit and does not run until they are fixed', async () => {
    const user = userEvent.setup();
    const onRun = vi.fn();
    render(RunToolDialog, { tools, onRun });
    await user.click(screen.getByTestId('tool-run'));
    expect(onRun).not.toHaveBeenCalled();
    expect(within(screen.getByTestId('field-name')).getByTestId('field-error')).toHaveTextContent('Required');
    expect(within(screen.getByTestId('field-mode')).getByTestId('field-error')).toHaveTextContent('Required');
    expect(within(screen.getByTestId('field-target.dir')).getByTestId('field-error')).toHaveTextContent('Required');

    await user.type(within(screen.getByTestId('field-name')).getByRole('textbox'), 'release');
    await user.selectOptions(within(screen.getByTestId('field-mode')).getByRole('combobox'), 'safe');
    await user.type(within(screen.getByTestId('field-count')).getByRole('spinbutton'), '2.5');
    expect(within(screen.getByTestId('field-count')).getByTestId('field-error')).toHaveTextContent('Must be a whole number');
    await user.clear(within(screen.getByTestId('field-count')).getByRole('spinbutton'));
    await user.type(within(screen.getByTestId('field-count')).getByRole('spinbutton'), '3');

    // array add / remove
    await user.click(within(screen.getByTestId('field-tags')).getByTestId('array-add'));
    await user.click(within(screen.getByTestId('field-tags')).getByTestId('array-add'));
    expect(within(screen.getByTestId('field-tags')).getAllByTestId('array-item')).toHaveLength(3);
    await user.click(within(screen.getByTestId('field-tags')).getAllByTestId('array-remove')[2]!);
    await user.click(within(screen.getByTestId('field-tags')).getAllByTestId('array-remove')[1]!);
    expect(within(screen.getByTestId('field-tags')).getAllByTestId('array-item')).toHaveLength(1);
    await user.type(within(screen.getByTestId('field-tags.0')).getByRole('textbox'), 'v2');
    await user.type(within(screen.getByTestId('field-target.dir')).getByRole('textbox'), 'src');

    await user.click(screen.getByTestId('tool-run'));
    expect(onRun).toHaveBeenCalledWith('demo', { name: 'release', mode: 'safe', count: 3, tags: ['v2'], target: { dir: 'src' } });
  });
});

describe('forms a person can fill', () => {
  const demoTools = DEMO.tools;
  const rename = () => screen.getByTestId('field-files');

  async function renameForm(onRun = vi.fn(), onPickPaths?: (o: { directory: boolean; multiple: boolean }) => Promise<string[] | null>) {
    const user = userEvent.setup();
    render(RunToolDialog, { tools: demoTools, onRun, onPickPaths });
    await user.selectOptions(screen.getByTestId('tool-select'), 'batch_rename_preview');
    await user.type(within(screen.getByTestId('field-find')).getByRole('textbox'), '^IMG_');
    await user.type(within(screen.getByTestId('field-replace')).getByRole('textbox'), 'photo_');
    return { user, onRun };
  }

  it("batch_rename_preview's files (one string or a list) is a list of text rows: one row sends a string, several a list", async () => {
    const { user, onRun } = await renameForm();
    expect(rename().dataset.kind).toBe('stringList');
    expect(within(rename()).getAllByTestId('list-input')).toHaveLength(1);
    expect(screen.queryByRole('textbox', { name: /JSON/ })).toBeNull();
    await user.click(screen.getByTestId('tool-run'));
    expect(onRun, 'files is required').not.toHaveBeenCalled();
    expect(within(rename()).getByTestId('field-error')).toHaveTextContent('Required: add at least one');

    await user.type(within(rename()).getByTestId('list-input'), 'photos/*.JPG');
    await user.click(screen.getByTestId('tool-run'));
    expect(onRun).toHaveBeenLastCalledWith('batch_rename_preview', { files: 'photos/*.JPG', find: '^IMG_', replace: 'photo_' });

    await user.click(within(rename()).getByTestId('list-add'));
    await user.type(within(rename()).getAllByTestId('list-input')[1]!, 'scans/*.JPG');
    await user.click(screen.getByTestId('tool-run'));
    expect(onRun).toHaveBeenLastCalledWith('batch_rename_preview', { files: ['photos/*.JPG', 'scans/*.JPG'], find: '^IMG_', replace: 'photo_' });

    await user.click(within(rename()).getAllByTestId('list-remove')[0]!);
    expect(within(rename()).getAllByTestId('list-input').map((i) => (i as HTMLInputElement).value)).toEqual(['scans/*.JPG']);
  });

  it('"Browse files…" and "Browse folders…" insert the picked workspace-relative paths', async () => {
    const pick = vi.fn(async (o: { directory: boolean; multiple: boolean }) => (o.directory ? ['photos'] : ['photos/IMG_0001.JPG', 'photos/IMG_0002.JPG']));
    const { user, onRun } = await renameForm(vi.fn(), pick);
    await user.click(within(rename()).getByTestId('browse-files'));
    expect(pick).toHaveBeenLastCalledWith({ directory: false, multiple: true });
    await waitFor(() => expect(within(rename()).getAllByTestId('list-input').map((i) => (i as HTMLInputElement).value))
      .toEqual(['photos/IMG_0001.JPG', 'photos/IMG_0002.JPG']));
    await user.click(within(rename()).getByTestId('browse-folders'));
    expect(pick).toHaveBeenLastCalledWith({ directory: true, multiple: true });
    await user.click(within(rename()).getByTestId('browse-files'));
    await waitFor(() => expect(within(rename()).getAllByTestId('list-input').map((i) => (i as HTMLInputElement).value))
      .toEqual(['photos/IMG_0001.JPG', 'photos/IMG_0002.JPG', 'photos']));
    await user.click(screen.getByTestId('tool-run'));
    expect(onRun).toHaveBeenLastCalledWith('batch_rename_preview', { files: ['photos/IMG_0001.JPG', 'photos/IMG_0002.JPG', 'photos'], find: '^IMG_', replace: 'photo_' });
  });

  it('supports enum (a select), default (prefilled), pattern (named in the message) and local $ref with a cycle guard', async () => {
    const user = userEvent.setup();
    const onRun = vi.fn();
    const refSchema: JsonSchema = {
      type: 'object',
      $defs: {
        Mode: { type: 'string', enum: ['fast', 'safe'], default: 'safe' },
        Node: { type: 'object', properties: { name: { type: 'string' }, child: { $ref: '#/$defs/Node' } } },
      },
      definitions: { Slug: { type: 'string', pattern: '^[a-z-]+$', description: 'Lower case' } },
      properties: {
        mode: { $ref: '#/$defs/Mode' },
        slug: { $ref: '#/definitions/Slug' },
        depth: { type: 'integer', default: 3 },
        tree: { $ref: '#/$defs/Node' },
      },
      required: ['mode', 'slug'],
    };
    render(RunToolDialog, { tools: [{ name: 'refs', label: 'Refs', description: '', parameters: refSchema, hidden: false }], onRun });
    const mode = within(screen.getByTestId('field-mode')).getByRole('combobox');
    expect(mode).toHaveValue('safe');
    expect([...(mode as HTMLSelectElement).options].map((o) => o.value)).toEqual(['', 'fast', 'safe']);
    expect(within(screen.getByTestId('field-depth')).getByRole('spinbutton')).toHaveValue(3);
    expect(screen.getByTestId('field-tree').dataset.kind).toBe('object');
    expect(screen.getByTestId('field-tree.child').dataset.kind, 'the recursion stops in a JSON box').toBe('json');
    expect(screen.getByTestId('field-tree.child')).toHaveTextContent('recursive #/$defs/Node');

    await user.type(within(screen.getByTestId('field-slug')).getByRole('textbox'), 'Not A Slug');
    await user.click(screen.getByTestId('tool-run'));
    expect(within(screen.getByTestId('field-slug')).getByTestId('field-error')).toHaveTextContent('Must match the pattern ^[a-z-]+$');
    expect(onRun).not.toHaveBeenCalled();
    await user.clear(within(screen.getByTestId('field-slug')).getByRole('textbox'));
    await user.type(within(screen.getByTestId('field-slug')).getByRole('textbox'), 'a-slug');
    await user.click(screen.getByTestId('tool-run'));
    expect(onRun).toHaveBeenCalledWith('refs', { mode: 'safe', slug: 'a-slug', depth: 3, tree: {} });
  });

  it('keeps the JSON box behind "Edit as JSON", which round-trips with the form', async () => {
    const { user, onRun } = await renameForm();
    await user.type(within(rename()).getByTestId('list-input'), 'photos/*.JPG');
    await user.click(screen.getByTestId('edit-as-json'));
    const box = screen.getByTestId('params-json');
    expect(JSON.parse((box as HTMLTextAreaElement).value)).toEqual({ files: 'photos/*.JPG', find: '^IMG_', replace: 'photo_' });
    expect(screen.queryByTestId('field-files'), 'the form is replaced by the box').toBeNull();

    await user.clear(box);
    await user.click(box);
    await user.paste('{"files": ["a.JPG", "b.JPG"], "find": "JPG$"');
    expect(screen.getByTestId('params-json-error')).toHaveTextContent('Not valid JSON');
    expect(screen.getByTestId('edit-as-json'), 'cannot leave with text that is not JSON').toBeDisabled();
    await user.click(screen.getByTestId('tool-run'));
    expect(onRun).not.toHaveBeenCalled();
    await user.click(box);
    await user.keyboard('{Control>}{End}{/Control}');
    await user.paste(', "replace": "jpg"}');
    expect(screen.queryByTestId('params-json-error')).toBeNull();
    await user.click(screen.getByTestId('tool-run'));
    expect(onRun).toHaveBeenLastCalledWith('batch_rename_preview', { files: ['a.JPG', 'b.JPG'], find: 'JPG$', replace: 'jpg' });

    await user.click(screen.getByTestId('edit-as-json'));
    expect(within(rename()).getAllByTestId('list-input').map((i) => (i as HTMLInputElement).value)).toEqual(['a.JPG', 'b.JPG']);
    expect(within(screen.getByTestId('field-find')).getByRole('textbox')).toHaveValue('JPG$');
    expect(within(screen.getByTestId('field-replace')).getByRole('textbox')).toHaveValue('jpg');
  });
});

describe('schema form model: string or list, $ref, pattern', () => {
  const files: JsonSchema = {
    anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', items: { type: 'string', minLength: 1, pattern: '^[^/]' }, minItems: 1 }],
  };
  it('sends what the schema takes: a string for one, a list for several, a list when only a list is accepted', () => {
    expect(toParams(files, ['a'])).toBe('a');
    expect(toParams(files, ['a', '', 'b'])).toEqual(['a', 'b']);
    expect(toParams({ oneOf: [{ type: 'array', items: { type: 'string' } }] }, ['a'])).toEqual(['a']);
    expect(fromParams(files, 'a')).toEqual(['a']);
    expect(fromParams(files, ['a', 'b'])).toEqual(['a', 'b']);
  });
  it('checks each row against the item pattern, naming it', () => {
    expect(validate({ type: 'object', properties: { files }, required: ['files'] }, { files: ['ok', '/abs'] })).toEqual({ 'files.1': 'Must match the pattern ^[^/]' });
  });
  it('inlines $ref and stops at a cycle or an unknown reference', () => {
    const s = derefSchema({ $defs: { A: { $ref: '#/$defs/B' }, B: { $ref: '#/$defs/A' } }, properties: { a: { $ref: '#/$defs/A' }, x: { $ref: 'other.json#/x' } } });
    expect(fieldKind(s.properties!.a!)).toBe('json');
    expect(s.properties!.a!.description).toContain('recursive');
    expect(s.properties!.x!.description).toContain('unsupported reference other.json#/x');
  });
});

describe('the tool log', () => {
  it("shows an external tool's log, and says why a built-in tool has none", async () => {
    const { FakeBackend } = await import('../test/fakeBackend');
    const backend = new FakeBackend({ latencyMs: 0 });
    backend.setToolLog('demo', 'replace-text: reading src/a.ts\nwarning: 2 files skipped\n');
    render(RunToolDialog, { tools: [tools[0]!, { ...tools[0]!, name: 'builtin', label: 'Built in' }], onRun: () => {}, onReadLog: (n: string) => backend.readToolLog(n) });
    await userEvent.click(screen.getByTestId('show-tool-log'));
    await waitFor(() => expect(screen.getByTestId('tool-log')).toHaveTextContent('warning: 2 files skipped'));
    await userEvent.selectOptions(screen.getByTestId('tool-select'), 'builtin');
    expect(screen.queryByTestId('tool-log'), 'the log shown is the selected tool\'s').toBeNull();
    await userEvent.click(screen.getByTestId('show-tool-log'));
    await waitFor(() => expect(screen.getByTestId('tool-log')).toHaveTextContent('builtin is not an external tool'));
  });
});
