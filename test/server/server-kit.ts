// A protocol server on 127.0.0.1 (port 0) whose sessions share the runtime tier's registry: the tiny synthetic
// model under the catalog name `tiny`, with forced outputs available for tool calls.
import { createServer, type DialogServer } from '../../src/server/dialog-server.js';
import type { ServerOptions } from '../../src/server/server-options.js';
import { createRuntimeHarness, type RuntimeHarness } from '../kits/runtime-session-kit.js';

export interface TestServer {
  server: DialogServer;
  port: number;
  harness: RuntimeHarness;
  /** Log lines the server wrote. */
  log: string[];
  /** Holders of every loaded model together (agents, sessions): 0 once nothing is leaked. */
  modelHolders(): number;
}

export async function startTestServer(options: Omit<ServerOptions, 'session' | 'log'> = {}, shared?: RuntimeHarness): Promise<TestServer> {
  const harness = shared ?? (await createRuntimeHarness());
  // The harness's own session is not used by the server tests.
  if (!shared) await harness.session.close();
  const log: string[] = [];
  const server = createServer({ host: '127.0.0.1', port: 0, ...options, session: { registry: harness.registry }, log: (line) => log.push(line) });
  const { port } = await server.listen();
  return {
    server,
    port,
    harness,
    log,
    modelHolders: () => harness.registry.status().reduce((sum, model) => sum + model.users, 0),
  };
}

/** Resolves with the server's next `connectionClosed` event. */
export function nextConnectionClosed(server: DialogServer): Promise<{ connectionId: number; reason: string }> {
  return new Promise((resolve) => server.once('connectionClosed', resolve));
}
