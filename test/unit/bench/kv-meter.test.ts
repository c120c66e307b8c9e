import { describe, expect, it } from 'vitest';
import { KvMeter } from '../../../src/bench/kv-meter.js';
import type { InferenceContext, RuntimeModel, SharedInferenceContext } from '../../../src/engine/types.js';

// Only the fields the meter reads; the rest of each interface is never touched.
function ownContext(kvBytes: number, contextSize: number, tokens: number) {
  return { kvBytes, contextSize, tokens: new Int32Array(tokens) } as unknown as InferenceContext & { kvBytes: number };
}

function sharedContext(contextSize: number, kvBytesPerCell: number) {
  const shared = { contextSize, kvBytesPerCell, liveSequences: 2, cells: 0, cellsUsed: () => shared.cells };
  return shared;
}

describe('KvMeter', () => {
  it('sums the allocations and the filled part of every context created through the wrapped model', async () => {
    const contexts = [ownContext(4096, 1024, 256), ownContext(4096, 1024, 512)];
    const shared = sharedContext(2048, 8);
    const model = {
      info: { architecture: 'fake' },
      createContext: async () => contexts.shift(),
      createSharedContext: async () => shared as unknown as SharedInferenceContext,
      tokenize: () => new Int32Array(3),
    } as unknown as RuntimeModel;
    const meter = new KvMeter();
    const wrapped = meter.wrap(model);
    expect(wrapped.info.architecture).toBe('fake');
    expect(wrapped.tokenize('abc')).toHaveLength(3);
    expect(meter.bytes()).toEqual({ allocated: 0, used: 0 });

    const first = (await wrapped.createContext({ contextSize: 1024 })) as InferenceContext & { kvBytes: number };
    await wrapped.createContext({ contextSize: 1024 });
    expect(meter.ownContextsCreated).toBe(2);
    // 4096 + 4096 allocated; a quarter and a half of them hold tokens.
    expect(meter.bytes()).toEqual({ allocated: 8192, used: 1024 + 2048 });

    // A released context reports 0 bytes and drops out.
    first.kvBytes = 0;
    expect(meter.bytes()).toEqual({ allocated: 4096, used: 2048 });

    const returned = await wrapped.createSharedContext!({ sequences: 2, contextSize: 2048 });
    expect(returned).toBe(shared);
    shared.cells = 100;
    expect(meter.sharedContextsCreated).toBe(1);
    expect(meter.bytes()).toEqual({ allocated: 4096 + 2048 * 8, used: 2048 + 800 });
    shared.liveSequences = 0;
    expect(meter.bytes()).toEqual({ allocated: 4096, used: 2048 });
  });

  it('leaves createSharedContext absent when the model has none', () => {
    const model = { createContext: async () => ownContext(1, 1, 0) } as unknown as RuntimeModel;
    expect(new KvMeter().wrap(model).createSharedContext).toBeUndefined();
  });
});
