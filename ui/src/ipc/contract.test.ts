// IPC contract tests: the UI renders the same committed JSON fixtures that
// crates/protocol/tests/fixtures.rs round-trips through the Rust types.
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/svelte';
import type {
  FileDiff, HistoryEntry, IpcError, QueueSnapshot, RenameRow, ResolveOutcome, SincePreview, ToolInfo,
} from './backend';
import { toBackendError, type Backend } from './backend';
import { HistorySearch } from '../state/history.svelte';
import QueueColumn from '../components/QueueColumn.svelte';
import DiffView from '../components/DiffView.svelte';
import HistoryPanel from '../components/HistoryPanel.svelte';
import RenameTable from '../components/RenameTable.svelte';
import RunToolDialog from '../components/RunToolDialog.svelte';
import ResultBanner from '../components/ResultBanner.svelte';
import DecisionPanel from '../components/DecisionPanel.svelte';
import FolderTabs from '../components/FolderTabs.svelte';
import InboxPanel from '../components/InboxPanel.svelte';
import type { FolderList, InboxItem } from './backend';

const FIXTURES = resolve(__dirname, '../../../crates/protocol/fixtures');
function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(resolve(FIXTURES, name), 'utf8')) as T;
}
const noop = () => {};

describe('protocol fixtures (shared with crates/protocol)', () => {
  it('the fixture directory is the one the Rust tests read', () => {
    expect(readdirSync(FIXTURES)).toContain('queue_snapshot.json');
  });

  it('renders queue_snapshot.json top first with badges and statuses', () => {
    const q = fixture<QueueSnapshot>('queue_snapshot.json');
    render(QueueColumn, { actions: q.actions, selectedId: q.actions[0]!.id, now: q.actions[0]!.createdAtMs + 120_000, onSelect: noop });
    const cards = screen.getAllByTestId('queue-card');
    expect(cards.map((c) => c.dataset.actionId)).toEqual(q.actions.map((a) => a.id));
    expect(within(cards[0]!).getByTestId('next-badge')).toHaveTextContent('Next to resolve');
    expect(within(cards[0]!).getByTestId('label-badge')).toHaveTextContent('AST Edit');
    expect(within(cards[0]!).getByTestId('queue-card-label')).toHaveTextContent('3 replacements in 2 files');
    expect(within(cards[0]!).getByText('2 min ago')).toBeInTheDocument();
    expect(within(cards[1]!).getByTestId('status-badge')).toHaveTextContent('stale');
    expect(within(cards[2]!).getByTestId('status-error')).toHaveTextContent('Permission denied');
  });

  it('renders queue_snapshot_restored.json with the orphaned action marked and Apply disabled', () => {
    const q = fixture<QueueSnapshot>('queue_snapshot_restored.json');
    render(QueueColumn, { actions: q.actions, selectedId: q.actions[0]!.id, now: q.actions[0]!.createdAtMs, onSelect: noop });
    const cards = screen.getAllByTestId('queue-card');
    expect(within(cards[0]!).getByTestId('status-badge')).toHaveTextContent('orphaned');
    expect(within(cards[0]!).getByTestId('status-orphaned')).toHaveTextContent('Orphaned: can only be discarded');
    expect(within(cards[1]!).queryByTestId('status-badge')).toBeNull();
    render(DecisionPanel, { action: q.actions[0]!, reason: 'cannot run any more', onApply: noop, onDiscard: noop, onRerun: noop, onGoToTop: noop });
    expect(screen.getByTestId('orphaned-message')).toHaveTextContent('Orphaned: can only be discarded');
    expect(screen.getByTestId('apply-button')).toBeDisabled();
    expect(screen.getByTestId('apply-button').title).toContain('can only be discarded');
    expect(screen.getByTestId('discard-button')).toBeEnabled();
  });

  it('renders file_diff.json with line numbers and emphasis', () => {
    const diff = fixture<FileDiff>('file_diff.json');
    render(DiffView, { diff, mode: 'unified', onToggleMode: noop, onExpand: noop });
    const lines = screen.getAllByTestId('diff-line');
    expect(lines).toHaveLength(diff.hunks.reduce((n, h) => n + h.lines.length, 0));
    const marks = screen.getByTestId('diff-view').querySelectorAll('mark.em');
    expect([...marks].map((m) => m.textContent).join('|')).toContain('logger');
  });

  it('renders file_diff_binary.json as its summary', () => {
    const diff = fixture<FileDiff>('file_diff_binary.json');
    render(DiffView, { diff, mode: 'unified', onToggleMode: noop, onExpand: noop });
    expect(screen.getByTestId('diff-summary')).toHaveTextContent(diff.summary!);
  });

  it('renders history.json as Accept / error / Discard', async () => {
    const entries = fixture<HistoryEntry[]>('history.json');
    const search = new HistorySearch({
      searchHistory: async (_q: unknown, offset: number, limit: number) => ({ entries: entries.slice(offset, offset + limit), offset, total: entries.length, tools: [] }),
    } as unknown as Backend);
    await search.reload();
    render(HistoryPanel, { search, now: entries[0]!.atMs });
    const rows = await screen.findAllByTestId('history-entry');
    const headers = screen.getAllByTestId('history-header').map((h) => h.textContent?.replace(/\s+/g, ' ').trim());
    expect(headers[0]).toBe('Accept: 3 replacements in 2 files [AST Edit]');
    expect(headers[1]).toBe('Failed: Changelog entry for 2.4.0 [custom_tool]');
    expect(rows[0]).toHaveTextContent('Looks correct');
    expect(rows[1]!.dataset.kind).toBe('error');
    expect(rows[1]).not.toHaveTextContent('Discard');
    expect(headers[2]).toBe('Discard: 2 files [Batch rename]');
    expect(rows[1]).toHaveTextContent('Permission denied');
    expect(rows[0]!.querySelector('em')).toHaveTextContent('Looks correct');
    // Only the last fixture entry comes from an earlier session (the decision journal).
    expect(screen.getAllByTestId('history-earlier')).toHaveLength(1);
    expect(rows[2]!.querySelector('[data-testid="history-earlier"]')).not.toBeNull();
    const who = screen.getAllByTestId('history-who').map((w) => w.textContent?.replace(/\s+/g, ' ').trim());
    expect(who[0]).toBe('Decided by the person; asked by gpt-4o-mini, which proposed Apply: “Only logging calls change.”');
    expect(who[1]).toBe('Decided by the agent claude-code');
    // Who asked for the change (the client that pushed it), when no proposal says so already.
    expect(who[2]).toBe('Decided by the person; asked by claude-code');
  });

  it('shows the proposal of queue_snapshot.json beside the top action', () => {
    const q = fixture<QueueSnapshot>('queue_snapshot.json');
    render(DecisionPanel, { action: q.actions[0]!, onApply: noop, onDiscard: noop, onRerun: noop, onGoToTop: noop });
    expect(screen.getByTestId('proposal-waiting')).toHaveTextContent('claude-code is waiting for your review.');
    expect(screen.getByTestId('proposal-text').textContent?.replace(/\s+/g, ' ').trim())
      .toBe('claude-code proposes: Apply — “The rewrite only touches logging calls; tests pass.”');
  });

  it('a proposal whose agent stopped waiting stays, saying its decision is kept for it', () => {
    const q = fixture<QueueSnapshot>('queue_snapshot.json');
    const action = { ...q.actions[0]!, proposal: { ...q.actions[0]!.proposal!, waiting: false } };
    render(DecisionPanel, { action, onApply: noop, onDiscard: noop, onRerun: noop, onGoToTop: noop });
    expect(screen.queryByTestId('proposal-waiting')).toBeNull();
    expect(screen.getByTestId('proposal-not-waiting')).toHaveTextContent(
      'claude-code is not waiting right now (its wait ended); your decision is kept for it and given to its next call.',
    );
  });

  it('renders rename_rows.json with each status', () => {
    render(RenameTable, { rows: fixture<RenameRow[]>('rename_rows.json') });
    expect(screen.getAllByTestId('rename-row').map((r) => r.dataset.status)).toEqual(['rename', 'rename', 'unchanged', 'directorySkipped']);
  });

  it('offers only the non-hidden tools of tools.json', () => {
    render(RunToolDialog, { tools: fixture<ToolInfo[]>('tools.json'), onRun: noop });
    const options = [...screen.getByTestId<HTMLSelectElement>('tool-select').options].map((o) => o.value);
    expect(options).toEqual(['ast_edit', 'batch_rename_preview']);
  });

  it('shows resolve_outcome.json text and a stale outcome status', () => {
    const ok = fixture<ResolveOutcome>('resolve_outcome.json');
    render(ResultBanner, { text: ok.text, isError: ok.isError, onDismiss: noop });
    expect(screen.getByTestId('result-banner')).toHaveTextContent('Applied 3 replacements in 2 files.');
    const stale = fixture<ResolveOutcome>('resolve_outcome_stale.json');
    const q = fixture<QueueSnapshot>('queue_snapshot.json');
    render(DecisionPanel, {
      action: { ...q.actions[0]!, status: stale.status! }, onApply: noop, onDiscard: noop, onRerun: noop, onGoToTop: noop,
    });
    expect(screen.getByTestId('stale-files')).toHaveTextContent('src/api/client.ts');
  });

  it('shows since_preview.json in a stale decision panel: what changed since the preview', () => {
    const since = fixture<SincePreview>('since_preview.json');
    const stale = fixture<ResolveOutcome>('resolve_outcome_stale.json');
    const q = fixture<QueueSnapshot>('queue_snapshot.json');
    render(DecisionPanel, {
      action: { ...q.actions[0]!, status: stale.status! }, onApply: noop, onDiscard: noop, onRerun: noop, onGoToTop: noop,
      since: { items: [since], loading: false, error: null },
    });
    expect(screen.getByTestId('since-file')).toHaveTextContent('src/api/client.ts — content changed');
    expect(screen.getByTestId('since-lines')).toHaveTextContent('// retried by the gateway');
  });

  it('maps ipc_error.json onto a BackendError with its code', () => {
    const raw = fixture<IpcError>('ipc_error.json');
    const err = toBackendError(raw);
    expect(err.code).toBe('idMismatch');
    expect(err.message).toBe(raw.message);
  });

  it('renders folder_list.json as tabs: name, path, pending count, the waiting mark, the one shown', () => {
    const list = fixture<FolderList>('folder_list.json');
    render(FolderTabs, { folders: list.folders, onSelect: noop, onClose: noop });
    const tabs = screen.getAllByTestId('folder-tab');
    expect(tabs.map((t) => t.dataset.root)).toEqual(list.folders.map((f) => f.root));
    expect(within(tabs[0]!).getByTestId('folder-name')).toHaveTextContent('shop-frontend');
    expect(within(tabs[0]!).getByTestId('folder-path')).toHaveTextContent('/home/ana/src/shop-frontend');
    expect(within(tabs[0]!).getByTestId('folder-pending')).toHaveTextContent('3');
    expect(within(tabs[0]!).getByTestId('folder-waiting')).toBeInTheDocument();
    expect(within(tabs[1]!).queryByTestId('folder-waiting')).toBeNull();
    expect(tabs[0]!.dataset.active).toBe('true');
  });

  it('renders inbox.json with each item\'s place in its folder\'s stack', () => {
    const items = fixture<InboxItem[]>('inbox.json');
    render(InboxPanel, { items, now: items[0]!.action.createdAtMs, onOpen: noop });
    const rows = screen.getAllByTestId('inbox-order').map((o) => o.textContent);
    expect(rows[0]).toBe('top of shop-frontend (1 of 3): can be decided now');
    expect(rows[2]).toBe('3 of 3 in shop-frontend: decide the 2 above it first');
    expect(screen.getAllByTestId('inbox-waiting')).toHaveLength(1);
  });
});
