import { z } from 'zod';
import { defineNode, type GraphNode, type NodePrefillContext } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { recentHistoryTurns, type ClassifierPrompt } from '../inference/classifier-prompt.js';
import { staticPrefix } from '../inference/static-prefix.js';
import { NodeAssembler } from '../inference/node-assembler.js';
import { MAX_LETTER_OPTIONS, decide, formatOptions, labelTokens, letterLabels, normalize } from '../inference/letter-scoring.js';
import { scoreContinuations } from '../inference/continuation-scoring.js';
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
    const system = { role: 'system' as const, content: instructionsFor(params) };
    // Same system message and history for every attribute: only the final question differs, so the KV cache
    // keeps the shared prefix from one attribute to the next.
    const history = recentHistoryTurns(run.dialog.interactions, params.historyTurns);
    const line = run.input(params.input) ?? '';
    const results: Record<string, { value: string | null; probability: number; scores: Record<string, number> }> = {};
    for (const [name, values] of Object.entries(params.attributes)) {
      const labels = letterLabels(values.length);
      const prompt: ClassifierPrompt = { system, history, current: { role: 'user', content: questionFor(line, name, values) } };
      const letters = [...labelTokens(inference.tokenizer, labels)].map((token) => Int32Array.of(token));
      const logProbabilities = await scoreContinuations(run, inference, assembler, prompt, letters);
      const decision = decide(normalize(logProbabilities), params.threshold, params.margin);
      const value = decision.winner >= 0 ? (values[decision.winner] as string) : null;
      // Every value's probability, as ClassifyIntentLLM reports its intents': a caller can see how close the call was.
      const scores = Object.fromEntries(values.map((candidate, index) => [candidate, decision.probabilities[index] ?? 0]));
      results[name] = { value, probability: decision.best, scores };
      if (value !== null) run.variables.set(name, value);
    }
    run.diagnostics.addData({ attributes: results });
    run.emitNodeEvent('attributes', { attributes: results });
    return 'default';
  }

  /** Decodes the instructions and the start of the first question: everything before the line. */
  async prefill({ params, inference }: NodePrefillContext): Promise<void> {
    const attributes = params as ClassifyAttributesParams;
    const assembler = this.assembler.get(inference);
    const system = { role: 'system' as const, content: instructionsFor(attributes) };
    const [name, values] = Object.entries(attributes.attributes)[0] as [string, string[]];
    const prefix = staticPrefix((line) => assembler.assemble([system, { role: 'user', content: questionFor(line, name, values) }]).tokens);
    if (prefix.length > 0) await inference.prefill(prefix);
  }
}

function instructionsFor(params: ClassifyAttributesParams): string {
  return [params.systemPrompt, 'You classify the last user message. Answer with the letter of the best option only.']
    .filter((part) => part !== '')
    .join('\n\n');
}

function questionFor(line: string, name: string, values: readonly string[]): string {
  return `${line}\n\n---\nWhich ${name} fits this message? Options:\n${formatOptions(values)}`;
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
