import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/svelte';
import DetailsView from './DetailsView.svelte';

describe('DetailsView', () => {
  it('shows an object as key → value rows, and a list of objects as a table with a column per key', () => {
    render(DetailsView, {
      value: {
        find: 'hello',
        occurrences: 3,
        files: [
          { path: 'a.txt', occurrences: 2 },
          { path: 'src/b.txt', occurrences: 1, note: 'generated' },
        ],
      },
    });
    const top = screen.getByTestId('details');
    const keys = Array.from(top.querySelectorAll(':scope > tbody > tr > th')).map((th) => th.textContent);
    expect(keys).toEqual(['find', 'occurrences', 'files']);
    const table = screen.getByTestId('details-table');
    expect(Array.from(table.querySelectorAll('thead th')).map((th) => th.textContent)).toEqual(['path', 'occurrences', 'note']);
    const cells = Array.from(table.querySelectorAll(':scope > tbody > tr')).map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent));
    expect(cells).toEqual([
      ['a.txt', '2', '—'],
      ['src/b.txt', '1', 'generated'],
    ]);
  });

  it('lists plain values, marks an empty list, and cuts deep nesting to JSON', () => {
    render(DetailsView, { value: { patterns: ['*.pyc', '*~'], none: [], deep: { a: { b: { c: { d: 1 } } } } } });
    const top = screen.getByTestId('details');
    const items = Array.from(top.querySelectorAll('.details-list li')).map((li) => li.textContent);
    expect(items).toEqual(['*.pyc', '*~']);
    expect(within(top).getByText('(empty)')).toBeTruthy();
    expect(within(top).getByText('{"d":1}')).toBeTruthy();
  });

  it('says how many rows are not shown past 200', () => {
    render(DetailsView, { value: Array.from({ length: 205 }, (_, i) => ({ n: i })) });
    expect(screen.getByTestId('details-table').querySelectorAll('tbody tr').length).toBe(200);
    expect(screen.getByText('and 5 more')).toBeTruthy();
  });
});
