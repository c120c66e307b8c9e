import { z } from 'zod';
import { PROTOCOL_VERSION, clientMessageSchemas, serverMessageSchemas } from './protocol-messages.js';

/** Where the generated JSON Schema is checked in, relative to the package root. */
export const PROTOCOL_SCHEMA_PATH = 'protocol/llama-dialog-protocol.schema.json';

/**
 * The protocol as one JSON Schema document (draft 2020-12), generated from the zod schemas the server validates
 * with: `$defs` holds one schema per message type; `ClientMessage` and `ServerMessage` are the unions. Other
 * languages generate their types from it. The text is deterministic, so a test can compare it with the checked-in
 * file.
 */
export function protocolJsonSchemaText(): string {
  const definitions: Record<string, unknown> = {};
  const add = (schemas: Record<string, z.ZodType>, io: 'input' | 'output'): string[] =>
    Object.entries(schemas).map(([name, schema]) => {
      const { $schema: _draft, ...body } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
      definitions[name] = body;
      return name;
    });
  // Input mode: fields with defaults are optional, and answers stay open to fields later versions add (clients
  // must ignore unknown fields), while requests are strict objects (the server refuses unknown fields).
  const requests = add(clientMessageSchemas, 'input');
  const answers = add(serverMessageSchemas, 'input');
  const document = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://github.com/llama-dialog/llama-dialog/protocol/llama-dialog-protocol.schema.json',
    title: `llama-dialog session protocol, version ${PROTOCOL_VERSION}`,
    description:
      'Every frame is a 4-byte little-endian payload length, then one UTF-8 JSON object of at most 1 MiB, except TtsAudio: a ' +
      'binary frame (tag byte 0x01, uint32 LE header length, the JSON header this schema describes, then int16 LE samples). ' +
      'See docs/PROTOCOL.md. ' +
      'Generated from src/server/protocol-messages.ts by scripts/generate-protocol-schema.ts; do not edit.',
    protocolVersion: PROTOCOL_VERSION,
    $defs: {
      ...definitions,
      ClientMessage: { oneOf: requests.map((name) => ({ $ref: `#/$defs/${name}` })) },
      ServerMessage: { oneOf: answers.map((name) => ({ $ref: `#/$defs/${name}` })) },
    },
    oneOf: [{ $ref: '#/$defs/ClientMessage' }, { $ref: '#/$defs/ServerMessage' }],
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
