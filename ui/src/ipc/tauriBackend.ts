// The real backend: Tauri v2 commands and events of the resolve-desk shell.
// Command names are snake_case; argument keys camelCase (Tauri converts them).
import { invoke } from '@tauri-apps/api/core';
import { open, save } from '@tauri-apps/plugin-dialog';
import { BackendError, toBackendError, type Backend, type Unsubscribe } from './backend';
import { OutsideWorkspace, toWorkspaceRelative } from '../lib/paths';
import type { AgentSettingsInput } from './backend';
import type {
  AgentSettings, AgentUpdate, CloseRequested, EventBatch, ExportOutcome, HistoryPage, ConversationView, NewConversationOutcome, Notice, Policy,
  FileDiff, FileEntry, FileTexts, FolderList, FoldersChanged, InboxItem, DeskSettings, RevealAction, HistoryEntry, QueueChanged, QueueSnapshot, RenameRow, ResolveChoice,
  ResolveOutcome, ScriptStep, SessionInfo, ToolInfo, ToolProgress, ToolRunOutcome, SincePreview, FileReplacements, ToolLog, ReviewComment,
} from './generated/protocol';

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (err) {
    throw toBackendError(err);
  }
}

// The window's tool runs in flight (run, re-run, script), by the id each is sent with, so
// Cancel names them: a Cancel that reaches the backend before its run started there still
// cancels it.
let nextRunId = 1;
const inFlight = new Set<number>();
async function tracked<T>(run: (runId: number) => Promise<T>): Promise<T> {
  const id = nextRunId++;
  inFlight.add(id);
  try {
    return await run(id);
  } finally {
    inFlight.delete(id);
  }
}

// The shell's events come through one long-polling command, `next_events`, not Tauri events:
// each Tauri event (and each `listen`) is a script the app's process evaluates in the page,
// and the first one starts a JavaScript engine there too (about 6 MiB for the window's life;
// src-tauri/src/events.rs). One call is kept in flight; its answer dispatches the events in
// the order they were pushed.
type EventHandler = (payload: unknown) => void;
const handlers = new Map<string, Set<EventHandler>>();
let polling: Promise<void> | null = null;

/** Starts the poll once: resolves when the page's place in the events is known (from then on
 * every event reaches the handlers, as with a Tauri `listen`). */
function startPolling(): Promise<void> {
  polling ??= call<EventBatch>('next_events', { after: null }).then((first) => void pollFrom(first.last));
  return polling;
}

