import { isAbsolute, dirname, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { describeFirstIssue } from '../util/validation.js';
import { KnowledgeFieldSchema } from './field-schema.js';
import { KNOWLEDGE_LIMITS } from './knowledge-limits.js';
import { readJsonFile } from './utf8-file.js';

/** A knowledge-base config file, validated; paths resolved against the config's folder. */
export interface KnowledgeBaseConfig {
  readonly version: 1;
  /** Catalog name of the embedding model (`purpose: 'embedding'`); checking it is the catalog's job. */
  readonly embeddingModel: string;
  /** Absolute path of the `*.kb.json` records file. */
  readonly recordsFile: string;
  /** Absolute path of the index file, when the config names one. */
  readonly indexFile?: string;
  readonly fields: KnowledgeFieldSchema;
}

/**
 * Our API spells keys in camelCase; the reference server's configs spell them in snake_case. Both are accepted, so a
 * reference config loads unchanged; one key written both ways is refused (which one wins would be a guess).
 */
const SNAKE_TO_CAMEL: Readonly<Record<string, string>> = {
  embedding_model: 'embeddingModel',
  records_file: 'recordsFile',
  index_file: 'indexFile',
};

const relativePath = z.string().min(1, 'must not be empty').max(4096);

const configSchema = z.strictObject({
  version: z.literal(1, 'only version 1 exists'),
  embeddingModel: z.string().min(1, 'name an embedding model of the catalog').max(256),
  recordsFile: relativePath,
  indexFile: relativePath.optional(),
  fields: z.unknown().optional(),
});

/**
 * Validates a parsed config. `recordsFile` and `indexFile` are relative to the config's folder and must stay inside
 * it: an absolute path or a `..` escape is refused, as for string storages under their root, so a config handed in
 * over the protocol cannot make the server read files elsewhere.
 * @param configPath the config file's path (names it in messages; its folder anchors the relative paths).
 * @throws LlamaDialogError InvalidKnowledgeBase (8003) naming the key or field.
 */
export function parseKnowledgeBaseConfig(json: unknown, configPath: string): KnowledgeBaseConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw invalid(`${configPath}: expected a config object {version, embeddingModel, recordsFile, indexFile?, fields?}`);
  }
  const camel: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    const name = SNAKE_TO_CAMEL[key] ?? key;
    if (Object.hasOwn(camel, name)) throw invalid(`${configPath}: "${key}" and "${name}" are the same key; write it once`);
    camel[name] = value;
  }
  const parsed = configSchema.safeParse(camel);
  if (!parsed.success) {
    throw new LlamaDialogError('InvalidKnowledgeBase', `${configPath}: ${describeFirstIssue(parsed.error)}`, {
      cause: parsed.error,
    });
  }
  const folder = dirname(resolve(configPath));
  const config = parsed.data;
  return Object.freeze({
    version: 1,
    embeddingModel: config.embeddingModel,
    recordsFile: insideFolder(folder, config.recordsFile, 'recordsFile', configPath),
    ...(config.indexFile === undefined ? {} : { indexFile: insideFolder(folder, config.indexFile, 'indexFile', configPath) }),
    fields: KnowledgeFieldSchema.parse(config.fields, `${configPath}: fields`),
  });
}

/**
 * Reads and validates a knowledge-base config file (strict UTF-8 JSON, at most 1 MiB).
 * @throws LlamaDialogError InvalidKnowledgeBase (8003).
 */
export async function readKnowledgeBaseConfig(configPath: string): Promise<KnowledgeBaseConfig> {
  return parseKnowledgeBaseConfig(await readJsonFile(configPath, KNOWLEDGE_LIMITS.maxConfigFileBytes), configPath);
}

function insideFolder(folder: string, path: string, key: string, configPath: string): string {
  if (isAbsolute(path) || /^[a-zA-Z]:/.test(path)) {
    throw invalid(`${configPath}: ${key}: "${path}" is absolute; give a path relative to the config's folder`);
  }
  const resolved = resolve(folder, path);
  const inside = relative(folder, resolved);
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw invalid(`${configPath}: ${key}: "${path}" leaves the config's folder`);
  }
  return resolved;
}

function invalid(message: string): LlamaDialogError {
  return new LlamaDialogError('InvalidKnowledgeBase', message);
}
