export type { ChatMessage, ChatRole, ProjectedMessage, PromptMessage, ToolDefinition } from './chat-message.js';
export {
  ChatTemplateRenderer,
  type ChatRenderOptions,
  type ChatTemplateCapabilities,
  type ChatTemplateRendererOptions,
  type ChatTemplateSource,
  type ModelTemplateOptions,
} from './chat-template-renderer.js';
export { adaptConversation, type ConversationShapeAdaptations } from './conversation-shape-adapter.js';
export { BUILTIN_TEMPLATE_FAMILIES, detectTemplateFamily, renderBuiltinTemplate, type BuiltinTemplateFamily } from './builtin-chat-templates.js';
export { PromptAssembler, type AssembledPrompt, type PromptAssemblerOptions, type TemplateVerification } from './prompt-assembler.js';
export { TokenCache } from './token-cache.js';
export { DEFAULT_TRIM_TARGET_RATIO, resolvePromptBudget, type PromptBudget } from './budget.js';
export { trimToBudget, type TrimDecision, type TrimInput } from './trim-to-budget.js';
export {
  DEFAULT_SUMMARY_INSTRUCTIONS,
  buildSummaryMessages,
  planRollingSummary,
  turnTranscript,
  type RollingSummarySchedule,
  type SummaryPlan,
  type TranscriptLabels,
} from './rolling-summary.js';
export { KNOWLEDGE_BLOCK_LABEL, formatKnowledgeBlock } from './knowledge-block.js';
export { SUMMARY_LABEL_END, SUMMARY_LABEL_START, formatSummaryForSystem } from './summary-label.js';
export {
  DEFAULT_TOOL_RESULT_TOKEN_LIMIT,
  resolveProjectionSettings,
  type ProjectionSettings,
  type ProjectionSettingsInput,
} from './projection-settings.js';
export { DEFAULT_TEMPLATE_PLACEMENT, buildTemplateView, renderTurnTemplate, type TemplatePlacement } from './turn-template.js';
export {
  NodePromptProjector,
  defaultToolCallFormat,
  type NodePromptProjectorOptions,
  type ProjectionChanges,
  type ProjectOptions,
  type ProjectionDiagnostics,
  type PromptProjection,
} from './node-prompt-projector.js';
