import type { Session } from '../../agent/session.js';
import { mean, median } from '../statistics.js';
import { scoreClassification, type ClassificationOutcome } from './classification-metrics.js';
import type { QualityEngineSettings, QualityProgress } from './quality-settings.js';
import { classifyLabelledLines } from './labelled-line-classification.js';
import { EMBEDDING_INTENT_ROW, classifyByEmbedding } from './embedding-intent-runner.js';
import { INTENT_SET_VERSION, INTENT_LINES, NPC_INTENTS, type LabelledLine } from '../quality-data/intents-v1.js';

/** One way of asking ClassifyIntentLLM, as the report names it. */
export interface IntentMethod {
  name: string;
  method: 'letters' | 'labelWords';
  calibrate: boolean;
  /** The calibration lines (ClassifyIntentLLM `calibrationLines`; default content-free). */
  calibrationLines?: 'contentFree' | 'examples';
  /** Whether the intents' example lines are shown (the set's intents carry two each). */
  examples: boolean;
  /** The reference server's method: the figure the others are read against. */
  reference: boolean;
}

/** Every method the intents set runs, the reference's first. */
export const INTENT_METHODS: readonly IntentMethod[] = [
  { name: 'letters', method: 'letters', calibrate: false, examples: false, reference: true },
  { name: 'letters + examples', method: 'letters', calibrate: false, examples: true, reference: false },
  { name: 'letters + examples, calibrated', method: 'letters', calibrate: true, examples: true, reference: false },
  { name: 'label words, calibrated', method: 'labelWords', calibrate: true, examples: false, reference: false },
  { name: 'label words + examples', method: 'labelWords', calibrate: false, examples: true, reference: false },
  { name: 'label words + examples, calibrated', method: 'labelWords', calibrate: true, examples: true, reference: false },
  { name: 'label words + examples, calibrated on examples', method: 'labelWords', calibrate: true, calibrationLines: 'examples', examples: true, reference: false },
];

export interface IntentMethodResult {
  method: string;
  reference: boolean;
  lines: number;
  accuracy: number;
  macroF1: number;
  /** Mean and median wall time of one classification turn (the first turn, which also calibrates, included). */
  meanMs: number;
  medianMs: number;
  /** Lines the classifier abstained on (no intent cleared threshold 0: only when every score is equal). */
  abstained: number;
  /** The most frequent wrong answers, `expected → predicted × count`, for reading why a method fails. */
  topConfusions: string[];
}

export interface IntentSetResult {
  set: 'intents';
  version: string;
  intents: number;
  lines: number;
  methods: IntentMethodResult[];
}

/**
 * Classifies every labelled line with each method, on one agent per method (one ClassifyIntentLLM node, no history,
 * so lines do not influence each other) and scores accuracy and macro-F1 against the labels. With an embedding
 * model in the settings, one more row: the embedding ClassifyIntent node on the same lines, for comparison.
 */
export async function runIntentSet(
  session: Session,
  settings: QualityEngineSettings,
  progress: QualityProgress,
  lines: readonly LabelledLine[] = INTENT_LINES,
  chosen: readonly IntentMethod[] = INTENT_METHODS,
): Promise<IntentSetResult> {
  const methods: IntentMethodResult[] = [];
  for (const method of chosen) {
    const agent = await session.createAgent({
      graph: {
        start: 'classify',
        nodes: [
          {
            name: 'classify',
            type: 'ClassifyIntentLLM',
            params: {
              systemPrompt: 'You work for Brenna, the blacksmith of Emberfall. Players talk to her in her forge.',
              intents: NPC_INTENTS.map((intent) => ({ ...intent, examples: method.examples ? [...intent.examples] : [] })),
              method: method.method,
              calibrate: method.calibrate,
              calibrationLines: method.calibrationLines ?? 'contentFree',
              contextSize: settings.contextSize,
            },
            exits: { found: null, notFound: null },
          },
        ],
      },
      defaultModel: settings.modelPath,
      maintainDialogueHistory: false,
      engine: { threads: settings.threads },
    });
    const { outcomes, times } = await classifyLabelledLines(agent, lines, method.name, 'intent', progress);
    await session.destroyAgent(agent.id);
    methods.push(methodResult(method.name, method.reference, outcomes, times));
  }
  if (settings.embeddingModelPath !== undefined) {
    const { outcomes, times } = await classifyByEmbedding(session, settings, progress, NPC_INTENTS, lines);
    methods.push(methodResult(EMBEDDING_INTENT_ROW, false, outcomes, times));
  }
  return { set: 'intents', version: INTENT_SET_VERSION, intents: NPC_INTENTS.length, lines: lines.length, methods };
}

function methodResult(name: string, reference: boolean, outcomes: readonly ClassificationOutcome[], times: readonly number[]): IntentMethodResult {
  const score = scoreClassification(
    NPC_INTENTS.map((intent) => intent.id),
    outcomes,
  );
  return {
    method: name,
    reference,
    lines: outcomes.length,
    accuracy: score.accuracy,
    macroF1: score.macroF1,
    meanMs: mean(times),
    medianMs: median(times),
    abstained: outcomes.filter((outcome) => outcome.predicted === null).length,
    topConfusions: topConfusions(outcomes, 5),
  };
}

function topConfusions(outcomes: readonly ClassificationOutcome[], count: number): string[] {
  const tally = new Map<string, number>();
  for (const { expected, predicted } of outcomes) {
    if (predicted === expected) continue;
    const key = `${expected} → ${predicted ?? '(none)'}`;
    tally.set(key, (tally.get(key) ?? 0) + 1);
  }
  return [...tally.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, count)
    .map(([key, n]) => `${key} × ${n}`);
}
