import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import RunScriptDialog from './RunScriptDialog.svelte';
import { FakeBackend } from '../test/fakeBackend';
import { parseScriptLine, runnableLines } from '../lib/script';

const EDIT = (pat: string) => JSON.stringify({ tool: 'ast_edit', params: { ops: [{ pat, out: 'logger.info($A)' }], path: 'src' } });

function setup(script: string) {
  const backend = new FakeBackend({ latencyMs: 0, scenario: 'empty' });
  const runTool = vi.spyOn(backend, 'runTool');
  const runScript = vi.spyOn(backend, 'runScript');
  const user = userEvent.setup();
  render(RunScriptDialog, {
    onRunAll: (text: string) => backend.runScript(text),
    onStep: (tool: string, params: Record<string, unknown>) => backend.runTool(tool, params),
  });
  fireEvent.input(screen.getByTestId('script-input'), { target: { value: script } });
  return { backend, runTool, runScript, user };
}

function lineState(n: number) {
  return screen.getAllByTestId('script-line').find((l) => l.dataset.line === String(n))?.dataset.state;
}

describe('script line format', () => {
  it('skips blank and # lines, defaults params to {}, names the line of a malformed one', () => {
    expect(runnableLines('# c\n\n{"tool":"a"}\n  {"tool":"b"}\n')).toEqual([3, 4]);
    expect(parseScriptLine(1, '# comment')).toBeNull();
    expect(parseScriptLine(2, '{"tool":"resolve"}')).toEqual({ line: 2, tool: 'resolve', params: {} });
    expect(() => parseScriptLine(7, '{nope')).toThrow(/^line 7: not valid JSON: /);
    expect(() => parseScriptLine(3, '[1]')).toThrow('line 3: expected an object like {"tool": "resolve", "params": {...}}, got an array');
    expect(() => parseScriptLine(2, '{"tool":"x","params":3}')).toThrow('line 2: `params` must be an object, got a number');
    expect(() => parseScriptLine(2, '{"tool":"x","parms":{}}')).toThrow('line 2: unknown field `parms`');
    expect(() => parseScriptLine(4, '{"params":{}}')).toThrow('line 4: missing field `tool`');
    expect(() => parseScriptLine(4, '{"tool":"  "}')).toThrow('line 4: `tool` must be a non-empty tool name');
  });
});

