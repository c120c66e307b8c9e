import { z } from 'zod';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { recentHistoryMessages } from '../inference/classifier-prompt.js';
import { NodeAssembler } from '../inference/node-assembler.js';
import { MAX_LETTER_OPTIONS, decide, formatOptions, labelTokens, letterLabels, normalize, scoreLetters } from '../inference/letter-scoring.js';
import { inferenceParamsShape } from '../inference/shared-params.js';

const paramsSchema = z.strictObject({
  ...inferenceParamsShape,
  /** Attribute name → its possible values; each winner is written to the agent variable of that name. */
  attributes: z
    .record(
      z.string().min(1).max(128),
      z.array(z.string().min(1).max(500)).min(2, 'an attribute needs at least two values').max(MAX_LETTER_OPTIONS),
    )
    .refine((attributes) => Object.keys(attributes).length > 0, 'give at least one attribute'),
  historyTurns: z.number().int().min(0).max(64).default(0),
  /** Lowest probability a value needs to be written (default 0: the best value is always written). */
  threshold: z.number().min(0).max(1).default(0),
  margin: z.number().min(0).max(1).default(0),
  systemPrompt: z.string().max(20_000).default(''),
  input: z.string().min(1).nullable().default(null),
});
type ClassifyAttributesParams = z.infer<typeof paramsSchema>;

class ClassifyAttributesNode implements GraphNode {
  readonly type = 'ClassifyAttributesLLM';
  private readonly assembler = new NodeAssembler();

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as ClassifyAttributesParams;
    const inference = run.inference();
    const assembler = this.assembler.get(inference);
    const system = [params.systemPrompt, 'You classify the last user message. Answer with the letter of the best option only.']
      .filter((part) => part !== '')
      .join('\n\n');
    // Same system message and history for every attribute: only the final question differs, so the KV cache
    // keeps the shared prefix from one attribute to the next.
    const history = recentHistoryMessages(run.dialog.interactions, params.historyTurns);
    const line = run.input(params.input) ?? '';
    const results: Record<string, { value: string | null; probability: number }> = {};
    for (const [name, values] of Object.entries(params.attributes)) {
      const labels = letterLabels(values.length);
      const question = `${line}\n\n---\nWhich ${name} fits this message? Options:\n${formatOptions(values)}`;
      const messages = [{ role: 'system' as const, content: system }, ...history, { role: 'user' as const, content: question }];
      const logProbabilities = await scoreLetters(run, inference, assembler, messages, labelTokens(inference.tokenizer, labels));
      const decision = decide(normalize(logProbabilities), params.threshold, params.margin);
      const value = decision.winner >= 0 ? (values[decision.winner] as string) : null;
      results[name] = { value, probability: decision.best };
      if (value !== null) run.variables.set(name, value);
    }
    run.diagnostics.addData({ attributes: results });
    run.emitNodeEvent('attributes', { attributes: results });
    return 'default';
  }
}

/** Classifies several attributes of the user's line at once (letter labels, like ClassifyIntentLLM) into agent variables. */
export const classifyAttributesNode = defineNode({
  type: 'ClassifyAttributesLLM',
  paramsSchema,
  exits: ['default'],
  structuralParams: ['model', 'contextSize', 'attributes'],
  usesModel: true,
  writesVariables: (params) => Object.keys(params.attributes),
  create: (node) => new ClassifyAttributesNode(node.name),
});
