import { describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { render, screen, waitFor, within, fireEvent } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import RunScriptDialog from './RunScriptDialog.svelte';
import type { ScriptStep } from '../ipc/backend';

const EDIT = (pat: string) => JSON.stringify({ tool: 'ast_edit', params: { ops: [{ pat, out: 'logger.info($A)' }], path: 'src' } });

type Answer = Omit<ScriptStep, 'step' | 'line'> | { reject: string };

/**
 * Stands in for the shell's `run_script`, answering per exact line text (the UI parses
 * nothing, so neither does this): lines it has no answer for are skipped, like blank and
 * comment lines; a `reject` answer rejects the call, as a malformed line does.
 */
function runScriptStub(answers: Record<string, Answer>) {
  return vi.fn(async (text: string): Promise<ScriptStep[]> => {
    const steps: ScriptStep[] = [];
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const a = answers[lines[i]!];
      if (!a) continue;
      if ('reject' in a) throw { code: 'invalidParams', message: `line ${i + 1}: ${a.reject}; the steps before it ran.` };
      steps.push({ step: steps.length + 1, line: i + 1, ...a });
    }
    return steps;
  });
}

const ANSWERS: Record<string, Answer> = {
  [EDIT('console.log($A)')]: { tool: 'ast_edit', isError: false, text: 'Preview of console.log. This is a preview.' },
  [EDIT('console.warn($A)')]: { tool: 'ast_edit', isError: false, text: 'Preview of console.warn. This is a preview.' },
  '{"tool":"nope"}': { tool: 'nope', isError: true, text: 'Unknown tool: nope' },
  '{"tool": "ast_edit", params}': { reject: 'not valid JSON: key must be a string at line 1 column 20' },
  '[1]': { reject: 'expected an object like {"tool": "resolve", "params": {...}}, got an array' },
};

function setup(script: string, runScript = runScriptStub(ANSWERS)) {
  const user = userEvent.setup();
  render(RunScriptDialog, { onRunAll: runScript });
  fireEvent.input(screen.getByTestId('script-input'), { target: { value: script } });
  return { runScript, user };
}

function lineState(n: number) {
  return screen.getAllByTestId('script-line').find((l) => l.dataset.line === String(n))?.dataset.state;
}

