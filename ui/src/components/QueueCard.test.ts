// The card reads the same fixture crates/protocol round-trips through the Rust types.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import QueueCard from './QueueCard.svelte';
import type { ActionSummary, QueueSnapshot } from '../ipc/backend';

const snapshot = JSON.parse(
  readFileSync(resolve(__dirname, '../../../crates/protocol/fixtures/queue_snapshot.json'), 'utf8'),
) as QueueSnapshot;
const [pushedByAgent, pushedByScript] = snapshot.actions as [ActionSummary, ActionSummary, ...ActionSummary[]];

describe('QueueCard', () => {
  it('shows which agent pushed the preview', () => {
    render(QueueCard, { action: pushedByAgent, selected: false, now: pushedByAgent.createdAtMs, onSelect: () => {} });
    expect(screen.getByTestId('pushed-by').textContent).toBe('by claude-code');
  });

  it('shows no agent for an action a person or a script pushed', () => {
    render(QueueCard, { action: pushedByScript, selected: false, now: pushedByScript.createdAtMs, onSelect: () => {} });
    expect(screen.queryByTestId('pushed-by')).toBeNull();
  });
});
