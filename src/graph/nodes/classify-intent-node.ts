import { z } from 'zod';
import { LlamaDialogError } from '../../errors.js';
import type { ChatMessage } from '../../prompt/chat-message.js';
import { defineNode, type GraphNode, type NodePrefillContext } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { recentHistoryTurns, type ClassifierPrompt } from '../inference/classifier-prompt.js';
import { staticPrefix } from '../inference/static-prefix.js';
import { NodeAssembler } from '../inference/node-assembler.js';
import { MAX_LETTER_OPTIONS, decide, formatOptions, labelTokens, letterLabels, normalize } from '../inference/letter-scoring.js';
import { scoreContinuations } from '../inference/continuation-scoring.js';
import type { InferencePort } from '../inference-port.js';
import type { PromptAssembler } from '../../prompt/prompt-assembler.js';
import { inferenceParamsShape } from '../inference/shared-params.js';

const paramsSchema = z.strictObject({
  ...inferenceParamsShape,
  intents: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(128),
        description: z.string().min(1).max(2000),
        /** Example lines of this intent, shown after its description: small models classify far better with them. */
        examples: z.array(z.string().min(1).max(500)).max(16).default([]),
      }),
    )
    .min(1, 'give at least one intent')
    .max(MAX_LETTER_OPTIONS, `at most ${MAX_LETTER_OPTIONS} intents (one letter each)`),
  /** Earlier turns shown to the classifier (default 0: the current line only). */
  historyTurns: z.number().int().min(0).max(64).default(0),
  /** Lowest probability (over the intents) the winner needs (default 0). */
  threshold: z.number().min(0).max(1).default(0),
  /** Lowest lead over the runner-up the winner needs (default 0). */
  margin: z.number().min(0).max(1).default(0),
  /**
   * How the model answers: `letters` (default, the reference's method) lists the intents as A, B, … and reads the
   * next-token probability of each letter; `labelWords` lists them by id and scores the whole id as the answer (the
   * sum of its tokens' log-probabilities), so give intents ids that are plain words ("buy", "repair"). Small models
   * pick words they can read far more reliably than letters: see the README's quality table.
   */
  method: z.enum(['letters', 'labelWords']).default('letters'),
  /**
   * Divide out the model's bias towards some answers (contextual calibration): the same question is asked once about
   * content-free lines ("N/A", "[MASK]", an empty line), and each intent's probability is divided by its mean
   * probability there before normalizing. Costs one extra question per content-free line, once per node.
   */
  calibrate: z.boolean().default(false),
  /**
   * Which lines `calibrate` measures the bias on. `contentFree` (default): "N/A", "[MASK]" and an empty line, as
   * Zhao et al. do. `examples`: the intents' own example lines, each intent weighted equally (the mean over a
   * balanced labelled sample is what an unbiased classifier spreads evenly). Use `examples` when one intent means
   * "none of these" (small talk, no tool): a content-free line *is* such a line, so content-free calibration
   * divides that intent's probability by nearly its whole share and the node stops choosing it. Costs one question
   * per example line, once per node; every intent needs at least one example.
   */
  calibrationLines: z.enum(['contentFree', 'examples']).default('contentFree'),
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
  private calibrated: { instructions: string; lines: ClassifyIntentParams['calibrationLines']; logBias: Float64Array } | undefined;

  constructor(
    readonly name: string,
    private readonly routedIntents: ReadonlySet<string>,
  ) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as ClassifyIntentParams;
    const inference = run.inference();
    const assembler = this.assembler.get(inference);
    const answers = answerTokens(inference, params);
    const system = { role: 'system' as const, content: instructionsFor(params) };
    const prompt: ClassifierPrompt = {
      system,
      history: recentHistoryTurns(run.dialog.interactions, params.historyTurns),
      current: { role: 'user', content: run.input(params.input) ?? '' },
    };
    const bias = params.calibrate ? await this.calibration(run, inference, assembler, system, answers) : undefined;
    const logProbabilities = await scoreContinuations(run, inference, assembler, prompt, answers);
    if (bias) bias.forEach((logBias, index) => (logProbabilities[index]! -= logBias));
    const decision = decide(normalize(logProbabilities), params.threshold, params.margin);
    const scores = Object.fromEntries(params.intents.map((intent, index) => [intent.id, decision.probabilities[index] ?? 0]));
    const winner = decision.winner >= 0 ? params.intents[decision.winner] : undefined;
    run.diagnostics.addData({
      scores,
      intent: winner?.id ?? null,
      threshold: params.threshold,
      margin: params.margin,
      method: params.method,
      calibrated: params.calibrate ? params.calibrationLines : false,
    });
    run.emitNodeEvent('intent', { intent: winner?.id ?? null, probability: decision.best, scores });
    if (params.variable) run.variables.set(params.variable, winner?.id ?? '');
    if (!winner) return 'notFound';
    run.dialog.setSlot(INTENT_SLOT, winner.id);
    return this.routedIntents.has(winner.id) ? winner.id : 'found';
  }

  /**
   * Log of each intent's mean probability over the calibration lines, asked with the node's instructions and no
   * history. Kept per instructions text and choice of lines (the intents are structural; the system prompt and
   * `calibrationLines` may change with the agent).
   */
  private async calibration(
    run: NodeRunContext,
    inference: InferencePort,
    assembler: PromptAssembler,
    system: ChatMessage,
    answers: readonly Int32Array[],
  ): Promise<Float64Array> {
    const params = run.params as ClassifyIntentParams;
    if (this.calibrated?.instructions === system.content && this.calibrated.lines === params.calibrationLines) return this.calibrated.logBias;
    const groups = calibrationGroups(params);
    const mean = new Float64Array(answers.length);
    for (const group of groups) {
      for (const line of group) {
        const prompt: ClassifierPrompt = { system, history: [], current: { role: 'user', content: line } };
        normalize(await scoreContinuations(run, inference, assembler, prompt, answers)).forEach((p, index) => {
          mean[index]! += p / group.length / groups.length;
        });
      }
    }
    const logBias = mean.map((p) => Math.log(Math.max(p, Number.MIN_VALUE)));
    this.calibrated = { instructions: system.content, lines: params.calibrationLines, logBias };
    return logBias;
  }

  /** Decodes the instructions and option list: everything before the line being classified. */
  async prefill({ params, inference }: NodePrefillContext): Promise<void> {
    const assembler = this.assembler.get(inference);
    const system = { role: 'system' as const, content: instructionsFor(params as ClassifyIntentParams) };
    const prefix = staticPrefix((line) => assembler.assemble([system, { role: 'user', content: line }]).tokens);
    if (prefix.length > 0) await inference.prefill(prefix);
  }
}

