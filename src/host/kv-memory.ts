import type { KvCacheType, ModelInfo } from '../engine/types.js';

/** Bytes of one block of each KV element type and elements per block (ggml's type traits). */
const KV_TYPE_LAYOUT: Record<KvCacheType, { blockBytes: number; blockSize: number }> = {
  f16: { blockBytes: 2, blockSize: 1 },
  q8_0: { blockBytes: 34, blockSize: 32 },
  q4_0: { blockBytes: 18, blockSize: 32 },
};

/**
 * KV bytes one cell (one token) takes over all layers, K and V: the engine's own estimate (native/context_core.cpp,
 * `kvBytesEstimate_` = layers × cells × 2 × row bytes), so that the pool can budget a context before it exists.
 * Once an engine object exists, its own `kvBytes` / `kvBytesPerCell` is what counts.
 */
export function estimateKvBytesPerCell(info: ModelInfo, kvCacheType: KvCacheType = 'f16'): number {
  const heads = Math.max(1, info.heads);
  const width = Math.floor(info.embeddingSize / heads) * info.kvHeads;
  const { blockBytes, blockSize } = KV_TYPE_LAYOUT[kvCacheType] ?? KV_TYPE_LAYOUT.f16;
  const rowBytes = Math.ceil(width / blockSize) * blockBytes;
  return info.layers * 2 * rowBytes;
}
