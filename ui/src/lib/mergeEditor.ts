// The editor of "edit, then apply": CodeMirror 6. For an edited file, its merge view — the
// file as it is now on the left (read-only) and the text that will be written on the right
// (the agent's proposal, editable), unchanged stretches collapsed; for a created file, one
// editor. Loaded on demand (a dynamic import), so CodeMirror is not in the main bundle.
// CodeMirror draws only the lines in view, so a 20,000-line file stays fluid.
import { MergeView } from '@codemirror/merge';
import { EditorState } from '@codemirror/state';
import { EditorView, basicSetup } from 'codemirror';

export interface OpenEditor {
  /** The text on the editable side now. */
  text(): string;
  /** Puts the cursor in the editable side. */
  focus(): void;
  destroy(): void;
}

const theme = EditorView.theme({
  '&': { height: '100%', fontSize: '12.5px' },
  '.cm-scroller': { fontFamily: 'var(--mono, ui-monospace, monospace)' },
});

export function openEditor(parent: HTMLElement, original: string | null, proposal: string, label: string): OpenEditor {
  const editable = [basicSetup, theme, EditorView.contentAttributes.of({ 'aria-label': label, 'data-testid': 'editor-text' })];
  if (original === null) {
    const view = new EditorView({ doc: proposal, extensions: editable, parent });
    return { text: () => view.state.doc.toString(), focus: () => view.focus(), destroy: () => view.destroy() };
  }
  const merge = new MergeView({
    a: {
      doc: original,
      extensions: [basicSetup, theme, EditorState.readOnly.of(true), EditorView.editable.of(false),
        EditorView.contentAttributes.of({ 'aria-label': 'The file now (read-only)' })],
    },
    b: { doc: proposal, extensions: editable },
    parent,
    collapseUnchanged: { margin: 3, minSize: 6 },
    gutter: true,
  });
  return { text: () => merge.b.state.doc.toString(), focus: () => merge.b.focus(), destroy: () => merge.destroy() };
}
