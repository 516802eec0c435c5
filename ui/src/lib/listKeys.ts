// Arrow keys in lists and menus: where Up/Down/Home/End move from `index` among `count`
// items (no wrap-around), or `null` for any other key. Components apply the move their
// way (roving tabindex, aria-activedescendant, or focus).
export function listKeyTarget(key: string, index: number, count: number): number | null {
  if (count <= 0) return null;
  switch (key) {
    case 'ArrowDown': return index < 0 ? 0 : Math.min(count - 1, index + 1);
    case 'ArrowUp': return index < 0 ? 0 : Math.max(0, index - 1);
    case 'Home': return 0;
    case 'End': return count - 1;
    default: return null;
  }
}

/** A list key with no modifier (Ctrl+Home and the like are left to the browser). */
export function isListKey(e: KeyboardEvent): boolean {
  return !e.ctrlKey && !e.metaKey && !e.altKey && ['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key);
}