async function pollFrom(last: number): Promise<never> {
  for (;;) {
    let batch: EventBatch;
    try {
      batch = await call<EventBatch>('next_events', { after: last });
    } catch (err) {
      console.error('resolve-desk: could not fetch the events, trying again in a second', err);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    if (batch.missed) {
      // More than 10,000 events passed unseen (the page was stuck): what it shows is out of
      // date in ways no single event mends, so it loads everything again from the backend.
      console.warn('resolve-desk: events were missed; reloading the window');
      location.reload();
    }
    for (const event of batch.events) {
      for (const handler of handlers.get(event.name) ?? []) {
        try {
          handler(event.payload);
        } catch (err) {
          console.error(`resolve-desk: a ${event.name} handler failed`, err);
        }
      }
    }
    last = batch.last;
  }
}

async function on<T>(name: string, handler: (payload: T) => void): Promise<Unsubscribe> {
  const wrapped: EventHandler = (payload) => handler(payload as T);
  let set = handlers.get(name);
  if (!set) handlers.set(name, (set = new Set()));
  set.add(wrapped);
  try {
    await startPolling();
  } catch (err) {
    set.delete(wrapped);
    polling = null;
    throw toBackendError(err);
  }
  return () => void set.delete(wrapped);
}

export const EVENT_QUEUE_CHANGED = 'queue-changed';
export const EVENT_TOOL_PROGRESS = 'tool-progress';
export const EVENT_AGENT = 'agent-event';
export const EVENT_NOTICES = 'notices-changed';
export const EVENT_CLOSE_REQUESTED = 'close-requested';
export const EVENT_FOLDERS = 'folders-changed';
export const EVENT_REVEAL = 'reveal-action';

/** The picked paths relative to `root`; a path outside it is refused (`pathOutsideWorkspace`). */
export function pickedInside(root: string, picked: string[]): string[] {
  try {
    return picked.map((p) => toWorkspaceRelative(root, p));
  } catch (err) {
    if (err instanceof OutsideWorkspace) throw new BackendError('pathOutsideWorkspace', err.message);
    throw toBackendError(err);
  }
}

export function createTauriBackend(): Backend {
  return {
    getSession: () => call<SessionInfo>('get_session'),
    listActions: () => call<QueueSnapshot>('list_actions'),
    getActionFiles: (actionId) => call<FileEntry[]>('get_action_files', { actionId }),
    getFileDiff: (actionId, path, context) =>
      call<FileDiff>('get_file_diff', { actionId, path, context }),
    getFileTexts: (actionId, path) => call<FileTexts>('get_file_texts', { actionId, path }),
    getRoundDiff: (actionId, path) => call<FileDiff>('get_round_diff', { actionId, path }),
    getActionRenames: (actionId) => call<RenameRow[]>('get_action_renames', { actionId }),
    resolveAction: (action: ResolveChoice, reason, expectedId, leaveOut, edits) =>
      call<ResolveOutcome>('resolve_action', {
        action, reason, expectedId,
        ...(leaveOut ? { leaveOut } : {}),
        ...(edits && edits.length > 0 ? { edits } : {}),
      }),
    listHistory: () => call<HistoryEntry[]>('list_history'),
    undoDecision: (decisionId, reason) => call<ResolveOutcome>('undo_decision', { decisionId, reason }),
    redoDecision: (decisionId, reason) => call<ResolveOutcome>('redo_decision', { decisionId, reason }),
    readToolLog: (name) => call<ToolLog>('read_tool_log', { name }),
    startupPainted: (marks, origin) => call<void>('startup_painted', { marks, origin }),
    listTools: () => call<ToolInfo[]>('list_tools'),
    runTool: (name, params) => tracked((runId) => call<ToolRunOutcome>('run_tool', { name, params, runId })),
    rerunAction: (actionId) => tracked((runId) => call<ToolRunOutcome>('rerun_action', { actionId, runId })),
    runScript: (text) => tracked((runId) => call<ScriptStep[]>('run_script', { text, runId })),
    openWorkspace: (path) => call<SessionInfo>('open_workspace', { path }),
    listFolders: () => call<FolderList>('list_folders'),
    selectFolder: (root) => call<SessionInfo>('select_folder', { root }),
    closeFolder: (root) => call<FolderList>('close_folder', { root }),
    listInbox: () => call<InboxItem[]>('list_inbox'),
    getDeskSettings: () => call<DeskSettings>('get_desk_settings'),
    saveDeskSettings: (settings) => call<DeskSettings>('save_desk_settings', { settings }),
    async onRevealAction(handler: (e: RevealAction) => void): Promise<Unsubscribe> {
      return on<RevealAction>(EVENT_REVEAL, handler);
    },
    async onFoldersChanged(handler: (e: FoldersChanged) => void): Promise<Unsubscribe> {
      return on<FoldersChanged>(EVENT_FOLDERS, handler);
    },
    recentWorkspaces: () => call<string[]>('recent_workspaces'),
    async pickFolder() {
      try {
        const picked = await open({ directory: true, multiple: false, title: 'Open workspace folder' });
        return typeof picked === 'string' ? picked : null;
      } catch (err) {
        throw toBackendError(err);
      }
    },
    async onQueueChanged(handler: (e: QueueChanged) => void): Promise<Unsubscribe> {
      return on<QueueChanged>(EVENT_QUEUE_CHANGED, handler);
    },
    async onToolProgress(handler: (e: ToolProgress) => void): Promise<Unsubscribe> {
      return on<ToolProgress>(EVENT_TOOL_PROGRESS, handler);
    },
    setPolicy: (policy: Policy) => call<SessionInfo>('set_policy', { policy }),
    startAgentTurn: (prompt) => call<number>('start_agent_turn', { prompt }),
    stopAgentTurn: () => call<void>('stop_agent_turn'),
    newConversation: (discardReason) => call<NewConversationOutcome>('new_conversation', { discardReason }),
    getConversation: () => call<ConversationView>('get_conversation'),
    getAgentSettings: () => call<AgentSettings>('get_agent_settings'),
    saveAgentSettings: (s: AgentSettingsInput) =>
      call<AgentSettings>('save_agent_settings', { baseUrl: s.baseUrl, model: s.model, apiKeyEnv: s.apiKeyEnv, resolveWaitSecs: s.resolveWaitSecs, apiKey: s.apiKey ?? null, forgetApiKey: s.forgetApiKey ?? null }),
    async onAgentEvent(handler: (u: AgentUpdate) => void): Promise<Unsubscribe> {
      return on<AgentUpdate>(EVENT_AGENT, handler);
    },
    listNotices: () => call<Notice[]>('list_notices'),
    dismissNotice: (id) => call<Notice[]>('dismiss_notice', { id }),
    noticeAction: (noticeId, actionId) => call<Notice[]>('notice_action', { noticeId, actionId }),
    snoozeAction: (actionId) => call<number>('snooze_action', { actionId }),
    async onNoticesChanged(handler: (n: Notice[]) => void): Promise<Unsubscribe> {
      return on<Notice[]>(EVENT_NOTICES, handler);
    },
    discardAll: (reason, folder) => call<string[]>('discard_all', { reason, folder: folder ?? null }),
    async onCloseRequested(handler: (e: CloseRequested) => void): Promise<Unsubscribe> {
      return on<CloseRequested>(EVENT_CLOSE_REQUESTED, handler);
    },
    confirmClose: (proceed) => call<void>('confirm_close', { proceed }),
    searchHistory: (query, offset, limit) => call<HistoryPage>('search_history', { query, offset, limit }),
    exportHistory: (query, format, path) => call<ExportOutcome>('export_history', { query, format, path }),
    async pickSaveFile(defaultName, format) {
      try {
        const name = format === 'csv' ? 'CSV' : 'JSON';
        const path = await save({ defaultPath: defaultName, filters: [{ name, extensions: [format] }] });
        return typeof path === 'string' ? path : null;
      } catch (err) {
        throw toBackendError(err);
      }
    },
    getSincePreview: (actionId, path) => call<SincePreview>('get_since_preview', { actionId, path }),
    async pickPaths({ directory, multiple }) {
      const { workspaceRoot } = await call<SessionInfo>('get_session');
      let picked: string | string[] | null;
      try {
        picked = await open({ directory, multiple, defaultPath: workspaceRoot, title: directory ? 'Choose folders' : 'Choose files' });
      } catch (err) {
        throw toBackendError(err);
      }
      if (picked === null) return null;
      return pickedInside(workspaceRoot, Array.isArray(picked) ? picked : [picked]);
    },
    cancelToolRun: () => call<void>('cancel_tool_run', { runIds: [...inFlight] }),
    getFileReplacements: (actionId, path) => call<FileReplacements>('get_file_replacements', { actionId, path }),
    addComment: (actionId, draft) => call<ReviewComment[]>('add_comment', { actionId, draft }),
    editComment: (actionId, commentId, text) => call<ReviewComment[]>('edit_comment', { actionId, commentId, text }),
    deleteComment: (actionId, commentId) => call<ReviewComment[]>('delete_comment', { actionId, commentId }),
    setFileViewed: (actionId, path, viewed) => call<void>('set_file_viewed', { actionId, path, viewed }),
  };
}
