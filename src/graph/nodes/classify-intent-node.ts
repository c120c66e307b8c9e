import { z } from 'zod';
import { defineNode, type GraphNode, type NodePrefillContext } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { recentHistoryTurns, type ClassifierPrompt } from '../inference/classifier-prompt.js';
import { staticPrefix } from '../inference/static-prefix.js';
import { NodeAssembler } from '../inference/node-assembler.js';
import { MAX_LETTER_OPTIONS, decide, formatOptions, labelTokens, letterLabels, normalize, scoreLetters } from '../inference/letter-scoring.js';
import { inferenceParamsShape } from '../inference/shared-params.js';

const paramsSchema = z.strictObject({
  ...inferenceParamsShape,
  intents: z
    .array(z.strictObject({ id: z.string().min(1).max(128), description: z.string().min(1).max(2000) }))
    .min(1, 'give at least one intent')
    .max(MAX_LETTER_OPTIONS, `at most ${MAX_LETTER_OPTIONS} intents (one letter each)`),
  /** Earlier turns shown to the classifier (default 0: the current line only). */
  historyTurns: z.number().int().min(0).max(64).default(0),
  /** Lowest probability (over the intents) the winner needs (default 0). */
  threshold: z.number().min(0).max(1).default(0),
  /** Lowest lead over the runner-up the winner needs (default 0). */
  margin: z.number().min(0).max(1).default(0),
  /** Extra instructions placed before the intent list. */
  systemPrompt: z.string().max(20_000).default(''),
  input: z.string().min(1).nullable().default(null),
  /** Agent variable (string) that receives the winning intent id; '' is written when none wins. */
  variable: z.string().min(1).max(128).nullable().default(null),
});
type ClassifyIntentParams = z.infer<typeof paramsSchema>;

/** Slot of the current turn that receives the winning intent id (templates read `{{slots.intent}}`). */
export const INTENT_SLOT = 'intent';

class ClassifyIntentNode implements GraphNode {
  readonly type = 'ClassifyIntentLLM';
  private readonly assembler = new NodeAssembler();

  constructor(
    readonly name: string,
    private readonly routedIntents: ReadonlySet<string>,
  ) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as ClassifyIntentParams;
    const inference = run.inference();
    const labels = letterLabels(params.intents.length);
    const prompt: ClassifierPrompt = {
      system: { role: 'system', content: instructionsFor(params) },
      history: recentHistoryTurns(run.dialog.interactions, params.historyTurns),
      current: { role: 'user', content: run.input(params.input) ?? '' },
    };
    const logProbabilities = await scoreLetters(run, inference, this.assembler.get(inference), prompt, labelTokens(inference.tokenizer, labels));
    const decision = decide(normalize(logProbabilities), params.threshold, params.margin);
    const scores = Object.fromEntries(params.intents.map((intent, index) => [intent.id, decision.probabilities[index] ?? 0]));
    const winner = decision.winner >= 0 ? params.intents[decision.winner] : undefined;
    run.diagnostics.addData({ scores, intent: winner?.id ?? null, threshold: params.threshold, margin: params.margin });
    run.emitNodeEvent('intent', { intent: winner?.id ?? null, probability: decision.best, scores });
    if (params.variable) run.variables.set(params.variable, winner?.id ?? '');
    if (!winner) return 'notFound';
    run.dialog.setSlot(INTENT_SLOT, winner.id);
    return this.routedIntents.has(winner.id) ? winner.id : 'found';
  }

  /** Decodes the instructions and option list: everything before the line being classified. */
  async prefill({ params, inference }: NodePrefillContext): Promise<void> {
    const assembler = this.assembler.get(inference);
    const system = { role: 'system' as const, content: instructionsFor(params as ClassifyIntentParams) };
    const prefix = staticPrefix((line) => assembler.assemble([system, { role: 'user', content: line }]).tokens);
    if (prefix.length > 0) await inference.prefill(prefix);
  }
}

function instructionsFor(params: ClassifyIntentParams): string {
  return [
    params.systemPrompt,
    'Classify the intent of the last user message. Options:',
    formatOptions(params.intents.map((intent) => intent.description)),
    'Answer with the letter of the best option only.',
  ]
    .filter((part) => part !== '')
    .join('\n\n');
}

/**
 * Picks one intent by the model's next-token probabilities over letter labels (A, B, …): the best intent wins when
 * its probability (renormalized over the intents) ≥ threshold and it leads the runner-up by ≥ margin.
 * The winner goes to the turn's `intent` slot (and to `variable` when set). Exits: `found` / `notFound`, plus one
 * exit per intent id: when the winner's own exit is wired to a node the turn goes there, otherwise to `found`.
 */
export const classifyIntentNode = defineNode({
  type: 'ClassifyIntentLLM',
  paramsSchema,
  exits: ['found', 'notFound'],
  extraExits: (params) => params.intents.map((intent) => intent.id),
  structuralParams: ['model', 'contextSize', 'intents'],
  usesModel: true,
  writesVariables: (params) => (params.variable ? [params.variable] : []),
  writesSlots: () => [INTENT_SLOT],
  check(params) {
    const ids = new Set<string>();
    for (const intent of params.intents) {
      if (ids.has(intent.id)) return `duplicate intent id "${intent.id}"`;
      if (intent.id === 'found' || intent.id === 'notFound') return `intent id "${intent.id}" is reserved for an exit`;
      ids.add(intent.id);
    }
    return undefined;
  },
  create: (node) =>
    new ClassifyIntentNode(
      node.name,
      new Set(
        (node.params as ClassifyIntentParams).intents.map((intent) => intent.id).filter((id) => node.exits[id] != null),
      ),
    ),
});
