// The one boundary between the UI and whatever serves it. Components and the
// app talk to a `Backend`; only this folder knows about Tauri.
import type {
  AgentSettings,
  PersonEdit,
  AgentUpdate,
  CloseRequested,
  ExportFormat,
  ExportOutcome,
  HistoryPage,
  HistoryQuery,
  ConversationView,
  NewConversationOutcome,
  Notice,
  Policy,
  FileDiff,
  FileEntry,
  FolderList,
  FoldersChanged,
  InboxItem,
  DeskSettings,
  RevealAction,
  FileTexts,
  HistoryEntry,
  IpcErrorCode,
  QueueChanged,
  QueueSnapshot,
  RenameRow,
  ResolveChoice,
  ResolveOutcome,
  LeaveOut,
  FileReplacements,
  CommentDraft,
  ReviewComment,
  ScriptStep,
  SessionInfo,
  SincePreview,
  ToolInfo,
  ToolLog,
  ToolProgress,
  ToolRunOutcome,
} from './generated/protocol';

export type * from './generated/protocol';

/** A failed command: the UI branches on `code`, shows `message` to people. */
export class BackendError extends Error {
  readonly code: IpcErrorCode;
  constructor(code: IpcErrorCode, message: string) {
    super(message);
    this.name = 'BackendError';
    this.code = code;
  }
}

const CODES: ReadonlySet<string> = new Set<IpcErrorCode>([
  'noPendingAction', 'idMismatch', 'reasonRequired', 'stale', 'applyFailed', 'busy',
  'invalidParams', 'unknownTool', 'unknownAction', 'unknownFile', 'pathOutsideWorkspace',
  'notFound', 'io', 'cancelled', 'closed', 'internal',
]);

/** Turns whatever a command rejected with into a `BackendError`. */
export function toBackendError(err: unknown): BackendError {
  if (err instanceof BackendError) return err;
  if (typeof err === 'object' && err !== null && 'code' in err && 'message' in err) {
    const { code, message } = err as { code: unknown; message: unknown };
    const known = typeof code === 'string' && CODES.has(code);
    return new BackendError(known ? (code as IpcErrorCode) : 'internal', String(message));
  }
  if (err instanceof Error) return new BackendError('internal', err.message);
  return new BackendError('internal', String(err));
}

export type Unsubscribe = () => void;

/** The whole surface the UI needs. Every method rejects with `BackendError`. */
export interface Backend {
  getSession(): Promise<SessionInfo>;
  listActions(): Promise<QueueSnapshot>;
  getActionFiles(actionId: string): Promise<FileEntry[]>;
  /** `context`: lines around changes; `null` = backend default (3); huge = whole file. */
  getFileDiff(actionId: string, path: string, context: number | null): Promise<FileDiff>;
  /** Both sides of one file whole (highlighting, unfolding); `null` sides for binary/too-large files. */
  getFileTexts(actionId: string, path: string): Promise<FileTexts>;
  /** A review's next round: what changed in `path` since the previous round's proposal. */
  getRoundDiff(actionId: string, path: string): Promise<FileDiff>;
  getActionRenames(actionId: string): Promise<RenameRow[]>;
  /** `leaveOut` (apply only): a partial apply; absent or `null` = the whole action. */
  /** `edits`: the person's own text for some files (edit, then apply); apply only. */
  resolveAction(action: ResolveChoice, reason: string, expectedId: string, leaveOut?: LeaveOut | null, edits?: PersonEdit[] | null): Promise<ResolveOutcome>;
  listHistory(): Promise<HistoryEntry[]>;
  listTools(): Promise<ToolInfo[]>;
  /** The end of an external tool's stderr log; rejects with `unknownTool` for a built-in tool. */
  readToolLog(name: string): Promise<ToolLog>;
  /** The queue was painted for the first time: the page's start-up marks (ms since `origin`, epoch ms). */
  startupPainted(marks: Array<[string, number]>, origin: number): Promise<void>;
  runTool(name: string, params: unknown): Promise<ToolRunOutcome>;
  rerunAction(actionId: string): Promise<ToolRunOutcome>;
  runScript(text: string): Promise<ScriptStep[]>;
  /** Opens a folder beside the open ones (or finds it open) and shows it. */
  openWorkspace(path: string): Promise<SessionInfo>;
  /** Every open folder, in the order opened, and the one shown. */
  listFolders(): Promise<FolderList>;
  /** Shows another open folder: every other method then acts on it. Rejects with `notFound` when it is not open. */
  selectFolder(root: string): Promise<SessionInfo>;
  /** Closes one open folder (its pending actions stay kept unless discarded first); the last one cannot be closed (`invalidParams`). */
  closeFolder(root: string): Promise<FolderList>;
  /** Every open folder's pending actions, newest push first, each with its place in its folder's stack. */
  listInbox(): Promise<InboxItem[]>;
  /** Whether the desk notifies and shows a tray icon. */
  getDeskSettings(): Promise<DeskSettings>;
  saveDeskSettings(settings: DeskSettings): Promise<DeskSettings>;
  /** The person clicked a notification: show that folder (the backend shows it already) with that action. */
  onRevealAction(handler: (event: RevealAction) => void): Promise<Unsubscribe>;
  /** A folder was opened, closed or shown, or one's stack changed. */
  onFoldersChanged(handler: (event: FoldersChanged) => void): Promise<Unsubscribe>;
  recentWorkspaces(): Promise<string[]>;
  /** Asks the person for a folder; `null` when they cancel. */
  pickFolder(): Promise<string | null>;
  onQueueChanged(handler: (event: QueueChanged) => void): Promise<Unsubscribe>;
  onToolProgress(handler: (event: ToolProgress) => void): Promise<Unsubscribe>;

