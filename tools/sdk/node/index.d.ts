// Types of resolve-desk-tool (the design note's CustomToolFactory and its API).
import type { Static, TSchema, Type as TypeBuilder } from "@sinclair/typebox";

export interface TextContent {
  type: "text";
  text: string;
}

export interface AgentToolResult<TDetails = unknown> {
  content: TextContent[];
  details?: TDetails;
  isError?: boolean;
}

/** One change of a change set; edits, deletions and renames carry the sha256 the tool read. */
export type Change =
  | { op: "edit"; path: string; sha256: string; contents: string }
  | { op: "create"; path: string; contents: string }
  | { op: "delete"; path: string; sha256: string }
  | { op: "rename"; from: string; to: string; sha256: string };

export interface ChangeSet {
  changes: Change[];
  /** What a successful apply answers (default `Applied: <label>.`). */
  appliedText?: string;
  /** What a discard answers (`<text> Reason: <reason>`); kept across restarts. */
  discardText?: string;
}

export interface CustomToolPendingAction {
  label: string;
  apply?: (reason: string) => Promise<AgentToolResult<unknown>>;
  reject?: (reason: string) => Promise<AgentToolResult<unknown> | undefined>;
  details?: unknown;
  /** Defaults to "custom_tool". */
  sourceToolName?: string;
  /** Instead of apply/reject: files the engine writes itself (hash-checked, atomic). */
  changeSet?: ChangeSet;
}

export interface CustomToolAPI {
  typebox: { Type: typeof TypeBuilder };
  pushPendingAction(action: CustomToolPendingAction): Promise<string>;
  progress(done: number, total?: number, message?: string): void;
  sha256(data: string | Uint8Array): string;
  readWorkspaceFile(path: string): { path: string; text: string; sha256: string };
  workspaceRoot(): string;
}

export interface CustomTool<TParams extends TSchema = TSchema> {
  name: string;
  label: string;
  description: string;
  parameters: TParams;
  execute(toolCallId: string, params: Static<TParams>): Promise<AgentToolResult<unknown> | string>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CustomToolFactory = (pi: CustomToolAPI) => CustomTool<any> | CustomTool<any>[];

export const STORE_UNAVAILABLE: string;
/** The tool protocol this SDK speaks. */
export const PROTOCOL: number;
/** Why this SDK cannot serve a desk speaking `deskProtocol` (default: RESOLVE_DESK_PROTOCOL), naming both versions; null when it can. */
export function protocolMismatch(deskProtocol?: string): string | null;
export const typebox: { Type: typeof TypeBuilder };
export const Type: typeof TypeBuilder;
export function sha256(data: string | Uint8Array): string;
export function workspaceRoot(): string;
export function readWorkspaceFile(path: string): { path: string; text: string; sha256: string };
export function serve(factory: CustomToolFactory, options?: { toolName?: string; deskProtocol?: string }): CustomToolAPI;
