// The quality benchmark's runners (bench --workload quality) on SmolLM2-135M-Instruct, on a slice of each data set so
// the tier stays short: every runner drives real nodes on real output, and its figures must add up. The figures
// themselves are the benchmark's (README, quality table); here only what must hold whatever the model answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/agent/session.js';
import { renderBenchComparison } from '../../src/bench/bench-compare.js';
import { describeBenchEnvironment } from '../../src/bench/bench-environment.js';
import { EMBEDDING_INTENT_ROW, QUALITY_EMBEDDER } from '../../src/bench/quality/embedding-intent-runner.js';
import { INTENT_METHODS, runIntentSet } from '../../src/bench/quality/intent-set-runner.js';
import { runMemorySet } from '../../src/bench/quality/memory-set-runner.js';
import { judgeQualityGoals, qualityFingerprint, qualityRows, renderQualityText, type QualityReport } from '../../src/bench/quality/quality-report.js';
import type { QualityEngineSettings } from '../../src/bench/quality/quality-settings.js';
import { runToolSet, TOOL_CALL_MODES } from '../../src/bench/quality/tool-set-runner.js';
import { INTENT_LINES, NPC_INTENTS } from '../../src/bench/quality-data/intents-v1.js';
import { MEMORY_FACTS } from '../../src/bench/quality-data/memory-v1.js';
import { TOOL_LINES } from '../../src/bench/quality-data/tool-lines-v1.js';
import { loadModel } from '../../src/engine/load-model.js';
import { REAL_TEST_THREADS, realModelPath } from './real-model-kit.js';

let session: Session;
let settings: QualityEngineSettings;
const sets: QualityReport['sets'] = {};

beforeAll(async () => {
  const embeddingModelPath = await realModelPath('minilm');
  settings = { modelPath: await realModelPath('smollm2'), threads: REAL_TEST_THREADS, contextSize: 1024, embeddingModelPath };
  session = new Session({ loadModel, models: { [QUALITY_EMBEDDER]: { path: embeddingModelPath, purpose: 'embedding' } } }).create({ gameName: 'quality bench test' });
});

afterAll(async () => {
  await session?.close();
});

describe('quality benchmark runners on SmolLM2', () => {
  it('intents: every line gets one of the intents, and accuracy is the share of labels matched', { timeout: 120_000 }, async () => {
    // Two lines per intent; the reference method and the best one of the README's table, then the embedding row.
    const lines = NPC_INTENTS.flatMap((intent) => INTENT_LINES.filter((line) => line.intent === intent.id).slice(0, 2));
    const methods = INTENT_METHODS.filter((method) => method.reference || method.name === 'label words + examples, calibrated on examples');
    const result = await runIntentSet(session, settings, () => {}, lines, methods);
    sets.intents = result;
    expect(result.methods.map((method) => method.method)).toEqual([...methods.map((method) => method.name), EMBEDDING_INTENT_ROW]);
    // The embedding base is the run's own: gone afterwards, so a second run can make it again.
    expect(session.listKnowledgeBases()).toEqual([]);
    for (const method of result.methods) {
      expect(method.lines).toBe(16);
      // Threshold 0: some intent always wins, so none abstains and accuracy moves in steps of 1/16.
      expect(method.abstained).toBe(0);
      expect(Number.isInteger(method.accuracy * 16)).toBe(true);
      expect(method.macroF1).toBeGreaterThanOrEqual(0);
      expect(method.macroF1).toBeLessThanOrEqual(1);
    }
  });

  it('tools: under a grammar every call is schema-valid; the routed mode calls only the tool it picked', { timeout: 180_000 }, async () => {
    const lines = [...TOOL_LINES.filter((line) => line.tool !== null).slice(0, 4), ...TOOL_LINES.filter((line) => line.tool === null).slice(0, 2)];
    const modes = TOOL_CALL_MODES.filter((mode) => mode.toolChoice === 'required');
    const result = await runToolSet(session, settings, () => {}, lines, modes);
    sets.tools = result;
    const [required, ...routed] = result.modes;
    // A required call under its grammar: one call per line, each one valid.
    expect(required).toMatchObject({ lines: 6, linesWithCalls: 6, calls: 6, schemaValidShare: 1 });
    expect(routed.map((mode) => mode.mode)).toEqual(['intent router + grammar', 'intent router (calibrated on examples) + grammar']);
    for (const mode of routed) {
      expect(mode.schemaValidShare).toBe(1);
      expect(mode.calls).toBe(mode.linesWithCalls);
      expect(mode.rightShare * 6).toBeCloseTo(Math.round(mode.rightShare * 6), 10);
    }
  });

  it('memory: the trim-only run reaches its trim, the summary run replays as many lines and writes summaries', { timeout: 240_000 }, async () => {
    const result = await runMemorySet(session, settings, () => {}, [1]);
    sets.memory = result;
    const [trimOnly, summary] = result.runs;
    expect(trimOnly).toMatchObject({ trimLevel: 1, mode: 'trim only', trims: 1, summaries: 0, facts: MEMORY_FACTS.length });
    expect(summary).toMatchObject({ trimLevel: 1, mode: 'rolling summary', fillerTurns: trimOnly!.fillerTurns });
    expect(summary!.summaries).toBeGreaterThan(0);
    for (const run of result.runs) expect(Object.values(run.perFact).filter(Boolean).length).toBe(run.recalled);
  });

  it('the report of these runs prints, judges the goals, and compares with itself through bench compare', async () => {
    const environment = await describeBenchEnvironment({ modelPath: settings.modelPath, workload: settings, synthetic: false });
    const report: QualityReport = {
      tool: 'llama-dialog bench',
      kind: 'quality',
      startedAt: new Date().toISOString(),
      workload: { name: 'quality', fingerprint: qualityFingerprint(sets) },
      environment,
      sets,
      goals: judgeQualityGoals(sets),
      strategies: qualityRows(sets),
      wallMs: 1,
    };
    expect(report.workload.fingerprint).toBe('intents-v1+tools-v1+memory-v1');
    expect(report.goals.every((goal) => goal.met !== null)).toBe(true);
    expect(renderQualityText(report)).toContain('letters (reference)');
    const json = JSON.parse(JSON.stringify(report)) as unknown;
    const comparison = renderBenchComparison([
      { path: 'a.json', json },
      { path: 'b.json', json },
    ]);
    expect(comparison).toContain('SmolLM2-135M-Instruct.Q4_1.gguf');
    expect(comparison.split('\n').filter((line) => line.startsWith('intents: ')).length).toBe(3 * 3);
  });
});
