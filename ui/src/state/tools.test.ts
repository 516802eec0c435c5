// Which action a tool run pushed: read from the result's details as the tools write them.
import { describe, expect, it } from 'vitest';
import { pushedId } from './tools.svelte';

describe('pushedId', () => {
  const out = (details: unknown) => ({ callId: 'call-1', isError: false, text: 'AST Edit preview', details });

  it('reads `action_id`, the key ast_edit and batch_rename_preview put in their details', () => {
    expect(pushedId(out({ summary: { replacements: 5000 }, files: [], action_id: 'pa-7' }))).toBe('pa-7');
  });

  it('is null when the details name no action (no replacements, an error, no details)', () => {
    expect(pushedId(out({ summary: { replacements: 0 }, files: [] }))).toBeNull();
    expect(pushedId(out({ action_id: 7 }))).toBeNull();
    expect(pushedId(out(null))).toBeNull();
  });
});
