/**
 * Writes protocol/llama-dialog-protocol.schema.json from the server's zod message schemas. Run after changing
 * src/server/protocol-messages.ts; test/server/protocol-schema.test.ts fails while the checked-in file is stale.
 *
 * Run: npx tsx scripts/generate-protocol-schema.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROTOCOL_SCHEMA_PATH, protocolJsonSchemaText } from '../src/server/protocol-json-schema.js';

const target = join(dirname(fileURLToPath(import.meta.url)), '..', PROTOCOL_SCHEMA_PATH);
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, protocolJsonSchemaText());
console.log(`wrote ${PROTOCOL_SCHEMA_PATH}`);
