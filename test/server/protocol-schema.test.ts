// The checked-in JSON Schema must be exactly what the zod message schemas generate (CI fails when it is stale).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_SCHEMA_PATH, protocolJsonSchemaText } from '../../src/server/protocol-json-schema.js';
import { clientMessageSchemas, serverMessageSchemas } from '../../src/server/protocol-messages.js';
import { repoRoot } from '../helpers/llama-cpp.js';

describe('protocol JSON Schema', () => {
  it('is up to date with src/server/protocol-messages.ts (regenerate: npx tsx scripts/generate-protocol-schema.ts)', () => {
    const checkedIn = readFileSync(join(repoRoot, PROTOCOL_SCHEMA_PATH), 'utf8');
    expect(checkedIn).toBe(protocolJsonSchemaText());
  });

  it('has one definition per message type, requests strict and answers open to new fields', () => {
    const document = JSON.parse(protocolJsonSchemaText()) as { $defs: Record<string, { additionalProperties?: unknown; required?: string[] }> };
    for (const name of Object.keys(clientMessageSchemas)) {
      expect(document.$defs[name]?.additionalProperties, name).toBe(false);
      expect(document.$defs[name]?.required, name).toContain('type');
    }
    for (const name of Object.keys(serverMessageSchemas)) {
      expect(document.$defs[name]?.additionalProperties, name).toBeUndefined();
    }
    expect(document.$defs.SendMessage?.required).toEqual(['type', 'agentId', 'text']);
  });
});