describe('RunScriptDialog', () => {
  it('steps through the script one line at a time in the same session', async () => {
    const { backend, runTool, runScript, user } = setup(`# two previews\n${EDIT('console.log($A)')}\n\n${EDIT('console.warn($A)')}\n`);
    await user.click(screen.getByTestId('script-step-button'));

    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(1));
    expect(screen.queryByTestId('script-input'), 'the script is locked while stepping').toBeNull();
    expect(screen.getByTestId('script-counter')).toHaveTextContent('line 2 of 4');
    expect(lineState(2), 'the line just run is highlighted').toBe('current');
    expect(lineState(4)).toBe('next');
    expect(lineState(1)).toBe('skipped');
    expect(screen.getAllByTestId('script-step')[0]).toHaveTextContent('line 2');
    expect(screen.getAllByTestId('script-step')[0]).toHaveTextContent('This is a preview');
    expect(runTool).toHaveBeenCalledTimes(1);
    expect(runTool).toHaveBeenLastCalledWith('ast_edit', { ops: [{ pat: 'console.log($A)', out: 'logger.info($A)' }], path: 'src' });
    expect((await backend.listActions()).actions, 'one pending action after the first step').toHaveLength(1);

    await user.click(screen.getByTestId('script-step-button'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(2));
    expect(screen.getByTestId('script-counter')).toHaveTextContent('line 4 of 4 · end of script');
    expect(lineState(4)).toBe('current');
    expect(lineState(2)).toBe('done');
    expect(runTool).toHaveBeenLastCalledWith('ast_edit', { ops: [{ pat: 'console.warn($A)', out: 'logger.info($A)' }], path: 'src' });
    expect((await backend.listActions()).actions).toHaveLength(2);
    expect(screen.getByTestId('script-step-button')).toBeDisabled();
    expect(screen.getByTestId('script-run')).toBeDisabled();
    expect(runScript, 'stepping goes through run_tool, not run_script').not.toHaveBeenCalled();

    await user.click(screen.getByTestId('script-reset'));
    expect(screen.getByTestId('script-input')).toBeInTheDocument();
    expect(screen.queryByTestId('script-steps')).toBeNull();
    expect(screen.getByTestId('script-step-button')).toBeEnabled();
  });

  it('stops at a malformed line with an error naming its number', async () => {
    const { runTool, user } = setup(`${EDIT('console.log($A)')}\n\n{"tool": "ast_edit", params}\n${EDIT('console.warn($A)')}`);
    await user.click(screen.getByTestId('script-step-button'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(1));
    await user.click(screen.getByTestId('script-step-button'));

    expect(screen.getByTestId('script-step-error')).toHaveTextContent(/^line 3: not valid JSON: /);
    expect(lineState(3)).toBe('error');
    expect(screen.getByTestId('script-counter')).toHaveTextContent('line 3 of 4');
    expect(screen.getByTestId('script-step-button'), 'stepping stops at the malformed line').toBeDisabled();
    expect(screen.getByTestId('script-run')).toBeDisabled();
    expect(runTool).toHaveBeenCalledTimes(1);
  });

  it('runs all at once, or the rest after stepping, through run_script', async () => {
    const { runScript, runTool, user } = setup(`# c\n${EDIT('console.log($A)')}\n${EDIT('console.warn($A)')}\n{"tool":"nope"}\n`);
    // What run_script answers (the double parses nothing): all three lines, then the rest.
    runScript
      .mockResolvedValueOnce([
        { step: 2, tool: 'ast_edit', isError: false, text: 'Preview 1. This is a preview.' },
        { step: 3, tool: 'ast_edit', isError: false, text: 'Preview 2. This is a preview.' },
        { step: 4, tool: 'nope', isError: true, text: 'Unknown tool: nope' },
      ])
      .mockResolvedValueOnce([
        { step: 3, tool: 'ast_edit', isError: false, text: 'Preview 2. This is a preview.' },
        { step: 4, tool: 'nope', isError: true, text: 'Unknown tool: nope' },
      ]);
    await user.click(screen.getByTestId('script-run'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(3));
    expect(screen.getAllByTestId('script-step').map((s) => s.dataset.line)).toEqual(['2', '3', '4']);
    expect(screen.getAllByTestId('script-step')[2]).toHaveTextContent('Unknown tool: nope');

    await user.click(screen.getByTestId('script-reset'));
    await user.click(screen.getByTestId('script-step-button'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(1));
    expect(screen.getByTestId('script-run')).toHaveTextContent('Run the rest');
    await user.click(screen.getByTestId('script-run'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(3));
    expect(screen.getAllByTestId('script-step').map((s) => s.dataset.line)).toEqual(['2', '3', '4']);
    expect(runScript).toHaveBeenCalledTimes(2);
    const rest = runScript.mock.calls[1]![0].split('\n');
    expect(rest[1], 'the line already stepped is not run again').toBe('');
    expect(rest[2]).toBe(EDIT('console.warn($A)'));
    expect(runTool, 'step: line 2').toHaveBeenCalledTimes(1);
  });

  it('shows a run_script rejection', async () => {
    const { runScript, user } = setup(`${EDIT('console.log($A)')}\n[1]\n`);
    runScript.mockRejectedValueOnce({ code: 'invalidParams', message: 'line 2: expected an object like {"tool": "resolve", "params": {...}}, got an array; the steps before it ran.' });
    await user.click(screen.getByTestId('script-run'));
    await waitFor(() => expect(screen.getByTestId('script-error')).toHaveTextContent('line 2: expected an object'));
    expect(within(screen.getByTestId('run-script-form')).queryByTestId('script-steps')).toBeNull();
  });
});
