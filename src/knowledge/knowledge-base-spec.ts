/**
 * What `session.createKnowledgeBase` takes, as a zod schema with nothing else in the file: the protocol's
 * CreateKnowledgeBase request is built from the same shape, and the TypeScript client loads it without the addon.
 */
import { z } from 'zod';

export const knowledgeBaseSpecSchema = z
  .strictObject({
    name: z.string().describe('1–128 characters from A-Z a-z 0-9 _ . -, not starting with a dot (else 8001).'),
    configPath: z
      .string()
      .min(1)
      .optional()
      .describe('A knowledge-base config JSON under the storage root (embeddingModel, recordsFile, indexFile?, fields?).'),
    records: z.array(z.unknown()).optional().describe('Records { id, text, metadata? }; metadata follows fields. Kept in memory.'),
    strings: z.array(z.string()).optional().describe('Plain texts instead of records (ids "0", "1", ...). Kept in memory.'),
    fields: z
      .array(z.unknown())
      .optional()
      .describe('Field schema of the metadata: [{ name, type: int|float|string|bool|set<string>, default? | optional?, filterable? }].'),
    embeddingModel: z
      .string()
      .min(1)
      .optional()
      .describe("Catalog name of an embedding model (purpose 'embedding'); required with records or strings, the config's wins for configPath."),
    index: z
      .strictObject({
        kind: z.enum(['auto', 'exact', 'hnsw']).optional(),
        connectivity: z.number().int().min(2).max(256).optional(),
        expansionAdd: z.number().int().min(1).max(65_536).optional(),
        expansionSearch: z.number().int().min(1).max(65_536).optional(),
      })
      .optional()
      .describe("Vector index: kind 'auto' (default: exact for small bases, HNSW above), 'exact' or 'hnsw', and HNSW's settings."),
  })
  .refine((spec) => [spec.configPath, spec.records, spec.strings].filter((source) => source !== undefined).length === 1, {
    message: 'give exactly one of configPath, records or strings',
  });

export type KnowledgeBaseSpec = z.input<typeof knowledgeBaseSpecSchema>;
