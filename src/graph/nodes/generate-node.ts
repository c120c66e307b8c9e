import { z } from 'zod';
import type { GenerateResult } from '../../engine/types.js';
import type { NodePrefillContext, NodeSizeContext } from '../node-definition.js';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import type { NodePromptProjector } from '../../prompt/node-prompt-projector.js';
import type { InferencePort } from '../inference-port.js';
import { createNodeProjector, projectionSettingsFrom } from '../inference/projected-prompt.js';
import { generateFromProjection } from '../inference/projected-generation.js';
import { checkTemplate } from '../inference/template-check.js';
import { projectedStaticPrefix } from '../inference/static-prefix.js';
import {
  historyRoleSchema,
  inferenceParamsShape,
  inferenceStructuralParams,
  projectedPromptParamsShape,
  samplingFrom,
  samplingParamsShape,
  checkReplyFits,
} from '../inference/shared-params.js';

/** Generate's params; GenerateAndSpeak has these and its speech params. */
export const generateParamsShape = {
  ...inferenceParamsShape,
  ...samplingParamsShape,
  ...projectedPromptParamsShape,
  /** Assistant (default): later turns see the reply; None: hidden from every later turn (the later nodes of this turn still see it, e.g. a reasoning step). */
  historyRole: historyRoleSchema,
  /** Tokens kept free for the reply (1 ≤ maxTokens < contextSize). */
  maxTokens: z.number().int().min(1).max(1 << 20).default(256),
  /** true (default): stream pieces as answerText deltas; false: one answerText with the whole reply. */
  stream: z.boolean().default(true),
  stop: z.array(z.string().min(1).max(256)).max(16).default([]),
  /** Share of the budget a trim brings the prompt down to (default 0.75). */
  trimTargetRatio: z.number().gt(0).max(1).default(0.75),
};
const paramsSchema = z.strictObject(generateParamsShape);
export type GenerateParams = z.infer<typeof paramsSchema>;

/** Generate's node; GenerateAndSpeak extends it (same prompt, inference and reply, plus speech). */
export class GenerateNode implements GraphNode {
  readonly type: string = 'Generate';
  private projector: NodePromptProjector | undefined;

  constructor(readonly name: string) {}

  private projectorFor(inference: InferencePort, params: GenerateParams, maintainHistory: boolean): NodePromptProjector {
    this.projector ??= createNodeProjector(inference, {
      node: this.name,
      maxTokens: params.maxTokens,
      trimTargetRatio: params.trimTargetRatio,
      maintainHistory,
    });
    return this.projector;
  }

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as GenerateParams;
    const result = await this.generateReply(run, params, params.stream ? (piece) => run.emitAnswer(piece, true) : undefined);
    this.recordReply(run, params, result);
    return 'default';
  }

  /** Projects the dialog into the node's prompt and generates; `onToken` gets each piece as it streams. */
  protected async generateReply(run: NodeRunContext, params: GenerateParams, onToken: ((piece: string) => void) | undefined): Promise<GenerateResult> {
    const inference = run.inference();
    const projector = this.projectorFor(inference, params, run.settings.maintainDialogueHistory);
    const projection = projector.project(run.dialog, { settings: projectionSettingsFrom(params), variables: run.variables.toObject() });
    return generateFromProjection(run, inference, projection, {
      maxTokens: params.maxTokens,
      sampling: samplingFrom(params),
      stop: params.stop,
      ...(onToken ? { onToken } : {}),
    });
  }

  /** Writes the reply into the dialog; a node that did not stream sends it whole. */
  protected recordReply(run: NodeRunContext, params: GenerateParams, result: GenerateResult): void {
    run.dialog.addReply({
      node: this.name,
      text: result.text,
      tokens: result.tokens,
      historyRole: params.historyRole,
      model: run.inference().modelId,
    });
    if (!params.stream) run.emitAnswer(result.text, false);
  }

  async prefill({ params, inference, variables, maintainDialogueHistory }: NodePrefillContext): Promise<void> {
    const generate = params as GenerateParams;
    const shape = { node: this.name, maxTokens: generate.maxTokens, trimTargetRatio: generate.trimTargetRatio, maintainHistory: maintainDialogueHistory };
    const prefix = projectedStaticPrefix(inference, shape, generate, variables);
    if (prefix.length > 0) await inference.prefill(prefix);
  }
}

/** What Generate's definition says beyond its type and params, shared with GenerateAndSpeak. */
export const generateDefinitionTraits = {
  exits: ['default'],
  structuralParams: inferenceStructuralParams,
  usesModel: true,
  checkSizes: (params: GenerateParams, context: NodeSizeContext) => checkReplyFits(params, context),
  check: (params: GenerateParams) => checkTemplate(params.template),
} as const;

/** Calls the model on the node's projected prompt and streams (or returns) the reply. */
export const generateNode = defineNode({
  type: 'Generate',
  paramsSchema,
  ...generateDefinitionTraits,
  create: (node) => new GenerateNode(node.name),
});
