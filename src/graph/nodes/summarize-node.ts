import { z } from 'zod';
import { LlamaDialogError } from '../../errors.js';
import { buildSummaryMessages, planRollingSummary, type SummaryPlan } from '../../prompt/rolling-summary.js';
import { NodeAssembler } from '../inference/node-assembler.js';
import { defineNode, type GraphNode, type NodePrefillContext } from '../node-definition.js';
import { staticPrefix } from '../inference/static-prefix.js';
import type { NodeRunContext } from '../node-run-context.js';
import { assembledPromptInput, generationRecord } from '../inference/inference-record.js';
import { inferenceParamsShape, inferenceStructuralParams, samplingFrom, samplingParamsShape, checkReplyFits } from '../inference/shared-params.js';

const paramsSchema = z.strictObject({
  ...inferenceParamsShape,
  ...samplingParamsShape,
  /** Summarize once the not-yet-summarized turns (excluding the kept ones) hold this many tokens. */
  triggerTokens: z.number().int().min(1).max(1 << 20).default(1024),
  /** The latest this-many turns (the current one included) are never summarized. */
  keepRecentTurns: z.number().int().min(0).max(1024).default(2),
  /** Instructions for writing the summary ('' = built-in instructions). */
  systemPrompt: z.string().max(20_000).default(''),
  /** Longest summary (tokens). */
  maxTokens: z.number().int().min(1).max(1 << 20).default(256),
});
type SummarizeParams = z.infer<typeof paramsSchema>;

class SummarizeNode implements GraphNode {
  readonly type = 'Summarize';
  private readonly assembler = new NodeAssembler();

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as SummarizeParams;
    const inference = run.inference();
    const assembler = this.assembler.get(inference);
    const plan = planRollingSummary(
      run.dialog,
      { triggerTokens: params.triggerTokens, keepRecentTurns: params.keepRecentTurns },
      (text) => assembler.countContentTokens(text),
    );
    if (!plan) {
      run.diagnostics.addData({ summarized: false });
      return 'default';
    }
    const messages = buildSummaryMessages(plan, params.systemPrompt);
    const assembled = assembler.assemble(messages);
    if (assembled.tokens.length + params.maxTokens > inference.contextSize) {
      run.warn(
        `summary skipped: turns ${plan.fromTurn}–${plan.throughTurn} need ${assembled.tokens.length} prompt tokens + ${params.maxTokens} ` +
          `for the summary, more than the context of ${inference.contextSize}; lower triggerTokens or raise contextSize`,
      );
      run.diagnostics.addData({ summarized: false, pendingTokens: plan.pendingTokens });
      return 'default';
    }
    const result = await inference.generate({ prompt: assembled.tokens, maxTokens: params.maxTokens, sampling: samplingFrom(params) });
    if (result.stopReason === 'aborted' || run.signal.aborted) throw new LlamaDialogError('Aborted', 'summary cancelled');
    run.addTokensGenerated(result.tokens.length);
    const text = result.text.trim();
    run.dialog.addSummary({ node: this.name, text, coversThroughTurn: plan.throughTurn });
    run.emitNodeEvent('summaryWritten', { fromTurn: plan.fromTurn, throughTurn: plan.throughTurn, tokens: result.tokens.length });
    const input = assembledPromptInput(messages, assembled, {
      budget: inference.contextSize - params.maxTokens,
      contextSize: inference.contextSize,
      template: assembler.renderer.description,
      history: { firstTurnInPrompt: plan.fromTurn, historyTurnsInPrompt: plan.turns.length },
    });
    run.diagnostics.recordInference(generationRecord(input, result, { outputText: text }));
    run.diagnostics.addData({ summarized: true, fromTurn: plan.fromTurn, throughTurn: plan.throughTurn, pendingTokens: plan.pendingTokens });
    return 'default';
  }

  /** Decodes the summary instructions and the start of the request: everything before the transcript. */
  async prefill({ params, inference }: NodePrefillContext): Promise<void> {
    const summarize = params as SummarizeParams;
    const assembler = this.assembler.get(inference);
    const prefix = staticPrefix((line) => {
      const plan: SummaryPlan = { fromTurn: 0, throughTurn: 0, turns: [], transcript: line, previousSummary: null, pendingTokens: 0 };
      return assembler.assemble(buildSummaryMessages(plan, summarize.systemPrompt)).tokens;
    });
    if (prefix.length > 0) await inference.prefill(prefix);
  }
}

/**
 * Rolling summary (SPEC §3.5): when the turns not yet summarized, excluding the latest keepRecentTurns, reach
 * triggerTokens, writes a summary covering them and the previous summary. Answering nodes then append it to their
 * system message as labelled dialogue data. The turn's final answer is sent before this node runs, so placed after
 * the answering node it adds no wait before the reply.
 */
export const summarizeNode = defineNode({
  type: 'Summarize',
  paramsSchema,
  exits: ['default'],
  structuralParams: [...inferenceStructuralParams],
  usesModel: true,
  checkSizes: checkReplyFits,
  finalizesAnswer: true,
  create: (node) => new SummarizeNode(node.name),
});
