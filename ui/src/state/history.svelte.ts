// The History dialog: a search over the workspace's whole history (text, tool, outcome,
// dates), read in pages as the list scrolls, and exported as JSON or CSV. Filtering and
// paging are the backend's (SQLite); this only keeps what is on screen.
import type { Backend, ExportFormat, HistoryEntry, HistoryOutcome, HistoryQuery } from '../ipc/backend';
import { message } from './review.svelte';

/** Entries per read. */
export const PAGE = 100;

/** `yyyy-mm-dd` (a date input's value) → local midnight in unix ms; '' → null. */
export function dayStart(day: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(y, m - 1, d).getTime();
}

export class HistorySearch {
  text = $state('');
  tool = $state('');
  outcome: HistoryOutcome | '' = $state('');
  /** Date inputs' values (`yyyy-mm-dd`), inclusive. */
  from = $state('');
  to = $state('');

  /** Every match, by index; `undefined` where the page is not read yet. */
  entries: (HistoryEntry | undefined)[] = $state([]);
  total = $state(0);
  tools: string[] = $state([]);
  loading = $state(false);
  error: string | null = $state(null);
  exportNote: { text: string; isError: boolean } | null = $state(null);
  exporting = $state(false);

  /** Bumped by each new search: pages of an older one are dropped. */
  private generation = 0;
  private inFlight = new Set<number>();

  constructor(private readonly backend: Backend) {}

  query(): HistoryQuery {
    const to = dayStart(this.to);
    return {
      text: this.text,
      tool: this.tool || null,
      outcome: this.outcome || null,
      fromMs: dayStart(this.from),
      // Inclusive: up to the end of that day.
      toMs: to === null ? null : to + 24 * 3600 * 1000,
    };
  }

  get filtered(): boolean {
    return this.text.trim() !== '' || this.tool !== '' || this.outcome !== '' || this.from !== '' || this.to !== '';
  }

  /** Runs the search again from the first page (filters changed, or the history did). */
  async reload() {
    const generation = ++this.generation;
    this.inFlight.clear();
    this.loading = true;
    try {
      const page = await this.backend.searchHistory(this.query(), 0, PAGE);
      if (generation !== this.generation) return;
      const entries: (HistoryEntry | undefined)[] = new Array(page.total);
      page.entries.forEach((e, i) => { entries[i] = e; });
      this.entries = entries;
      this.total = page.total;
      this.tools = page.tools;
      this.error = null;
    } catch (err) {
      if (generation === this.generation) this.error = `Could not read the history: ${message(err)}`;
    } finally {
      if (generation === this.generation) this.loading = false;
    }
  }

  /** Reads the page holding `index` if it is not on hand (the list scrolled to it). */
  async ensure(index: number) {
    if (index < 0 || index >= this.total || this.entries[index] !== undefined) return;
    const offset = Math.floor(index / PAGE) * PAGE;
    if (this.inFlight.has(offset)) return;
    const generation = this.generation;
    this.inFlight.add(offset);
    try {
      const page = await this.backend.searchHistory(this.query(), offset, PAGE);
      if (generation !== this.generation) return;
      const entries = [...this.entries];
      page.entries.forEach((e, i) => { entries[offset + i] = e; });
      this.entries = entries;
    } catch (err) {
      if (generation === this.generation) this.error = `Could not read the history: ${message(err)}`;
    } finally {
      this.inFlight.delete(offset);
    }
  }

  clearFilters() {
    this.text = '';
    this.tool = '';
    this.outcome = '';
    this.from = '';
    this.to = '';
    return this.reload();
  }

  /** Asks where to save, then writes every match there. */
  async exportAs(format: ExportFormat) {
    if (this.exporting) return;
    this.exporting = true;
    this.exportNote = null;
    try {
      const stamp = new Date().toISOString().slice(0, 10);
      const path = await this.backend.pickSaveFile(`resolve-desk-history-${stamp}.${format}`, format);
      if (!path) return;
      const out = await this.backend.exportHistory(this.query(), format, path);
      this.exportNote = { text: `Exported ${out.count} entr${out.count === 1 ? 'y' : 'ies'} to ${out.path}`, isError: false };
    } catch (err) {
      this.exportNote = { text: `Could not export: ${message(err)}`, isError: true };
    } finally {
      this.exporting = false;
    }
  }
}
