// One compute thread per loaded model, and no libuv pool thread parked while calls wait (issue 11 item 3):
// two models generate at the same time, and file I/O is not starved by queued generations.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/engine/context.js';
import type { Model } from '../../src/engine/model.js';
import { TEST_THREADS, loadTinyModel, syntheticPrompt } from '../kits/models.js';

const GREEDY = { temperature: 0 } as const;

describe('compute threads', () => {
  let first: Model;
  let second: Model;
  beforeAll(async () => {
    // The same file loaded twice: two loaded models, so two compute threads.
    first = await loadTinyModel();
    second = await loadTinyModel();
  });
  afterAll(async () => {
    await first?.dispose();
    await second?.dispose();
  });

  it('two models generate in parallel: their generations overlap in time (engine timestamps)', async () => {
    const contexts = await Promise.all([first, second].map((m) => m.createContext({ contextSize: 1024, batchSize: 64, threads: TEST_THREADS })));
    try {
      const [a, b] = await Promise.all(
        contexts.map((context, i) => context.generate({ prompt: syntheticPrompt(200, 60 + i), maxTokens: 200, sampling: GREEDY })),
      );
      const { startedAt: aStart, endedAt: aEnd } = a!.timings;
      const { startedAt: bStart, endedAt: bEnd } = b!.timings;
      expect(aEnd!).toBeGreaterThan(aStart!);
      expect(bEnd!).toBeGreaterThan(bStart!);
      // One thread for both would run them one after the other: then one ends before the other starts.
      expect(aStart!).toBeLessThan(bEnd!);
      expect(bStart!).toBeLessThan(aEnd!);
    } finally {
      await Promise.all(contexts.map((c) => c.dispose()));
    }
  });

  it('fs.promises.readFile completes while eight generations are queued on one model', async () => {
    const contexts: Context[] = [];
    for (let i = 0; i < 8; i++) contexts.push(await first.createContext({ contextSize: 1024, batchSize: 64, threads: TEST_THREADS }));
    try {
      let finished = 0;
      const generations = contexts.map((context, i) =>
        context.generate({ prompt: syntheticPrompt(100, 70 + i), maxTokens: 150, sampling: GREEDY }).then((result) => {
          finished++;
          return result;
        }),
      );
      // With an AsyncWorker per call, libuv's four pool threads would all wait for the compute thread, and the
      // read would queue behind them until generations finish.
      let finishedWhenReadDone = -1;
      const read = readFile(fileURLToPath(import.meta.url)).then((bytes) => {
        finishedWhenReadDone = finished;
        return bytes;
      });
      const [bytes] = await Promise.all([read, Promise.all(generations)]);
      expect(bytes.length).toBeGreaterThan(0);
      expect(finishedWhenReadDone).toBeGreaterThanOrEqual(0);
      expect(finishedWhenReadDone).toBeLessThan(8);
    } finally {
      await Promise.all(contexts.map((c) => c.dispose()));
    }
  });
});
