/**
 * `bench --workload knowledge`: the knowledge goals, measured on a real embedding model (MiniLM by default)
 * and a real chat model (SmolLM2): retrieval quality on lore-v1 (hit@3), one Retrieve step's latency at 10k and
 * 100k records, and what knowledge costs the KV cache per turn under each template placement. Embedding throughput
 * against llama.cpp's own tool and node-llama-cpp is its own part (embedding-throughput.ts).
 */
import { loadModel } from '../../engine/load-model.js';
import { embedderFromContext } from '../../knowledge/knowledge-embedder.js';
import { measureKnowledgeCacheCost, type KnowledgeCacheCostResult } from './knowledge-cache-cost.js';
import { measureRetrievalQuality, type RetrievalQualityResult } from './retrieval-quality.js';
import { measureRetrieveLatency, type RetrieveLatencyResult } from './retrieve-latency.js';
import { runEmbeddingThroughput, type EmbeddingThroughputResult } from './embedding-throughput.js';

export interface KnowledgeBenchmarkSettings {
  embeddingModelPath: string;
  chatModelPath: string;
  threads: number;
  /** Store sizes of the Retrieve-step latency (default 10k and 100k). */
  sizes: number[];
  /** Retrieve steps timed per size. */
  steps: number;
  /** Turns of the cache-cost conversation. */
  turns: number;
  /** Rounds of the embedding-throughput comparison (0 = leave it out; the CLI always runs at least one). */
  repeats: number;
}

export interface KnowledgeBenchmarkReport {
  kind: 'knowledge';
  settings: KnowledgeBenchmarkSettings;
  quality: RetrievalQualityResult;
  latency: RetrieveLatencyResult[];
  cache: KnowledgeCacheCostResult;
  throughput: EmbeddingThroughputResult | null;
}

export async function runKnowledgeBenchmark(settings: KnowledgeBenchmarkSettings, log: (line: string) => void): Promise<KnowledgeBenchmarkReport> {
  const model = await loadModel({ path: settings.embeddingModelPath });
  try {
    const context = await model.createEmbeddingContext({ threads: settings.threads });
    try {
      const embedder = embedderFromContext(context);
      log('[bench] knowledge: retrieval quality on lore-v1');
      const quality = await measureRetrievalQuality(embedder);
      const latency: RetrieveLatencyResult[] = [];
      for (const records of settings.sizes) {
        log(`[bench] knowledge: Retrieve step on ${records} records`);
        latency.push(await measureRetrieveLatency(embedder, { records, steps: settings.steps }));
      }
      log('[bench] knowledge: cache cost of knowledge per turn');
      const cache = await measureKnowledgeCacheCost({
        embeddingModelPath: settings.embeddingModelPath,
        chatModelPath: settings.chatModelPath,
        threads: settings.threads,
        turns: settings.turns,
        log,
      });
      await context.dispose();
      await model.dispose();
      // Last and with every other model freed: it loads the embedding model once per strategy, in turn.
      let throughput: EmbeddingThroughputResult | null = null;
      if (settings.repeats > 0) {
        log('[bench] knowledge: embedding throughput (ours, llama-embedding, node-llama-cpp)');
        throughput = await runEmbeddingThroughput({ modelPath: settings.embeddingModelPath, threads: settings.threads, repetitions: settings.repeats, log });
      }
      return { kind: 'knowledge', settings, quality, latency, cache, throughput };
    } finally {
      if (!context.disposed) await context.dispose();
    }
  } finally {
    if (!model.disposed) await model.dispose();
  }
}
