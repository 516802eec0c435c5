// A windowed list (@tanstack/svelte-virtual): only the rows in view (plus overscan) are in the
// DOM. Every long list of the window uses this one set-up: rows measured as they render (long
// lines wrap) from an estimate, and, without layout (jsdom in tests, before the first paint),
// an assumed viewport and the estimate for every row, as a browser would show the first rows.
// Call during component initialisation (it starts an effect that follows `count` and the
// scroll element).
import { untrack } from 'svelte';
import { get } from 'svelte/store';
import { createVirtualizer, observeElementRect, type VirtualizerOptions } from '@tanstack/svelte-virtual';

export type WindowedOptions<S extends Element, I extends Element> = {
  /** The scrolling element (bound with `bind:this`). */
  viewport: () => S | undefined;
  /** The number of rows now. */
  count: () => number;
  /** A row's height before it is measured (px). */
  estimate: number;
  /** Rows of an assumed viewport without layout. */
  rowsWithoutLayout?: number;
} & Partial<Pick<VirtualizerOptions<S, I>, 'overscan' | 'gap' | 'paddingEnd' | 'getItemKey'>>;

export function windowed<S extends Element, I extends Element>(options: WindowedOptions<S, I>) {
  const { viewport, count, estimate, rowsWithoutLayout = 40, ...rest } = options;
  const noLayout = { width: 800, height: rowsWithoutLayout * estimate };
  const virtualizer = createVirtualizer<S, I>({
    count: 0,
    getScrollElement: () => viewport() ?? null,
    estimateSize: () => estimate,
    overscan: 8,
    initialRect: noLayout,
    measureElement: (el) => el.getBoundingClientRect().height || estimate,
    observeElementRect: (instance, cb) => observeElementRect(instance, (rect) => cb(rect.height > 0 ? rect : noLayout)),
    ...rest,
  });
  $effect(() => {
    const n = count();
    const el = viewport();
    untrack(() => get(virtualizer).setOptions({ count: n, getScrollElement: () => el ?? null }));
  });
  return virtualizer;
}
