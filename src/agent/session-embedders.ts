import { LlamaDialogError } from '../errors.js';
import type { EmbeddingContext } from '../engine/embedding-context.js';
import { defaultThreadCount } from '../engine/model.js';
import type { ModelLease, ModelRegistry } from '../host/model-registry.js';
import { embedderFromContext, type KnowledgeEmbedder } from '../knowledge/knowledge-embedder.js';

/**
 * The embedding models a session's knowledge bases use: one loaded model (a registry lease, shared with the process)
 * and one embedding context per catalog name, made on first use and freed when the session closes. Only catalog
 * entries with `purpose: 'embedding'` qualify, as in the reference.
 */
export class SessionEmbedders {
  private readonly embedders = new Map<string, Promise<{ lease: ModelLease; context: EmbeddingContext; embedder: KnowledgeEmbedder }>>();

  constructor(private readonly registry: ModelRegistry) {}

  /** @throws LlamaDialogError InvalidKnowledgeBase (8003) for a name that is not an embedding model of the catalog; ModelLoadFailed. */
  async get(name: string): Promise<KnowledgeEmbedder> {
    let made = this.embedders.get(name);
    if (!made) {
      made = this.make(name);
      made.catch(() => this.embedders.delete(name));
      this.embedders.set(name, made);
    }
    return (await made).embedder;
  }

  /** Embedding-model names of the catalog. */
  catalogNames(): string[] {
    return this.registry.catalogEntries().filter(({ entry }) => entry.purpose === 'embedding').map(({ name }) => name);
  }

  async close(): Promise<void> {
    const all = [...this.embedders.values()];
    this.embedders.clear();
    await Promise.all(
      all.map(async (made) => {
        try {
          const { lease, context } = await made;
          await context.dispose();
          await lease.release();
        } catch {
          // It failed to load: nothing is held.
        }
      }),
    );
  }

  private async make(name: string): Promise<{ lease: ModelLease; context: EmbeddingContext; embedder: KnowledgeEmbedder }> {
    const entry = this.registry.hasCatalogName(name) ? this.registry.resolve(name) : undefined;
    if (entry?.purpose !== 'embedding') {
      const known = this.catalogNames();
      throw new LlamaDialogError(
        'InvalidKnowledgeBase',
        `"${name}" is not an embedding model of the catalog (an entry with purpose: 'embedding'); known: ${known.length > 0 ? known.join(', ') : 'none'}`,
      );
    }
    const lease = await this.registry.acquire(name);
    try {
      if (!lease.model.createEmbeddingContext) {
        throw new LlamaDialogError('UnsupportedModel', `model "${name}" cannot create an embedding context with this engine`);
      }
      const context = await lease.model.createEmbeddingContext({ threads: defaultThreadCount(), pooling: entry.pooling ?? 'model' });
      return { lease, context, embedder: embedderFromContext(context) };
    } catch (error) {
      await lease.release();
      throw error;
    }
  }
}
