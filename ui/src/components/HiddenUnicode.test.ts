// What a person sees of hidden and look-alike characters: the `*_hidden.json` protocol
// fixtures are what the shell serves for examples/hidden-unicode (a Trojan Source edit and a
// look-alike rename; src-tauri/tests/shell.rs keeps them so). Nothing here decides which
// characters are hidden: the fixtures carry the engine's findings.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import DiffView from './DiffView.svelte';
import FileList from './FileList.svelte';
import RenameTable from './RenameTable.svelte';
import QueueCard from './QueueCard.svelte';
import { FakeBackend } from '../test/fakeBackend';
import { hiddenScenario } from '../test/scenarios';
import type { ActionSummary, FileDiff, FileEntry, RenameRow } from '../ipc/backend';
import QUEUE from '../../../crates/protocol/fixtures/queue_snapshot_hidden.json';
import FILES from '../../../crates/protocol/fixtures/file_entries_hidden.json';
import DIFF from '../../../crates/protocol/fixtures/file_diff_hidden.json';
import RENAMES from '../../../crates/protocol/fixtures/rename_rows_hidden.json';

afterEach(() => cleanup());
const noop = () => {};
const diff = DIFF as FileDiff;
const added = diff.hunks.flatMap((h) => h.lines).find((l) => l.kind === 'added' && l.hidden?.length)!;

describe('hidden and bidirectional characters', () => {
  it('the unified diff shows each hidden character of the Trojan Source line as a chip, never the character', () => {
    render(DiffView, { diff, mode: 'unified', onToggleMode: noop, onExpand: noop });
    const line = screen.getAllByTestId('diff-line').find((l) => l.dataset.kind === 'added' && l.textContent?.includes('user'))!;
    const chips = within(line).getAllByTestId('hidden-char');
    expect(chips.map((c) => c.textContent)).toEqual(added.hidden!.map((h) => h.marker));
    expect(chips[0]!.title).toBe('U+202E RIGHT-TO-LEFT OVERRIDE');
    expect(line.textContent).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    expect(line.textContent).toContain('"user⟨U+202E⟩ ⟨U+2066⟩// Check if admin⟨U+2069⟩ ⟨U+2066⟩"');
  });

  it('the side-by-side diff shows them on the new side', () => {
    render(DiffView, { diff, mode: 'split', onToggleMode: noop, onExpand: noop });
    const sides = screen.getByTestId('diff-table-split').querySelectorAll('[data-side="new"]');
    const withChips = [...sides].filter((s) => s.querySelector('[data-testid="hidden-char"]'));
    expect(withChips).toHaveLength(1);
    expect(withChips[0]!.querySelectorAll('[data-testid="hidden-char"]')).toHaveLength(added.hidden!.length);
    const old = screen.getByTestId('diff-table-split').querySelectorAll('[data-side="old"] [data-testid="hidden-char"]');
    expect(old).toHaveLength(0);
  });

  it('unfolded context lines show the hidden characters the whole text carries', () => {
    // A context line taken from the file's text (unfolding): its findings come from FileTexts.
    const lines = { old: ['a', 'b\u200bc'], new: ['a', 'b\u200bc'], oldHtml: null, newHtml: null,
      oldHidden: new Map([[2, [{ start: 1, end: 2, codePoint: 0x200b, kind: 'invisible' as const, name: 'U+200B ZERO WIDTH SPACE', marker: '⟨U+200B⟩' }]]]) };
    const small: FileDiff = { path: 'x.txt', oldPath: null, language: null, summary: null, added: 1, removed: 0,
      hunks: [{ oldStart: 3, oldLines: 0, newStart: 3, newLines: 1, lines: [{ kind: 'added', oldNo: null, newNo: 3, text: 'd', emphasis: [] }] }] };
    render(DiffView, { diff: small, lines, unfolds: { 0: { top: 0, bottom: 2 } }, mode: 'unified', onToggleMode: noop, onExpand: noop });
    const context = screen.getAllByTestId('diff-line').filter((l) => l.dataset.kind === 'context');
    expect(context.map((l) => l.querySelector('.text')?.textContent)).toEqual(['a', 'b⟨U+200B⟩c']);
  });

  it('the card carries the warning the backend computed', () => {
    const [edit, rename] = (QUEUE as { actions: ActionSummary[] }).actions;
    render(QueueCard, { action: edit!, selected: true, now: edit!.createdAtMs, onSelect: noop });
    expect(screen.getByTestId('hidden-warning')).toHaveTextContent(edit!.hiddenWarning!);
    expect(screen.getByTestId('hidden-warning')).toHaveTextContent('8 in 2 files. They are shown as ⟨U+…⟩.');
    cleanup();
    render(QueueCard, { action: rename!, selected: false, now: rename!.createdAtMs, onSelect: noop });
    expect(screen.getByTestId('hidden-warning')).toHaveTextContent('look like ASCII letters or digits');
  });

  it('a card label with hidden characters shows chips', () => {
    const base = (QUEUE as { actions: ActionSummary[] }).actions[0]!;
    const action: ActionSummary = { ...base, summary: 'fix\u202etxt.exe', summaryHidden: [{ start: 3, end: 4, codePoint: 0x202e, kind: 'bidi', name: 'U+202E RIGHT-TO-LEFT OVERRIDE', marker: '⟨U+202E⟩' }] };
    render(QueueCard, { action, selected: false, now: action.createdAtMs, onSelect: noop });
    expect(screen.getByTestId('queue-card-label')).toHaveTextContent('fix⟨U+202E⟩txt.exe');
  });

  it('the file list marks each file with its count and note', () => {
    const files = FILES as FileEntry[];
    render(FileList, { files, selectedPath: files[0]!.path, onSelect: noop });
    const marks = screen.getAllByTestId('file-hidden');
    expect(marks.map((m) => m.textContent)).toEqual(files.map((f) => `⚠ ${f.hiddenCount}`));
    expect(marks[0]!.title).toBe(files[0]!.hiddenNote);
  });

  it('the rename table outlines the look-alike letter of each new name and names it', () => {
    const rows = RENAMES as RenameRow[];
    render(RenameTable, { rows });
    const chips = screen.getAllByTestId('hidden-char');
    expect(chips).toHaveLength(rows.length);
    expect(chips[0]!.textContent).toBe('\u0435');
    expect(chips[0]!.dataset.kind).toBe('confusable');
    expect(chips[0]!.title).toContain('Cyrillic');
  });

  it('in the app, the top card, the action header and the diff all show it', async () => {
    const backend = new FakeBackend({ latencyMs: 0, scenario: hiddenScenario() });
    render(App, { backend });
    await waitFor(() => expect(screen.getAllByTestId('queue-card')).toHaveLength(2));
    expect(within(screen.getAllByTestId('queue-card')[0]!).getByTestId('hidden-warning')).toHaveTextContent('8 in 2 files');
    await waitFor(() => expect(screen.getByTestId('action-hidden-warning')).toHaveTextContent('hidden or bidirectional Unicode characters'));
    await waitFor(() => expect(within(screen.getByTestId('diff-view')).getAllByTestId('hidden-char').length).toBeGreaterThanOrEqual(4));
    await userEvent.setup().click(screen.getAllByTestId('queue-card')[1]!);
    await waitFor(() => expect(within(screen.getByTestId('rename-table')).getAllByTestId('hidden-char')).toHaveLength(2));
  });
});
