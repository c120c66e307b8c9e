import { LlamaDialogError } from '../errors.js';
import { DEFAULT_TEMPLATE_PLACEMENT, type TemplatePlacement } from './turn-template.js';

/**
 * The settings of a node that shape its prompt and may change between turns (`changeParam` while Idle or Paused).
 * The node's current params are their one source: the node builds these from them on every turn and hands them
 * to `NodePromptProjector.project`, which keeps no copy apart from the previous prompt's (to name a miss).
 */
export interface ProjectionSettings {
  /** The node's System Prompt ('' = no system message unless a summary is used). */
  systemPrompt: string;
  /** Mustache template rendered for the current turn (null = none). */
  template: string | null;
  placement: TemplatePlacement;
  /** Name of the input slot this node answers instead of the user line (null = the user line). */
  input: string | null;
  /** Tool results longer than this many tokens are clipped with a visible mark. */
  toolResultTokenLimit: number;
  /** Most tokens the turn's knowledge texts may take in the template (0 = no cap); lower-ranked chunks go first. */
  maxKnowledgeTokens: number;
}

/** What a caller may pass: '' and null mean none for template and input; unset fields take the defaults. */
export interface ProjectionSettingsInput {
  systemPrompt?: string;
  template?: string | null;
  placement?: Partial<TemplatePlacement>;
  input?: string | null;
  toolResultTokenLimit?: number;
  maxKnowledgeTokens?: number;
}

export const DEFAULT_TOOL_RESULT_TOKEN_LIMIT = 512;

/**
 * Fills defaults and checks the values.
 * @throws LlamaDialogError `InvalidParamValue` for a placement other than before/after × system/user, or a tool
 *   result limit that is not a positive integer.
 */
export function resolveProjectionSettings(input: ProjectionSettingsInput = {}): ProjectionSettings {
  return {
    systemPrompt: input.systemPrompt ?? '',
    template: noneIfEmpty(input.template),
    placement: checkPlacement({ ...DEFAULT_TEMPLATE_PLACEMENT, ...input.placement }),
    input: noneIfEmpty(input.input),
    toolResultTokenLimit: checkToolResultLimit(input.toolResultTokenLimit ?? DEFAULT_TOOL_RESULT_TOKEN_LIMIT),
    maxKnowledgeTokens: checkKnowledgeCap(input.maxKnowledgeTokens ?? 0),
  };
}

/** Identity of every setting that shapes how turns are rendered, apart from the system prompt. */
export function renderingKey(settings: ProjectionSettings): string {
  return JSON.stringify([
    settings.template,
    settings.placement.position,
    settings.placement.role,
    settings.placement.keep,
    settings.input,
    settings.toolResultTokenLimit,
    settings.maxKnowledgeTokens,
  ]);
}

/** A template or input slot name: absent and '' both mean none. */
function noneIfEmpty(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value;
}

function checkPlacement(placement: TemplatePlacement): TemplatePlacement {
  if (placement.position !== 'before' && placement.position !== 'after') {
    throw new LlamaDialogError('InvalidParamValue', `placement.position must be "before" or "after", got ${JSON.stringify(placement.position)}`);
  }
  if (placement.role !== 'system' && placement.role !== 'user') {
    throw new LlamaDialogError('InvalidParamValue', `placement.role must be "system" or "user", got ${JSON.stringify(placement.role)}`);
  }
  if (placement.keep !== 'turn' && placement.keep !== 'history') {
    throw new LlamaDialogError('InvalidParamValue', `placement.keep must be "turn" or "history", got ${JSON.stringify(placement.keep)}`);
  }
  return { position: placement.position, role: placement.role, keep: placement.keep };
}

function checkKnowledgeCap(cap: number): number {
  if (!Number.isInteger(cap) || cap < 0) {
    throw new LlamaDialogError('InvalidParamValue', `maxKnowledgeTokens must be a non-negative integer (0 = no cap), got ${cap}`);
  }
  return cap;
}

function checkToolResultLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new LlamaDialogError('InvalidParamValue', `toolResultTokenLimit must be a positive integer, got ${limit}`);
  }
  return limit;
}
