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
}

/** What a caller may pass: '' and null mean none for template and input; unset fields take the defaults. */
export interface ProjectionSettingsInput {
  systemPrompt?: string;
  template?: string | null;
  placement?: Partial<TemplatePlacement>;
  input?: string | null;
  toolResultTokenLimit?: number;
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
  };
}

/** Identity of every setting that shapes how turns are rendered, apart from the system prompt. */
export function renderingKey(settings: ProjectionSettings): string {
  return JSON.stringify([settings.template, settings.placement.position, settings.placement.role, settings.input, settings.toolResultTokenLimit]);
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
  return { position: placement.position, role: placement.role };
}

function checkToolResultLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new LlamaDialogError('InvalidParamValue', `toolResultTokenLimit must be a positive integer, got ${limit}`);
  }
  return limit;
}
