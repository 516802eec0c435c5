import { describe, expect, it, vi } from 'vitest';
import { render, screen, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import RunToolDialog from './RunToolDialog.svelte';
import type { ToolInfo } from '../ipc/backend';
import { initialValue, toParams, validate, type JsonSchema } from '../lib/schemaForm';

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
