import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { defaultModelRegistry } from '../../agent/session.js';
import { EMBEDDING_POOLINGS } from '../../engine/engine-options.js';
import { MODEL_PURPOSES } from '../../host/model-registry.js';
import { LlamaDialogError } from '../../errors.js';
import { createServer } from '../../server/dialog-server.js';
import { DEFAULT_GRACE_MS, DEFAULT_HOST, DEFAULT_PORT, serverLimitDefaults } from '../../server/server-options.js';
import { defineCommand, ExitCode } from '../command.js';

const TOKEN_VARIABLE = 'LLAMA_DIALOG_TOKEN';

const catalogSchema = z.record(
  z.string().min(1),
  z.strictObject({
    purpose: z.enum(MODEL_PURPOSES).optional(),
    pooling: z.enum(EMBEDDING_POOLINGS).optional(),
    path: z.string().min(1).optional(),
    url: z.string().min(1).optional(),
    sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits').optional(),
    pinned: z.boolean().optional(),
    gpuLayers: z.int().min(0).optional(),
    useMmap: z.boolean().optional(),
    scheduling: z.enum(['fifo', 'batched']).optional(),
    contexts: z.enum(['auto', 'own', 'shared']).optional(),
    kvReservation: z.enum(['onDemand', 'upFront']).optional(),
    sequences: z.int().min(1).optional(),
    sharedContextSize: z.int().min(1).optional(),
    minSharedPrefix: z.int().min(1).optional(),
    sharedPrefixSpawn: z.boolean().optional(),
    kvMemoryBudget: z.int().min(1).optional(),
    snapshotMemoryBudget: z.int().min(1).optional(),
  }).refine((entry) => entry.path !== undefined || entry.url !== undefined, { message: 'give a path (a GGUF file) or a url to download it from' }),
);

