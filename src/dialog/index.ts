export { Dialog, type DialogOptions, type ReplyInput, type ToolCallInput, type LatestSummary } from './dialog.js';
export { DEFAULT_DIALOG_LIMITS, type DialogLimits } from './dialog-limits.js';
export {
  DIALOG_SNAPSHOT_KIND,
  DIALOG_SNAPSHOT_VERSION,
  dialogSnapshotSchema,
  parseDialogSnapshot,
  type DialogSnapshot,
  type InteractionInput,
} from './dialog-snapshot.js';
export {
  isToolCallReplayed,
  type HistoryRole,
  type InstructionItem,
  type Interaction,
  type KnowledgeItem,
  type Reply,
  type SummaryRecord,
  type ToolCallDisposition,
  type ToolCallRecord,
  type ToolCallStatus,
} from './interaction.js';
