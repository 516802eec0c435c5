// The Run tool dialog's path picker in the window: the backend's `pickPaths` answer goes
// into the form; a refusal (a path outside the workspace) is shown, naming the path.
import { describe, expect, it } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from './App.svelte';
import { FakeBackend } from './test/fakeBackend';
import { BackendError } from './ipc/backend';

describe('Browse… in the Run tool dialog', () => {
  it('inserts what the backend picked and shows a refusal naming the path outside the workspace', async () => {
    const backend = new FakeBackend({ latencyMs: 0 });
    const user = userEvent.setup();
    render(App, { backend });
    await user.click(await screen.findByTestId('run-tool-button'));
    const dialog = await screen.findByTestId('run-tool-dialog');
    await waitFor(() => expect(within(dialog).getByTestId('tool-select')).not.toHaveValue(''));
    await user.selectOptions(within(dialog).getByTestId('tool-select'), 'batch_rename_preview');
    const files = within(dialog).getByTestId('field-files');
    await user.click(within(files).getByTestId('browse-files'));
    await waitFor(() => expect(within(files).getAllByTestId('list-input').map((i) => (i as HTMLInputElement).value))
      .toEqual(['photos/IMG_0001.JPG', 'photos/IMG_0002.JPG']));
    expect(backend.pickCalls).toEqual([{ directory: false, multiple: true }]);

    backend.pickAnswer = new BackendError('pathOutsideWorkspace', '/etc/hosts is outside the workspace /home/demo/shop: pick a file or folder inside it.');
    await user.click(within(files).getByTestId('browse-folders'));
    await waitFor(() => expect(within(dialog).getByTestId('pick-error')).toHaveTextContent('/etc/hosts is outside the workspace'));
    expect(within(files).getAllByTestId('list-input'), 'nothing inserted').toHaveLength(2);
  });
});
