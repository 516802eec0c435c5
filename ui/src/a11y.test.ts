// Accessibility: arrow keys in the lists and the Recent menu, native modal <dialog>s that
// close on Escape and give the focus back to their opener. (Focus during a resolve and the
// live region are in decisions.test.ts.)
import { describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from './App.svelte';
import { FakeBackend } from './test/fakeBackend';
import { reviewScenario } from './test/scenarios';
import { listKeyTarget } from './lib/listKeys';

async function setup() {
  const backend = new FakeBackend({ latencyMs: 0, scenario: reviewScenario() });
  const user = userEvent.setup();
  render(App, { backend });
  await waitFor(() => expect(screen.getAllByTestId('queue-card').length).toBe(4));
  await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBeGreaterThan(0));
  return { backend, user };
}

describe('listKeyTarget', () => {
  it('moves Up/Down one step without wrapping, Home/End to the ends, and ignores other keys', () => {
    expect(listKeyTarget('ArrowDown', 0, 3)).toBe(1);
    expect(listKeyTarget('ArrowDown', 2, 3)).toBe(2);
    expect(listKeyTarget('ArrowUp', 0, 3)).toBe(0);
    expect(listKeyTarget('ArrowUp', -1, 3)).toBe(0);
    expect(listKeyTarget('End', 0, 3)).toBe(2);
    expect(listKeyTarget('Home', 2, 3)).toBe(0);
    expect(listKeyTarget('x', 1, 3)).toBeNull();
    expect(listKeyTarget('ArrowDown', 0, 0)).toBeNull();
  });
});

describe('arrow keys in lists', () => {
  it('the queue: one tab stop; Up/Down/Home/End move the focus and the selection', async () => {
    const { user } = await setup();
    const cards = () => screen.getAllByTestId('queue-card');
    expect(cards().map((c) => c.tabIndex)).toEqual([0, -1, -1, -1]);
    cards()[0]!.focus();
    await user.keyboard('{ArrowDown}');
    expect(cards()[1]).toHaveFocus();
    expect(cards()[1]).toHaveAttribute('aria-current', 'true');
    expect(cards().map((c) => c.tabIndex)).toEqual([-1, 0, -1, -1]);
    await user.keyboard('{End}');
    expect(cards()[3]).toHaveFocus();
    expect(cards()[3]).toHaveAttribute('aria-current', 'true');
    await user.keyboard('{ArrowDown}');
    expect(cards()[3], 'no wrap-around').toHaveFocus();
    await user.keyboard('{Home}');
    expect(cards()[0]).toHaveFocus();
    expect(cards()[0]).toHaveAttribute('aria-current', 'true');
  });

  it('the file list: one tab stop with aria-activedescendant; Up/Down/Home/End select files', async () => {
    const { user } = await setup();
    const list = screen.getByTestId('file-list');
    expect(list).toHaveAttribute('tabindex', '0');
    const selectedRow = () => screen.getAllByTestId('file-row').find((r) => r.getAttribute('aria-selected') === 'true')!;
    expect(list.getAttribute('aria-activedescendant')).toBe(selectedRow().id);
    list.focus();
    await user.keyboard('{ArrowDown}');
    await waitFor(() => expect(screen.getByTestId('diff-path')).toHaveTextContent('src/util/format.ts'));
    expect(selectedRow().dataset.path).toBe('src/util/format.ts');
    expect(list.getAttribute('aria-activedescendant')).toBe(selectedRow().id);
    expect(list).toHaveFocus();
    await user.keyboard('{Home}');
    await waitFor(() => expect(screen.getByTestId('diff-path')).toHaveTextContent('src/api/client.ts'));
    await user.keyboard('{End}');
    await waitFor(() => expect(screen.getByTestId('diff-path')).toHaveTextContent('src/util/format.ts'));
  });

  it('the history list: one tab stop; Up/Down/Home/End move between entries', async () => {
    const { user } = await setup();
    await user.click(screen.getByTestId('history-button'));
    await waitFor(() => expect(screen.getAllByTestId('history-entry')).toHaveLength(3));
    const entries = () => screen.getAllByTestId('history-entry');
    expect(entries().map((e) => e.tabIndex)).toEqual([0, -1, -1]);
    entries()[0]!.focus();
    await user.keyboard('{ArrowDown}');
    await waitFor(() => expect(entries()[1]).toHaveFocus());
    await user.keyboard('{End}');
    await waitFor(() => expect(entries()[2]).toHaveFocus());
    await user.keyboard('{ArrowUp}');
    await waitFor(() => expect(entries()[1]).toHaveFocus());
    await user.keyboard('{Home}');
    await waitFor(() => expect(entries()[0]).toHaveFocus());
    expect(entries().map((e) => e.tabIndex)).toEqual([0, -1, -1]);
  });
});

describe('the Recent workspaces menu', () => {
  it('opens on its first item; Up/Down/Home/End move; Escape closes and returns the focus to the button', async () => {
    const { user } = await setup();
    const button = screen.getByTestId('recent-button');
    await user.click(button);
    const items = () => screen.getAllByTestId('recent-item');
    expect(items()).toHaveLength(3);
    expect(items()[0]).toHaveFocus();
    await user.keyboard('{ArrowDown}');
    expect(items()[1]).toHaveFocus();
    await user.keyboard('{End}');
    expect(items()[2]).toHaveFocus();
    await user.keyboard('{ArrowDown}');
    expect(items()[2]).toHaveFocus();
    await user.keyboard('{Home}');
    expect(items()[0]).toHaveFocus();
    await user.keyboard('{ArrowUp}');
    expect(items()[0]).toHaveFocus();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('menu')).toBeNull();
    expect(button).toHaveFocus();
    // From the closed button, Up opens it on the last item.
    await user.keyboard('{ArrowUp}');
    expect(items()[2]).toHaveFocus();
  });
});

describe('modals are native <dialog>s', () => {
  it('open with showModal, close on Escape, and give the focus back to the opener', async () => {
    const { user } = await setup();
    const showModal = vi.spyOn(HTMLDialogElement.prototype, 'showModal');
    for (const [button, dialogId] of [['help-button', 'help-dialog'], ['run-tool-button', 'run-tool-dialog'], ['history-button', 'history-dialog'], ['run-script-button', 'run-script-dialog']] as const) {
      const opener = screen.getByTestId(button);
      await user.click(opener);
      const dialog = await screen.findByTestId(dialogId);
      expect(dialog.tagName).toBe('DIALOG');
      expect((dialog as HTMLDialogElement).open).toBe(true);
      expect(showModal.mock.contexts.at(-1)).toBe(dialog);
      expect(dialog).toHaveAccessibleName();
      expect(dialog.contains(document.activeElement), `${dialogId} holds the focus`).toBe(true);
      await user.keyboard('{Escape}');
      await waitFor(() => expect(screen.queryByTestId(dialogId)).toBeNull());
      expect(opener, `focus back on ${button}`).toHaveFocus();
    }
    showModal.mockRestore();
  });

  it('the leave question is a native dialog too; its close button answers Cancel', async () => {
    const { backend, user } = await setup();
    const confirm = vi.spyOn(backend, 'confirmClose');
    backend.requestClose();
    const modal = await screen.findByTestId('leave-modal');
    expect(modal.tagName).toBe('DIALOG');
    await user.click(within(modal).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(confirm).toHaveBeenCalledWith(false));
    expect(screen.queryByTestId('leave-modal')).toBeNull();
  });
});
