import type { InferenceContext, RuntimeModel, SharedInferenceContext } from '../engine/types.js';

/** KV memory at one moment: allocated, and the part of it holding tokens. */
export interface KvBytes {
  allocated: number;
  /**
   * Bytes of the cells that hold tokens. Own context: its `kvBytes` × tokens held ÷ `contextSize`; shared context:
   * `cellsUsed() × kvBytesPerCell` — a prefix copied into several sequences (shared-prefix spawn) is counted once.
   */
  used: number;
}

/**
 * Counts the KV memory a model's contexts hold, as the engine reports it, by watching every context created through
 * the model it wraps: an own context by its `kvBytes` (its whole allocation while it lives, 0 once released or
 * disposed), a shared context by its allocation, `contextSize × kvBytesPerCell`, while it has live sequences. So
 * own and shared contexts are counted alike; `used` tells how much of that holds tokens.
 */
export class KvMeter {
  private readonly ownContexts: InferenceContext[] = [];
  private readonly sharedContexts = new Set<SharedInferenceContext>();

  /** Own contexts created so far (live or not). */
  get ownContextsCreated(): number {
    return this.ownContexts.length;
  }

  /** Shared contexts created so far (live or not). */
  get sharedContextsCreated(): number {
    return this.sharedContexts.size;
  }

  /** KV bytes held now by every context created through a wrapped model. */
  bytes(): KvBytes {
    let allocated = 0;
    let used = 0;
    for (const context of this.ownContexts) {
      const bytes = context.kvBytes;
      allocated += bytes;
      if (bytes > 0 && context.contextSize > 0) used += (bytes * context.tokens.length) / context.contextSize;
    }
    for (const shared of this.sharedContexts) {
      if (shared.liveSequences === 0) continue;
      allocated += shared.contextSize * shared.kvBytesPerCell;
      used += shared.cellsUsed() * shared.kvBytesPerCell;
    }
    return { allocated, used: Math.round(used) };
  }

  /**
   * The same model, with context creation watched. A Proxy rather than a wrapper class, so whatever else the host
   * calls on the model reaches it unchanged.
   */
  wrap(model: RuntimeModel): RuntimeModel {
    return new Proxy(model, {
      get: (target, property) => {
        if (property === 'createContext') {
          return async (...args: Parameters<RuntimeModel['createContext']>) => {
            const context = await target.createContext(...args);
            this.ownContexts.push(context);
            return context;
          };
        }
        if (property === 'createSharedContext' && target.createSharedContext) {
          const create = target.createSharedContext.bind(target);
          return async (...args: Parameters<NonNullable<RuntimeModel['createSharedContext']>>) => this.watchShared(await create(...args));
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  private watchShared(shared: SharedInferenceContext): SharedInferenceContext {
    // Returned as is (not wrapped): the host and the engine may compare it with its sequences' `shared`.
    this.sharedContexts.add(shared);
    return shared;
  }
}
