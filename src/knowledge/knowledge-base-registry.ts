/**
 * A session's named knowledge bases (`session.createKnowledgeBase`). Two sources, as in the reference:
 *  - a config file (`configPath`, under the storage root): `embeddingModel`, a records file and an optional index
 *    file, all relative to the config's folder; the config is authoritative;
 *  - inline: `records` (or plain `strings`, ids "0", "1", …) with `fields` and `embeddingModel`; kept in memory only.
 * Destroying a name unpins it; agents whose nodes already hold the base keep it.
 */
import type { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { describeFirstIssue } from '../util/validation.js';
import { KnowledgeBase, type KnowledgeBuildProgress } from './knowledge-base.js';
import { readKnowledgeBaseConfig } from './knowledge-base-config.js';
import type { KnowledgeEmbedder } from './knowledge-embedder.js';
import { readKnowledgeRecordsFile } from './knowledge-records-file.js';
import { MAX_STORAGE_NAME_LENGTH } from './storage-name.js';
import { StorageRoot } from './storage-root.js';
import type { VectorIndexOptions } from './vector-index.js';
import { knowledgeBaseSpecSchema, type KnowledgeBaseSpec } from './knowledge-base-spec.js';

export { knowledgeBaseSpecSchema, type KnowledgeBaseSpec } from './knowledge-base-spec.js';

export interface KnowledgeBaseCreateOptions {
  onProgress?: (progress: KnowledgeBuildProgress) => void;
  signal?: AbortSignal;
}

/** Finds the embedder of a catalog model name. @throws LlamaDialogError InvalidKnowledgeBase (8003) for an unknown one. */
export type EmbedderResolver = (modelName: string) => Promise<KnowledgeEmbedder>;

export class KnowledgeBaseRegistry {
  private readonly bases = new Map<string, KnowledgeBase>();
  private readonly creating = new Set<string>();

  constructor(
    private readonly storageRoot: string | undefined,
    private readonly embedderFor: EmbedderResolver,
  ) {}

  /**
   * @throws LlamaDialogError InvalidKnowledgeBaseName (8001); DuplicateKnowledgeBaseName (8002); InvalidKnowledgeBase
   *   (8003) for a bad config, records or schema, no embedding model, an unknown one, or an index of another
   *   dimension; StoragePathEscape (3009) / StorageFileNotFound (3010) for the config path; Aborted.
   */
  async create(spec: KnowledgeBaseSpec, options: KnowledgeBaseCreateOptions = {}): Promise<KnowledgeBase> {
    const parsed = knowledgeBaseSpecSchema.safeParse(spec);
    if (!parsed.success) {
      throw new LlamaDialogError('InvalidKnowledgeBase', `bad knowledge base spec: ${describeFirstIssue(parsed.error, 'spec')}`, { cause: parsed.error });
    }
    const data = parsed.data;
    const name = checkKnowledgeBaseName(data.name);
    if (this.bases.has(name) || this.creating.has(name)) {
      throw new LlamaDialogError('DuplicateKnowledgeBaseName', `a knowledge base named ${JSON.stringify(name)} already exists in this session`);
    }
    this.creating.add(name);
    try {
      const base = await this.open(name, data, options);
      this.bases.set(name, base);
      return base;
    } finally {
      this.creating.delete(name);
    }
  }

  get(name: string): KnowledgeBase | undefined {
    return this.bases.get(name);
  }

  list(): KnowledgeBase[] {
    return [...this.bases.values()];
  }

  destroy(name: string): boolean {
    return this.bases.delete(name);
  }

  clear(): void {
    this.bases.clear();
  }

  private async open(name: string, spec: z.output<typeof knowledgeBaseSpecSchema>, options: KnowledgeBaseCreateOptions): Promise<KnowledgeBase> {
    const index: VectorIndexOptions = spec.index ?? {};
    if (spec.configPath !== undefined) {
      if (this.storageRoot === undefined) {
        throw new LlamaDialogError('StorageFileNotFound', `knowledge base "${name}": the session has no storage root to read ${JSON.stringify(spec.configPath)} from`);
      }
      const configFile = new StorageRoot(this.storageRoot).existingFile(spec.configPath);
      const config = await readKnowledgeBaseConfig(configFile);
      const records = await readKnowledgeRecordsFile(config.recordsFile, config.fields);
      return KnowledgeBase.open({
        name,
        records: records.map((record) => ({ id: record.id, text: record.text, metadata: record.metadata })),
        fields: config.fields,
        embedder: await this.embedderFor(config.embeddingModel),
        ...(config.indexFile === undefined ? {} : { indexFile: config.indexFile }),
        index,
        ...options,
      });
    }
    if (spec.embeddingModel === undefined) {
      throw new LlamaDialogError('InvalidKnowledgeBase', `knowledge base "${name}": an inline base needs embeddingModel (a catalog model with purpose 'embedding')`);
    }
    const records = spec.records ?? (spec.strings ?? []).map((text, index) => ({ id: String(index), text }));
    return KnowledgeBase.open({ name, records, fields: spec.fields ?? [], embedder: await this.embedderFor(spec.embeddingModel), index, ...options });
  }
}

/**
 * Knowledge base names follow string storage names: 1–128 characters from `A-Z a-z 0-9 _ . -`, no leading dot.
 * @throws LlamaDialogError InvalidKnowledgeBaseName (8001).
 */
export function checkKnowledgeBaseName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_STORAGE_NAME_LENGTH || name.startsWith('.') || !/^[A-Za-z0-9_.-]+$/.test(name)) {
    throw new LlamaDialogError(
      'InvalidKnowledgeBaseName',
      `knowledge base name ${JSON.stringify(name)} is not valid: 1-${MAX_STORAGE_NAME_LENGTH} characters from A-Z a-z 0-9 _ . -, not starting with a dot`,
    );
  }
  return name;
}