describe('RunScriptDialog', () => {
  it('numbers each result by the line it came from, not by its step count (the Run script line bug)', async () => {
    // The shell's answer for a script whose first step is on line 3 (script_steps.json).
    const steps = JSON.parse(readFileSync(resolve(__dirname, '../../../crates/protocol/fixtures/script_steps.json'), 'utf8')) as ScriptStep[];
    expect(steps[0]!.step, 'the fixture has a step whose count differs from its line').not.toBe(steps[0]!.line);
    const { user } = setup('# two steps\n\n' + steps.map(() => EDIT('console.log($A)')).join('\n'), vi.fn(async () => steps));
    await user.click(screen.getByTestId('script-run'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(steps.length));
    const shown = screen.getAllByTestId('script-step');
    expect(shown.map((s) => s.dataset.line)).toEqual(steps.map((s) => String(s.line)));
    expect(shown[0]).toHaveTextContent(`line ${steps[0]!.line}`);
  });

  it('steps through the script one line at a time in the same session', async () => {
    const { runScript, user } = setup(`# two previews\n${EDIT('console.log($A)')}\n\n${EDIT('console.warn($A)')}\n`);
    await user.click(screen.getByTestId('script-step-button'));

    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(1));
    expect(screen.queryByTestId('script-input'), 'the script is locked while stepping').toBeNull();
    expect(screen.getByTestId('script-counter')).toHaveTextContent('line 2 of 4');
    expect(lineState(2), 'the line just run is highlighted').toBe('current');
    expect(lineState(1), 'the comment was sent and ran nothing').toBe('skipped');
    expect(lineState(3)).toBe('next');
    expect(lineState(4)).toBe('pending');
    expect(screen.getAllByTestId('script-step')[0]).toHaveTextContent('line 2');
    expect(screen.getAllByTestId('script-step')[0]).toHaveTextContent('This is a preview');
    expect(runScript, 'line 1 (skipped), then line 2').toHaveBeenCalledTimes(2);
    expect(runScript).toHaveBeenLastCalledWith(`\n${EDIT('console.log($A)')}\n\n`);

    await user.click(screen.getByTestId('script-step-button'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(2));
    expect(screen.getByTestId('script-counter')).toHaveTextContent('line 4 of 4 · end of script');
    expect(lineState(4)).toBe('current');
    expect(lineState(3)).toBe('skipped');
    expect(lineState(2)).toBe('done');
    expect(runScript).toHaveBeenLastCalledWith(`\n\n\n${EDIT('console.warn($A)')}`);
    expect(screen.getByTestId('script-step-button')).toBeDisabled();
    expect(screen.getByTestId('script-run')).toBeDisabled();

    await user.click(screen.getByTestId('script-reset'));
    expect(screen.getByTestId('script-input')).toBeInTheDocument();
    expect(screen.queryByTestId('script-steps')).toBeNull();
    expect(screen.getByTestId('script-step-button')).toBeEnabled();
  });

  it('stops at a malformed line with the backend error naming its number', async () => {
    const { runScript, user } = setup(`${EDIT('console.log($A)')}\n\n{"tool": "ast_edit", params}\n${EDIT('console.warn($A)')}`);
    await user.click(screen.getByTestId('script-step-button'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(1));
    await user.click(screen.getByTestId('script-step-button'));

    await waitFor(() => expect(screen.getByTestId('script-step-error')).toHaveTextContent(/^line 3: not valid JSON: /));
    expect(lineState(3)).toBe('error');
    expect(lineState(2)).toBe('skipped');
    expect(screen.getByTestId('script-counter')).toHaveTextContent('line 3 of 4');
    expect(screen.getByTestId('script-step-button'), 'stepping stops at the malformed line').toBeDisabled();
    expect(screen.getByTestId('script-run')).toBeDisabled();
    expect(runScript).toHaveBeenCalledTimes(3);
  });

  it('runs all at once, or the rest after stepping, through run_script', async () => {
    const { runScript, user } = setup(`# c\n${EDIT('console.log($A)')}\n${EDIT('console.warn($A)')}\n{"tool":"nope"}\n`);
    await user.click(screen.getByTestId('script-run'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(3));
    expect(screen.getAllByTestId('script-step').map((s) => s.dataset.line)).toEqual(['2', '3', '4']);
    expect(screen.getAllByTestId('script-step')[2]).toHaveTextContent('Unknown tool: nope');

    await user.click(screen.getByTestId('script-reset'));
    runScript.mockClear();
    await user.click(screen.getByTestId('script-step-button'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(1));
    expect(screen.getByTestId('script-run')).toHaveTextContent('Run the rest');
    await user.click(screen.getByTestId('script-run'));
    await waitFor(() => expect(screen.getAllByTestId('script-step')).toHaveLength(3));
    expect(screen.getAllByTestId('script-step').map((s) => s.dataset.line)).toEqual(['2', '3', '4']);
    expect(runScript, 'step: lines 1 and 2; the rest: one call').toHaveBeenCalledTimes(3);
    const rest = runScript.mock.calls[2]![0].split('\n');
    expect(rest.slice(0, 2), 'the lines already stepped are not run again').toEqual(['', '']);
    expect(rest[2]).toBe(EDIT('console.warn($A)'));
  });

  it('shows a run_script rejection', async () => {
    const { user } = setup(`${EDIT('console.log($A)')}\n[1]\n`);
    await user.click(screen.getByTestId('script-run'));
    await waitFor(() => expect(screen.getByTestId('script-error')).toHaveTextContent('line 2: expected an object'));
    expect(within(screen.getByTestId('run-script-form')).queryByTestId('script-steps')).toBeNull();
  });
});
