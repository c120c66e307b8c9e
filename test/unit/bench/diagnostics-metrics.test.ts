import { describe, expect, it } from 'vitest';
import { nodeMetrics } from '../../../src/bench/diagnostics-metrics.js';
import type { CacheMissCause, NodeDiagnostics } from '../../../src/diag/turn-diagnostics.js';

function generateDiagnostics(overrides: {
  turnsTrimmed?: number;
  causes?: CacheMissCause[];
  reused?: number;
  expectedReuse?: number;
  type?: string;
}): NodeDiagnostics {
  const causes = overrides.causes ?? [];
  return {
    name: overrides.type === 'Summarize' ? 'summarize' : 'reply',
    type: overrides.type ?? 'Generate',
    step: 1,
    exit: 'default',
    ms: 812,
    input: {
      prompt: [
        { role: 'system', content: 'You are Brannoc…', tokens: 237 },
        { role: 'user', content: 'Good morning…', tokens: 37 },
        { role: 'assistant', content: 'Aye.', tokens: 33 },
        { role: 'user', content: 'I need a weapon…', tokens: 32 },
      ],
      promptTokens: 339,
      budget: 2016,
      contextSize: 2048,
      turnsTrimmed: overrides.turnsTrimmed ?? 0,
      firstTurnInPrompt: 0,
      historyTurnsInPrompt: 1,
      summaryUsed: null,
      template: 'gguf',
      segmentCacheUsed: true,
      fallbackToWholePrompt: false,
    },
    cache: {
      reused: overrides.reused ?? 306,
      evaluated: 339 - (overrides.reused ?? 306),
      expectedReuse: overrides.expectedReuse ?? 306,
      miss: causes.length > 0,
      causes,
    },
    output: { text: 'Aye, forty-five silver.', tokens: 32, stopReason: 'maxTokens' },
    timings: { promptMs: 120, firstTokenMs: 131, generateMs: 690 },
    warnings: [],
  };
}

describe('nodeMetrics', () => {
  it('reads prompt, cache, output and timing figures of a normal turn', () => {
    expect(nodeMetrics(generateDiagnostics({}))).toEqual([
      {
        node: 'reply',
        nodeType: 'Generate',
        promptTokens: 339,
        reusedTokens: 306,
        evaluatedTokens: 33,
        generatedTokens: 32,
        trimmedTurns: 0,
        summaryWritten: false,
        firstTokenMs: 131,
        totalMs: 812,
        engineMs: 120 + 690,
        rereadFrom: null,
        cacheMissCause: null,
      },
    ]);
  });

  it('marks a trim as a forced re-read of everything after the system message', () => {
    const [metrics] = nodeMetrics(generateDiagnostics({ turnsTrimmed: 3, causes: ['trim'], reused: 237 }));
    expect(metrics).toMatchObject({ trimmedTurns: 3, rereadFrom: 237, cacheMissCause: 'trim' });
  });

  it('takes the re-read point of a new summary from the projector, not from what the engine kept', () => {
    const [metrics] = nodeMetrics(generateDiagnostics({ causes: ['newSummary'], reused: 12, expectedReuse: 220 }));
    expect(metrics?.rereadFrom).toBe(220);
  });

  it('counts a Summarize call as a summary write that re-reads its transcript', () => {
    const [metrics] = nodeMetrics(generateDiagnostics({ type: 'Summarize', reused: 0 }));
    expect(metrics).toMatchObject({ summaryWritten: true, rereadFrom: 237 });
  });

  it('gives nothing for a node that called no model', () => {
    const { input: _input, cache: _cache, ...idle } = generateDiagnostics({ type: 'Summarize' });
    expect(nodeMetrics(idle)).toEqual([]);
  });
});
