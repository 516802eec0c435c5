// Folds the agent's updates (the `agent-event` stream, or `get_conversation`'s log) into the
// items the conversation panel shows. Pure: the same updates always give the same items.
import type {
  AgentErrorCode, AgentUpdate, ResolveChoice, ResolvedInfo, TurnOutcome,
} from '../ipc/backend';

export type ToolState = 'running' | 'waiting' | 'done' | 'error' | 'stopped';

export type ChatItem =
  | { kind: 'user'; key: string; text: string }
  | { kind: 'assistant'; key: string; turn: number; step: number; text: string; streaming: boolean }
  | {
      kind: 'tool'; key: string; callId: string; tool: string; args: string; state: ToolState;
      text: string | null; pushedActionIds: string[]; resolved: ResolvedInfo | null;
      proposal: { action: ResolveChoice | null; reason: string | null } | null;
    }
  | { kind: 'retrying'; key: string; text: string }
  | { kind: 'error'; key: string; code: AgentErrorCode; message: string; hint: string | null }
  | { kind: 'ended'; key: string; outcome: TurnOutcome; text: string };

export type Chat = {
  items: ChatItem[];
  /** The turn running now (from the last `prompt` without its `turnDone`). */
  runningTurn: number | null;
};

function lastIndex<T>(xs: T[], pred: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (pred(xs[i]!)) return i;
  return -1;
}

export const emptyChat = (): Chat => ({ items: [], runningTurn: null });

/** What to do about a provider error, in the app's terms. */
export function errorHint(code: AgentErrorCode): string | null {
  switch (code) {
    case 'unauthorized':
      return 'Check the API key variable in Settings (the app reads the key from the environment it was started in).';
    case 'modelNotFound':
      return 'Check the model name and the base URL in Settings.';
    case 'connectionRefused':
    case 'connectTimeout':
    case 'connect':
      return 'Check the base URL in Settings, and that the provider is running.';
    case 'idleTimeout':
    case 'streamBroken':
    case 'truncated':
    case 'httpStatus':
    case 'providerError':
      return 'Send the message again to retry.';
    case 'config':
      return 'Fix the settings and try again.';
    case 'malformedResponse':
    case 'maxSteps':
    case 'other':
      return null;
  }
}

/** A one-line summary of a tool call's arguments. */
export function summariseArgs(tool: string, args: unknown): string {
  if (typeof args === 'string') return clip(args);
  if (typeof args !== 'object' || args === null) return '';
  const a = args as Record<string, unknown>;
  if (tool === 'ast_edit' && Array.isArray(a.ops)) {
    const ops = a.ops
      .map((o) => (typeof o === 'object' && o ? o as Record<string, unknown> : {}))
      .map((o) => `${String(o.pat ?? '')} → ${String(o.out ?? '')}`)
      .join('; ');
    const where = typeof a.path === 'string' ? ` in ${a.path}` : '';
    return clip(ops + where);
  }
  if (tool === 'resolve') {
    return clip(`${String(a.action ?? '?')}: ${String(a.reason ?? '')}`);
  }
  return clip(JSON.stringify(args));
}

function clip(s: string, max = 140): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function endText(outcome: TurnOutcome): string | null {
  switch (outcome) {
    case 'cancelled':
      return 'Stopped. Anything pending stays on the stack.';
    case 'waitingForPerson':
      return 'The agent stopped to wait for your review.';
    case 'answered':
    case 'maxSteps':
    case 'failed':
      return null;
  }
}

/** Applies one update; returns a new chat (items are replaced, never mutated). */
export function applyUpdate(chat: Chat, update: AgentUpdate): Chat {
  const items = [...chat.items];
  const e = update.event;
  const n = items.length;
  const key = `${update.turn}:${n}`;
  const findTool = (callId: string) =>
    lastIndex(items, (i) => i.kind === 'tool' && i.callId === callId);
  switch (e.kind) {
    case 'prompt':
      items.push({ kind: 'user', key, text: e.text });
      return { items, runningTurn: update.turn };
    case 'textDelta': {
      const last = items[n - 1];
      if (last?.kind === 'assistant' && last.streaming && last.turn === update.turn && last.step === e.step) {
        items[n - 1] = { ...last, text: last.text + e.text };
      } else {
        items.push({ kind: 'assistant', key, turn: update.turn, step: e.step, text: e.text, streaming: true });
      }
      break;
    }
    case 'assistantMessage': {
      const i = lastIndex(items, (x) => x.kind === 'assistant' && x.turn === update.turn && x.step === e.step);
      const prev = i >= 0 ? items[i] : undefined;
      if (prev?.kind === 'assistant') {
        items[i] = { ...prev, text: e.content ?? prev.text, streaming: false };
      } else if (e.content && e.content.trim() !== '') {
        items.push({ kind: 'assistant', key, turn: update.turn, step: e.step, text: e.content, streaming: false });
      }
      break;
    }
    case 'toolCallStarted':
      items.push({
        kind: 'tool', key, callId: e.callId, tool: e.tool, args: summariseArgs(e.tool, e.arguments),
        state: 'running', text: null, pushedActionIds: [], resolved: null, proposal: null,
      });
      break;
    case 'waitingForPerson': {
      const i = findTool(e.callId);
      const t = items[i];
      if (t?.kind === 'tool') {
        items[i] = { ...t, state: 'waiting', proposal: { action: e.proposedAction, reason: e.proposedReason } };
      }
      break;
    }
    case 'toolResult': {
      const i = findTool(e.callId);
      const t = items[i];
      const done = {
        state: (e.isError ? 'error' : 'done') as ToolState, text: e.text,
        pushedActionIds: e.pushedActionIds, resolved: e.resolved,
      };
      if (t?.kind === 'tool') items[i] = { ...t, ...done };
      else items.push({ kind: 'tool', key, callId: e.callId, tool: e.tool, args: '', proposal: null, ...done });
      break;
    }
    case 'retrying': {
      const text = `The provider answered ${e.status}; trying again in ${(e.delayMs / 1000).toFixed(1)} s (attempt ${e.attempt + 1} of ${e.maxAttempts}).`;
      items.push({ kind: 'retrying', key, text });
      break;
    }
    case 'error':
      items.push({ kind: 'error', key, code: e.code, message: e.message, hint: errorHint(e.code) });
      break;
    case 'turnDone': {
      for (let i = 0; i < items.length; i++) {
        const it = items[i]!;
        if (it.kind === 'assistant' && it.streaming) items[i] = { ...it, streaming: false };
        if (it.kind === 'tool' && (it.state === 'running' || it.state === 'waiting')) items[i] = { ...it, state: 'stopped' };
      }
      const text = endText(e.outcome);
      if (text) items.push({ kind: 'ended', key, outcome: e.outcome, text });
      return { items, runningTurn: chat.runningTurn === update.turn ? null : chat.runningTurn };
    }
  }
  return { items, runningTurn: chat.runningTurn };
}

export function foldUpdates(updates: AgentUpdate[], from: Chat = emptyChat()): Chat {
  return updates.reduce(applyUpdate, from);
}

/** The tool call waiting for the person, if any. */
export function waitingCall(chat: Chat): Extract<ChatItem, { kind: 'tool' }> | null {
  for (let i = chat.items.length - 1; i >= 0; i--) {
    const it = chat.items[i]!;
    if (it.kind === 'tool' && it.state === 'waiting') return it;
  }
  return null;
}