  /** Who resolves; refused (with the engine's message) while actions are pending. */
  setPolicy(policy: Policy): Promise<SessionInfo>;
  /** Starts an agent turn in the background; resolves to its turn number. Events arrive through `onAgentEvent`. */
  startAgentTurn(prompt: string): Promise<number>;
  /** Cancels the running turn (its `turnDone` event follows). */
  stopAgentTurn(): Promise<void>;
  /** Stops any turn, discards the pending actions with `discardReason` (required when some are pending), forgets the messages. */
  newConversation(discardReason: string | null): Promise<NewConversationOutcome>;
  getConversation(): Promise<ConversationView>;
  getAgentSettings(): Promise<AgentSettings>;
  saveAgentSettings(settings: AgentSettingsInput): Promise<AgentSettings>;
  onAgentEvent(handler: (update: AgentUpdate) => void): Promise<Unsubscribe>;

  /** Banners from the backend (a broken decision journal, a recovered apply). */
  listNotices(): Promise<Notice[]>;
  /** Closes a dismissible banner; rejects (`invalidParams`) for one that stays while its problem lasts. */
  dismissNotice(id: string): Promise<Notice[]>;
  /** A banner's button was clicked (e.g. "Trust this folder's tools", "Not now"); the banners to show now. Rejects with the backend's reason (e.g. the tools changed since they were shown). */
  noticeAction(noticeId: string, actionId: string): Promise<Notice[]>;
  /**
   * "Not now" on an action an agent waits on: the waiting agents are told the person will
   * review it later and nothing was applied; the action stays pending. How many waits were
   * answered (0: nobody waited any more). Rejects with `unknownAction` when it left the stack.
   */
  snoozeAction(actionId: string): Promise<number>;
  /** The whole list, whenever it changes. */
  onNoticesChanged(handler: (notices: Notice[]) => void): Promise<Unsubscribe>;

  /**
   * Discards every pending action of the open folder `folder` (a root; absent or `null`: of
   * every open folder) as the person, top first, with `reason` (a blank one is refused); each
   * discard's text.
   */
  discardAll(reason: string, folder?: string | null): Promise<string[]>;
  /** The window was asked to close while actions are pending: the UI asks the person, then answers with `confirmClose`. */
  onCloseRequested(handler: (event: CloseRequested) => void): Promise<Unsubscribe>;
  /** `true`: close the window now (pending actions are kept unless discarded first); `false`: stay. */
  confirmClose(proceed: boolean): Promise<void>;

  /** One page of the workspace's history matching `query`, newest first (`limit` ≤ 1000). */
  searchHistory(query: HistoryQuery, offset: number, limit: number): Promise<HistoryPage>;
  /** Writes every entry matching `query` to `path` (the whole file or nothing). */
  exportHistory(query: HistoryQuery, format: ExportFormat, path: string): Promise<ExportOutcome>;
  /** Asks the person where to save `defaultName`; `null` when they cancel. */
  pickSaveFile(defaultName: string, format: ExportFormat): Promise<string | null>;
  /** What changed at a stale action's file since its preview: the previewed content → the disk now. */
  getSincePreview(actionId: string, path: string): Promise<SincePreview>;
  /**
   * Reverts an applied change set from the history (its own decision, with `reason`). An
   * outcome with `isError` when files changed since the apply (nothing written; the message
   * names them); rejects when the entry cannot be undone (`unknownAction`, expired: `invalidParams`).
   */
  undoDecision(decisionId: string, reason: string): Promise<ResolveOutcome>;
  /** Writes an undone entry's bytes again; like `undoDecision`. */
  redoDecision(decisionId: string, reason: string): Promise<ResolveOutcome>;

  /**
   * Asks the person for files (or folders) of the open workspace, starting at its root.
   * Resolves to workspace-relative paths with `/` (`null` when they cancel); rejects with
   * `pathOutsideWorkspace`, naming the path, when one picked is outside the workspace.
   */
  pickPaths(options: PickPathsOptions): Promise<string[] | null>;
  /**
   * Cancels the UI's tool call in flight (`runTool`, `rerunAction`, `runScript`): the tool
   * stops, nothing is pushed, and that call rejects with code `cancelled`. Resolves at once
   * when nothing runs.
   */
  cancelToolRun(): Promise<void>;
  /** The single replacements of one `ast_edit` file, which a partial apply can leave out one by one. */
  getFileReplacements(actionId: string, path: string): Promise<FileReplacements>;
  /**
   * Comments on lines of a pending action (kept with it until the decision, which sends
   * them). Each resolves to the action's comments after the change, in file order; a bad
   * anchor or a blank text rejects with `invalidParams` and the backend's message.
   */
  addComment(actionId: string, draft: CommentDraft): Promise<ReviewComment[]>;
  editComment(actionId: string, commentId: string, text: string): Promise<ReviewComment[]>;
  deleteComment(actionId: string, commentId: string): Promise<ReviewComment[]>;
  /**
   * Marks a file of a pending action viewed, or clears the mark. The mark is pinned to the
   * proposal: a next round keeps it only where the file is proposed exactly as before.
   */
  setFileViewed(actionId: string, path: string, viewed: boolean): Promise<void>;
}

export type PickPathsOptions = { directory: boolean; multiple: boolean };

/** What the settings panel saves (the key itself never crosses). */
export type AgentSettingsInput = Pick<AgentSettings, 'baseUrl' | 'model' | 'apiKeyEnv' | 'resolveWaitSecs'> & {
  /** A key typed into the dialog: stored in the system keyring for `baseUrl`, never in the settings file. */
  apiKey?: string;
  /** Remove the key stored in the keyring for `baseUrl`. */
  forgetApiKey?: boolean;
};
