import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import { FakeBackend } from '../test/fakeBackend';
import type { Notice } from '../ipc/backend';
import { BackendError } from '../ipc/backend';

afterEach(() => cleanup());

const JOURNAL: Notice = {
  id: 'journal',
  level: 'error',
  title: 'Decisions are not being saved',
  message:
    'Cannot open the decision journal /home/me/.local/share/resolve-desk/journal.sqlite3: unable to open database file. ' +
    'Decisions made now are in this session\'s history only and are lost when Resolve Desk closes. Check that ' +
    '/home/me/.local/share/resolve-desk is a folder you can write to and that the disk is not full, then restart Resolve Desk.',
  dismissible: false,
  details: [],
  actions: [],
};

const RECOVERY: Notice = {
  id: 'recovery',
  level: 'warning',
  title: 'An interrupted apply was recovered',
  message:
    'Applying "AST Edit: 3 replacements in 2 files" was interrupted (started 2026-12-03 14:02:11 UTC): 2 files were restored as before the apply, and its temporary files were removed.',
  dismissible: true,
  details: [],
  actions: [],
};

const TRUST: Notice = {
  id: 'trust',
  level: 'warning',
  title: 'This folder has tools of its own (1 tool)',
  message:
    'They come with the folder: each runs the command shown, with your rights, when an agent or you call it. Until you trust them they are not started, and a call says so. Trust them only if you trust whoever wrote /home/me/shop.',
  dismissible: false,
  details: ['deploy: node run.js tool.mjs'],
  actions: [
    { id: 'trust:9f2c', label: "Trust this folder's tools", primary: true },
    { id: 'not-now', label: 'Not now', primary: false },
  ],
};

async function setup(notices: Notice[] = []) {
  const backend = new FakeBackend({ latencyMs: 0, notices });
  const user = userEvent.setup();
  render(App, { backend });
  await waitFor(() => expect(screen.getAllByTestId('queue-card').length).toBeGreaterThan(0));
  return { backend, user };
}

describe('notices', () => {
  it('shows no banner when the backend has nothing to say', async () => {
    await setup();
    expect(screen.queryByTestId('notices')).toBeNull();
  });

  it('shows a broken journal as an alert that cannot be dismissed', async () => {
    await setup([JOURNAL]);
    const banner = await screen.findByTestId('notice');
    expect(banner).toHaveAttribute('role', 'alert');
    expect(banner.dataset.level).toBe('error');
    expect(within(banner).getByTestId('notice-title')).toHaveTextContent('Decisions are not being saved');
    expect(within(banner).getByTestId('notice-message')).toHaveTextContent('/home/me/.local/share/resolve-desk/journal.sqlite3');
    expect(within(banner).getByTestId('notice-message')).toHaveTextContent('then restart Resolve Desk.');
    expect(within(banner).queryByTestId('notice-dismiss')).toBeNull();
  });

  it('a recovered apply is dismissible; the journal banner stays beside it', async () => {
    const { backend, user } = await setup([JOURNAL, RECOVERY]);
    await waitFor(() => expect(screen.getAllByTestId('notice')).toHaveLength(2));
    const recovery = screen.getAllByTestId('notice').find((n) => n.dataset.id === 'recovery')!;
    expect(recovery).toHaveAttribute('role', 'status');
    expect(recovery).toHaveTextContent(RECOVERY.message);
    await user.click(within(recovery).getByTestId('notice-dismiss'));
    await waitFor(() => expect(screen.getAllByTestId('notice').map((n) => n.dataset.id)).toEqual(['journal']));
    expect(await backend.listNotices()).toEqual([JOURNAL]);
  });

  it('follows the backend: a banner appears when the journal breaks and goes when it works again', async () => {
    const { backend } = await setup();
    backend.showNotice(JOURNAL);
    await waitFor(() => expect(screen.getByTestId('notice').dataset.id).toBe('journal'));
    backend.removeNotice('journal');
    await waitFor(() => expect(screen.queryByTestId('notices')).toBeNull());
  });

  it('lists a folder\'s own tools with their commands and sends the button the person clicked', async () => {
    const { backend, user } = await setup([TRUST]);
    const banner = await screen.findByTestId('notice');
    expect(within(banner).getByTestId('notice-details')).toHaveTextContent('deploy: node run.js tool.mjs');
    expect(within(banner).queryByTestId('notice-dismiss')).toBeNull();
    const buttons = within(banner).getAllByTestId('notice-action');
    expect(buttons.map((b) => b.textContent)).toEqual(["Trust this folder's tools", 'Not now']);
    expect(buttons[0]).toHaveClass('primary');
    await user.click(buttons[0]!);
    await waitFor(() => expect(screen.queryByTestId('notice')).toBeNull());
    expect(backend.noticeActions).toEqual([{ noticeId: 'trust', actionId: 'trust:9f2c' }]);
  });

  it('a refused button shows the backend\'s reason', async () => {
    const { backend, user } = await setup([TRUST]);
    backend.noticeAction = async () => {
      throw new BackendError('invalidParams', 'The tools of /home/me/shop changed since they were shown to you.');
    };
    const banner = await screen.findByTestId('notice');
    await user.click(within(banner).getAllByTestId('notice-action')[0]!);
    expect(await screen.findByTestId('notice-error')).toHaveTextContent('changed since they were shown to you');
  });
});
