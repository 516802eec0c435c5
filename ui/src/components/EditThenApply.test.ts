// Edit, then apply in the app (fake backend, the real CodeMirror editor): the top action's
// file opens in the editor, the person changes the text that will be written, keeps it, and
// Apply says and sends it; an edit can be reverted; a file both edited and left out is flagged.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { EditorView } from '@codemirror/view';
import App from '../App.svelte';
import { FakeBackend } from '../test/fakeBackend';
import { reviewScenario } from '../test/scenarios';
import { PersonEdits } from '../state/edits.svelte';

afterEach(() => cleanup());

const SECOND = 'src/util/format.ts';

const OLD = "export function format(ms: number) {\n  console.log('formatting', ms);\n  return `${ms} ms`;\n}\n";
const NEW = "export function format(ms: number) {\n  logger.debug('formatting', ms);\n  return `${ms} ms`;\n}\n";

async function setup() {
  const scenario = reviewScenario();
  const top = scenario.queue.actions[0]!;
  // Both sides of the file, as the engine's get_file_texts gives them.
  scenario.texts = { [top.id]: { [SECOND]: { path: SECOND, old: OLD, new: NEW } } };
  const backend = new FakeBackend({ latencyMs: 0, scenario });
  const user = userEvent.setup();
  render(App, { backend });
  await waitFor(() => expect(screen.getAllByTestId('file-row').length).toBe(2));
  await user.click(screen.getAllByTestId('file-row').find((r) => r.dataset.path === SECOND)!);
  await waitFor(() => expect(screen.getByTestId('diff-path')).toHaveTextContent(SECOND));
  return { backend, user };
}

/** The editable side's CodeMirror view, once the editor opened. */
async function editableView(): Promise<EditorView> {
  const content = await screen.findByTestId('editor-text', {}, { timeout: 5000 });
  const view = EditorView.findFromDOM(content.closest('.cm-editor') as HTMLElement);
  if (!view) throw new Error('no editor view');
  return view;
}

describe('edit, then apply', () => {
  it('the person edits the proposed text, keeps it, and Apply sends it', async () => {
    const { backend, user } = await setup();
    await user.click(screen.getByTestId('edit-file-button'));
    expect(screen.getByTestId('file-editor')).toHaveAccessibleName(`Edit ${SECOND} before applying`);
    const view = await editableView();
    const proposal = view.state.doc.toString();
    expect(proposal).toContain('logger.debug');
    // The read-only side is the file now.
    expect(document.querySelectorAll('.cm-editor').length).toBe(2);
    view.dispatch({ changes: { from: 0, insert: '// checked by hand\n' } });
    await user.click(screen.getByTestId('editor-keep'));
    await waitFor(() => expect(screen.queryByTestId('file-editor')).toBeNull());
    expect(screen.getByTestId('file-edited')).toHaveTextContent('Your edit of this file will be written');
    expect(screen.getByTestId('apply-button')).toHaveTextContent('Apply with my edits (1 file)');

    // Edit again starts from the kept text.
    await user.click(screen.getByTestId('edit-file-button'));
    expect((await editableView()).state.doc.toString()).toBe(`// checked by hand\n${proposal}`);
    await user.click(screen.getByTestId('editor-cancel'));

    await user.type(screen.getByTestId('reason-input'), 'fixed the header myself');
    await user.click(screen.getByTestId('apply-button'));
    await waitFor(() => expect(backend.editsSent).toEqual([[{ path: SECOND, text: `// checked by hand\n${proposal}` }]]));
    expect(backend.leaveOuts).toEqual([null]);
  });

  it('keeping the proposal unchanged is no edit, and Revert drops an edit', async () => {
    const { user } = await setup();
    await user.click(screen.getByTestId('edit-file-button'));
    await editableView();
    await user.click(screen.getByTestId('editor-keep'));
    await waitFor(() => expect(screen.queryByTestId('file-editor')).toBeNull());
    expect(screen.queryByTestId('file-edited')).toBeNull();
    expect(screen.getByTestId('apply-button')).toHaveTextContent(/^Apply$/);

    await user.click(screen.getByTestId('edit-file-button'));
    (await editableView()).dispatch({ changes: { from: 0, insert: 'x' } });
    await user.click(screen.getByTestId('editor-keep'));
    await screen.findByTestId('file-edited');
    await user.click(screen.getByTestId('revert-edit-button'));
    expect(screen.queryByTestId('file-edited')).toBeNull();
    expect(screen.getByTestId('apply-button')).toHaveTextContent(/^Apply$/);
  });

  it('a file both edited and left out is flagged before Apply', async () => {
    const { user } = await setup();
    await user.click(screen.getByTestId('edit-file-button'));
    (await editableView()).dispatch({ changes: { from: 0, insert: 'x' } });
    await user.click(screen.getByTestId('editor-keep'));
    await screen.findByTestId('file-edited');
    const row = screen.getAllByTestId('file-row').find((r) => r.dataset.path === SECOND)!;
    await user.click(within(row).getByTestId('file-tick'));
    expect(screen.getByTestId('edit-left-out')).toHaveTextContent('It is also left out');
    expect(screen.getByTestId('apply-button')).toHaveTextContent('Apply 1 of 2 files, with my edits (1 file)');
  });
});

describe('PersonEdits', () => {
  it('keeps texts per action and path, and sends nothing once every edit is reverted', () => {
    const edits = new PersonEdits();
    expect(edits.list('a')).toBeNull();
    edits.keep('a', 'x.ts', 'new', 'proposal');
    edits.keep('b', 'y.ts', 'same', 'same');
    expect(edits.list('a')).toEqual([{ path: 'x.ts', text: 'new' }]);
    expect(edits.list('b')).toBeNull();
    expect(edits.count('a')).toBe(1);
    edits.revert('a', 'x.ts');
    expect(edits.list('a')).toBeNull();
    edits.keep('a', 'x.ts', 'new', 'proposal');
    edits.open('a', 'x.ts');
    edits.clear('a');
    expect(edits.list('a')).toBeNull();
    expect(edits.editing).toBeNull();
  });
});