export const serveCommand = defineCommand({
  name: 'serve',
  summary: 'run agents for game engines over TCP (the session protocol, docs/PROTOCOL.md)',
  help: `Usage: llama-dialog serve [--host ${DEFAULT_HOST}] [--port ${DEFAULT_PORT}] [--models catalog.json] [--token T]
                          [--storage-root DIR] [--max-connections N] [--max-agents N] [--max-queued-frames N]
                          [--max-queued-bytes N] [--grace-ms N]

Serves the session protocol (docs/PROTOCOL.md): one session per TCP connection, frames of a 4-byte
little-endian length and UTF-8 JSON. Stops on SIGTERM or SIGINT: new requests get ServerShuttingDown
(2001), running turns get --grace-ms to finish, then they are cancelled; exits 0.

Options:
  --host <address>          address to listen on (default ${DEFAULT_HOST}). Any address other than loopback
                            needs a token
  --port <n>                TCP port (default ${DEFAULT_PORT}; 0 picks a free one, printed on start)
  --models <file>           model catalog JSON: { "name": { "path": "model.gguf", "pinned": false } };
                            relative paths are relative to the catalog file. Agents may also name GGUF paths.
                            { "url": "hf:owner/repo/file.gguf", "sha256": "..." } instead of a path: downloaded
                            into the model cache (llama-dialog pull) before the first load.
                            "purpose": "embedding" (and "pooling") marks an embedding model for
                            CreateKnowledgeBase (ListEmbeddingModels lists them)
  --token <secret>          shared secret the client sends in Hello before anything else (default: the
                            ${TOKEN_VARIABLE} environment variable); never logged
  --storage-root <dir>      folder string storage files (.txt, .json, .mm.json) and knowledge-base configs
                            are read from, for CreateStringStorage { path }, CreateKnowledgeBase { configPath }
                            and node storage params; clients cannot leave it
                            (default: none, so no storage file can be read)
  --grace-ms <n>            on shutdown, how long running turns may take to finish (default ${DEFAULT_GRACE_MS})

Limits (going over one is a typed error, see docs/PROTOCOL.md):
  --max-connections <n>     open connections at once (default ${serverLimitDefaults.maxConnections}); one more gets
                            ConnectionLimitReached (5007) and is closed
  --max-agents <n>          agents per session (default ${serverLimitDefaults.maxAgentsPerSession}); CreateAgent over it gets
                            AgentLimitReached (5008)
  --max-queued-frames <n>   frames waiting for one slow client to read them (default ${serverLimitDefaults.maxQueuedFrames});
                            over it the client gets OutgoingQueueFull (5009) and is disconnected
  --max-queued-bytes <n>    bytes of frames waiting for one slow client (default ${serverLimitDefaults.maxQueuedBytes});
                            over it OutgoingQueueFull (5009) and disconnect. Queued text goes before queued audio
  -h, --help                show this help`,
  flags: {
    host: { type: 'string' },
    port: { type: 'string' },
    models: { type: 'string' },
    token: { type: 'string' },
    'storage-root': { type: 'string' },
    'grace-ms': { type: 'string' },
    'max-connections': { type: 'string' },
    'max-agents': { type: 'string' },
    'max-queued-frames': { type: 'string' },
    'max-queued-bytes': { type: 'string' },
  },
  schema: z.strictObject({
    host: z.string().min(1).default(DEFAULT_HOST),
    port: z.coerce.number().int().min(0).max(65_535).default(DEFAULT_PORT),
    models: z.string().min(1).optional(),
    token: z.string().min(1).optional(),
    'storage-root': z.string().min(1).optional(),
    'grace-ms': z.coerce.number().int().min(0).default(DEFAULT_GRACE_MS),
    'max-connections': z.coerce.number().int().min(1).default(serverLimitDefaults.maxConnections),
    'max-agents': z.coerce.number().int().min(1).default(serverLimitDefaults.maxAgentsPerSession),
    'max-queued-frames': z.coerce.number().int().min(1).default(serverLimitDefaults.maxQueuedFrames),
    'max-queued-bytes': z.coerce.number().int().min(1).default(serverLimitDefaults.maxQueuedBytes),
  }),
  async run(options, io) {
    const models = options.models ? await readCatalog(options.models) : {};
    const token = options.token ?? (process.env[TOKEN_VARIABLE] || undefined);
    const registry = defaultModelRegistry();
    const server = createServer({
      host: options.host,
      port: options.port,
      ...(token === undefined ? {} : { token }),
      graceMs: options['grace-ms'],
      maxConnections: options['max-connections'],
      maxAgentsPerSession: options['max-agents'],
      maxQueuedFrames: options['max-queued-frames'],
      maxQueuedBytes: options['max-queued-bytes'],
      session: { registry, models, ...(options['storage-root'] === undefined ? {} : { storageRoot: resolve(options['storage-root']) }) },
      log: (line) => io.stderr(`${line}\n`),
    });
    const { address, port } = await server.listen();
    io.stdout(`llama-dialog serve: listening on ${address}:${port}\n`);

    const signal = await new Promise<NodeJS.Signals>((resolveSignal) => {
      const onSignal = (name: NodeJS.Signals): void => {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        resolveSignal(name);
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
    io.stderr(`${signal}: shutting down\n`);
    await server.close();
    // The leak check: once every session is closed no model may have a holder left.
    const loaded = registry.status();
    const holders = loaded.reduce((sum, model) => sum + model.users, 0);
    io.stdout(`llama-dialog serve: stopped; models loaded: ${loaded.length} (pinned: ${loaded.filter((m) => m.pinned).length}), holders: ${holders}\n`);
    await registry.disposeAll();
    return holders === 0 ? ExitCode.Ok : ExitCode.Failed;
  },
});

/** @throws LlamaDialogError InvalidArgument for a catalog that is not JSON or not name → { path, ... }. */
async function readCatalog(file: string): Promise<Record<string, z.output<typeof catalogSchema>[string]>> {
  const text = await readFile(file, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LlamaDialogError('InvalidArgument', `--models ${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = catalogSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LlamaDialogError('InvalidArgument', `--models ${file}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`, {
      cause: parsed.error,
    });
  }
  const base = dirname(resolve(file));
  return Object.fromEntries(
    Object.entries(parsed.data).map(([name, entry]) => [name, entry.path === undefined ? entry : { ...entry, path: resolve(base, entry.path) }]),
  );
}
