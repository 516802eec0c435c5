// Keyboard shortcuts of the main window. None fires while the person types.
export type ShortcutAction = 'apply' | 'discard' | 'nextFile' | 'prevFile' | 'focusReason' | 'toggleMode' | 'help' | 'escape' | 'goTop';

export const SHORTCUTS: ReadonlyArray<{ key: string; action: ShortcutAction; description: string }> = [
  { key: 'a', action: 'apply', description: 'Apply the top action (focuses the reason if it is empty)' },
  { key: 'd', action: 'discard', description: 'Discard the top action (focuses the reason if it is empty)' },
  { key: 'j', action: 'nextFile', description: 'Next file' },
  { key: 'k', action: 'prevFile', description: 'Previous file' },
  { key: 'r', action: 'focusReason', description: 'Focus the reason' },
  { key: 'm', action: 'toggleMode', description: 'Switch diff mode (unified / side by side)' },
  { key: '?', action: 'help', description: 'Show this help' },
  { key: 'Escape', action: 'escape', description: 'Close dialogs and overlays' },
  { key: 't', action: 'goTop', description: 'Go to the top action (e.g. after "A new action is on top")' },
];

/** True when keys typed at `target` are text, not commands. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') {
    const type = (target as HTMLInputElement).type;
    return !['button', 'submit', 'reset', 'checkbox', 'radio', 'range', 'color', 'file'].includes(type);
  }
  return false;
}

export function shortcutFor(event: KeyboardEvent): ShortcutAction | null {
  if (event.key === 'Escape') return 'escape';
  if (event.ctrlKey || event.metaKey || event.altKey) return null;
  if (isTypingTarget(event.target)) return null;
  const hit = SHORTCUTS.find((s) => s.key === event.key);
  return hit ? hit.action : null;
}
