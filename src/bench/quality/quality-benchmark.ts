import { performance } from 'node:perf_hooks';
import { Session } from '../../agent/session.js';
import { loadModel } from '../../engine/load-model.js';
import type { ModelCatalogEntry } from '../../host/model-registry.js';
import type { BenchEnvironment } from '../bench-result.js';
import { CpuContentionMeter } from '../cpu-contention-meter.js';
import { QUALITY_EMBEDDER } from './embedding-intent-runner.js';
import { runIntentSet } from './intent-set-runner.js';
import { runMemorySet } from './memory-set-runner.js';
import { judgeQualityGoals, qualityFingerprint, qualityRows, type QualityReport, type QualitySetName } from './quality-report.js';
import type { QualityEngineSettings, QualityProgress } from './quality-settings.js';
import { runToolSet } from './tool-set-runner.js';

export interface QualityBenchmarkOptions {
  settings: QualityEngineSettings;
  sets: readonly QualitySetName[];
  environment: BenchEnvironment;
  progress: QualityProgress;
}

/**
 * Runs the chosen quality sets one after the other on one session (one model load), and judges the goals.
 * Greedy throughout, so a rerun on the same build and model gives the same answers.
 */
export async function runQualityBenchmark(options: QualityBenchmarkOptions): Promise<QualityReport> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const contention = new CpuContentionMeter();
  const { embeddingModelPath } = options.settings;
  const models: Record<string, ModelCatalogEntry> = embeddingModelPath === undefined ? {} : { [QUALITY_EMBEDDER]: { path: embeddingModelPath, purpose: 'embedding' } };
  const session = new Session({ loadModel, models }).create({ gameName: 'llama-dialog bench (quality)' });
  const sets: QualityReport['sets'] = {};
  try {
    if (options.sets.includes('intents')) sets.intents = await runIntentSet(session, options.settings, options.progress);
    if (options.sets.includes('tools')) sets.tools = await runToolSet(session, options.settings, options.progress);
    if (options.sets.includes('memory')) sets.memory = await runMemorySet(session, options.settings, options.progress);
  } finally {
    await session.close();
  }
  const environment = { ...options.environment, othersCpuShare: contention.othersShare() };
  return {
    tool: 'llama-dialog bench',
    kind: 'quality',
    startedAt,
    workload: { name: 'quality', fingerprint: qualityFingerprint(sets) },
    environment,
    sets,
    goals: judgeQualityGoals(sets),
    strategies: qualityRows(sets),
    wallMs: performance.now() - started,
  };
}