/** Lines that carry no intent, for calibration (Zhao et al. 2021, "Calibrate Before Use", use the same three). */
const CONTENT_FREE_LINES = ['N/A', '[MASK]', ''] as const;

/**
 * The lines calibration asks about, in groups weighted equally: one group of content-free lines, or one group per
 * intent of its example lines (so an intent with more examples does not pull the mean towards itself).
 */
function calibrationGroups(params: ClassifyIntentParams): (readonly string[])[] {
  if (params.calibrationLines === 'contentFree') return [CONTENT_FREE_LINES];
  return params.intents.map((intent) => intent.examples);
}

/** What the model is scored on writing: one letter per intent, or each intent's id. */
function answerTokens(inference: InferencePort, params: ClassifyIntentParams): Int32Array[] {
  if (params.method === 'letters') return [...labelTokens(inference.tokenizer, letterLabels(params.intents.length))].map((token) => Int32Array.of(token));
  const answers = params.intents.map((intent) => inference.tokenizer.tokenize(intent.id, { addSpecial: false, parseSpecial: false }));
  const seen = new Set<string>();
  for (const [index, tokens] of answers.entries()) {
    const key = tokens.join(',');
    if (tokens.length === 0 || seen.has(key)) {
      throw new LlamaDialogError('InferenceFailed', `intent id "${params.intents[index]!.id}" does not tokenize to its own answer on this model`);
    }
    seen.add(key);
  }
  return answers;
}

function instructionsFor(params: ClassifyIntentParams): string {
  const described = params.intents.map((intent) => intent.description + intent.examples.map((example) => ` Example: "${example}"`).join(''));
  const options =
    params.method === 'letters'
      ? [formatOptions(described), 'Answer with the letter of the best option only.']
      : [params.intents.map((intent, index) => `- ${intent.id}: ${described[index]}`).join('\n'), 'Answer with the name of the best option only.'];
  return [params.systemPrompt, 'Classify the intent of the last user message. Options:', ...options]
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
  structuralParams: ['model', 'contextSize', 'intents', 'method'],
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
    if (params.calibrate && params.calibrationLines === 'examples') {
      const bare = params.intents.find((intent) => intent.examples.length === 0);
      if (bare) return `calibrationLines "examples" needs an example line for every intent; "${bare.id}" has none`;
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
