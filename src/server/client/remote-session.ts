import { LlamaDialogError } from '../../errors.js';
import type { AgentOptions } from '../../agent/agent-options.js';
import type { SessionOptions } from '../../agent/session.js';
import type { ClientMessageInput, WireLoadedModel, createAgentSchema, createKnowledgeBaseSchema, createStringStorageSchema } from '../protocol-messages.js';
import type { z } from 'zod';
import type { ClientConnection, ServerGreeting } from './client-connection.js';
import { RemoteAgent } from './remote-agent.js';

/** A model loaded in the server process, as ListModels reports it. */
export type RemoteModelStatus = WireLoadedModel;

/** What `createStringStorage` takes: the CreateStringStorage request without its type and requestId. */
export type RemoteStringStorageSpec = Omit<z.input<typeof createStringStorageSchema>, 'type' | 'requestId'>;

/** What `createAgent` takes: the createAgent options, `voice` and `deliveryMode` included (the CreateAgent request's fields). */
export type RemoteAgentOptions = Omit<z.input<typeof createAgentSchema>, 'type' | 'requestId'>;

/** A string storage the server created: its name, kind and number of strings. */
export interface RemoteStringStorage {
  readonly name: string;
  readonly kind: 'list' | 'map' | 'multimap';
  readonly size: number;
}

/** What `createKnowledgeBase` takes: the CreateKnowledgeBase request without its type and requestId (session.createKnowledgeBase's spec). */
export type RemoteKnowledgeBaseSpec = Omit<z.input<typeof createKnowledgeBaseSchema>, 'type' | 'requestId'>;

/** A knowledge base the server created: its size, vector size, index kind, and how many records it embedded now. */
export interface RemoteKnowledgeBase {
  readonly name: string;
  readonly recordCount: number;
  readonly dimensions: number;
  readonly indexKind: 'exact' | 'hnsw';
  /** Records embedded for this request. */
  readonly embedded: number;
  /** Records whose vector came from the base's index file. */
  readonly reused: number;
}

/** A KnowledgeBaseProgress event: records embedded so far, of those that need it; one 'indexing' report last. */
export interface RemoteKnowledgeBaseProgress {
  phase: 'embedding' | 'indexing';
  done: number;
  total: number;
}

/** What DownloadModel answered: the file's path on the server, its size and sha256, and whether it was fetched now. */
export interface RemoteDownloadResult {
  path: string;
  bytes: number;
  sha256: string;
  downloaded: boolean;
}

type SessionPhase = 'New' | 'Active' | 'Closed';

/**
 * The session of one protocol connection, with the methods of the library's `Session`: `create` once, then
 * agents and models. The server enforces every rule (SessionNotReady, SessionAlreadyExists, the agent limit).
 * `close()` cancels the running turns (each ends with TurnComplete(Cancelled), as in-process), then closes the
 * connection; the server destroys the agents.
 */
export class RemoteSession {
  private phase: SessionPhase = 'New';
  private options: { gameName: string; locale: string } | undefined;
  private remoteSessionId: string | undefined;
  private readonly agents = new Map<string, RemoteAgent>();
  private closing: Promise<void> | undefined;

  /** @internal Use `connect`. */
  constructor(private readonly connection: ClientConnection) {
    connection.onLost((error) => {
      this.phase = 'Closed';
      for (const agent of [...this.agents.values()]) agent.markDestroyed(error);
    });
  }

  /** What the server said on accept (protocol and server versions). */
  get server(): ServerGreeting {
    return this.connection.greeting;
  }

  /** Resolves with why the connection ended. */
  get closed(): Promise<string> {
    return this.connection.closed;
  }

  /** True between `create()` and `close()` (or the loss of the connection). */
  get active(): boolean {
    return this.phase === 'Active';
  }

  /** The server's id of this session. @throws LlamaDialogError SessionNotReady. */
  get sessionId(): string {
    this.requireActive();
    return this.remoteSessionId as string;
  }

  get gameName(): string {
    return this.requireActive().gameName;
  }

  get locale(): string {
    return this.requireActive().locale;
  }

  /** Creates the session (once). @throws LlamaDialogError SessionAlreadyExists; InvalidArgument (also for `storageRoot`: the server's). */
  async create(options: SessionOptions): Promise<this> {
    if (options.storageRoot !== undefined) {
      // Silently dropping it would read storages from another folder than the caller thinks.
      throw new LlamaDialogError('InvalidArgument', 'storageRoot is chosen by the server (serve --storage-root), not by a remote session');
    }
    const answer = await this.connection.request(
      options.locale === undefined
        ? { type: 'CreateSession', gameName: options.gameName }
        : { type: 'CreateSession', gameName: options.gameName, locale: options.locale },
    );
    if (answer.type !== 'SessionCreated') throw unexpected('SessionCreated', answer.type);
    this.remoteSessionId = answer.sessionId;
    this.options = { gameName: options.gameName, locale: options.locale ?? 'en-US' };
    this.phase = 'Active';
    return this;
  }

  /**
   * Creates an agent on the server.
   * @throws LlamaDialogError SessionNotReady; InvalidParamValue; GraphCompilationFailed; InvalidExitTarget;
   * ModelLoadFailed; AgentLimitReached.
   */
  async createAgent(options: AgentOptions | RemoteAgentOptions): Promise<RemoteAgent> {
    // The server validates the options; AgentOptions types `voice` loosely until the agent's voice profile lands.
    const answer = await this.connection.request({ type: 'CreateAgent', ...options } as Extract<ClientMessageInput, { type: 'CreateAgent' }>);
    if (answer.type !== 'AgentCreated') throw unexpected('AgentCreated', answer.type);
    const agent = new RemoteAgent(answer.agentId, this.connection, (destroyed) => this.agents.delete(destroyed.id));
    this.agents.set(agent.id, agent);
    return agent;
  }

  /** @throws LlamaDialogError SessionNotReady; InvalidAgentId for an id this session does not know. */
  getAgent(id: string): RemoteAgent {
    this.requireActive();
    const agent = this.agents.get(id);
    if (!agent) throw new LlamaDialogError('InvalidAgentId', `no agent "${id}" in this session`);
    return agent;
  }

  /** Agents alive in this session. @throws LlamaDialogError SessionNotReady. */
  listAgents(): RemoteAgent[] {
    this.requireActive();
    return [...this.agents.values()];
  }

  /** @throws LlamaDialogError SessionNotReady; InvalidAgentId. */
  async destroyAgent(id: string): Promise<void> {
    await this.getAgent(id).destroy();
  }

  /** Warm-up: loads a model and holds it for this session. @throws LlamaDialogError SessionNotReady; ModelLoadFailed. */
  async loadModel(name: string, options: { pinned?: boolean } = {}): Promise<RemoteModelStatus> {
    const answer = await this.connection.request(
      options.pinned === undefined ? { type: 'LoadModel', name } : { type: 'LoadModel', name, pinned: options.pinned },
    );
    if (answer.type !== 'ModelLoaded') throw unexpected('ModelLoaded', answer.type);
    return answer.model;
  }

  /**
   * Downloads a model into the server's model cache ahead of its first load: a catalog name with a url, or an
   * address (`http(s)://...`, `hf:<owner>/<repo>/<file>`). `onProgress` hears the bytes on disk so far. Resolves with
   * the file's path on the server (a model reference for loadModel and createAgent).
   * @throws LlamaDialogError SessionNotReady; InvalidArgument; ModelNotFound; NotGguf; DiskFull; ChecksumMismatch;
   *   ModelDownloadFailed.
   */
  async downloadModel(
    name: string,
    options: { sha256?: string; onProgress?: (progress: { bytesDone: number; bytesTotal: number | undefined }) => void } = {},
  ): Promise<RemoteDownloadResult> {
    const answer = await this.connection.requestWithProgress(
      options.sha256 === undefined ? { type: 'DownloadModel', name } : { type: 'DownloadModel', name, sha256: options.sha256 },
      (message) => {
        if (message.type === 'DownloadProgress') options.onProgress?.({ bytesDone: message.bytesDone, bytesTotal: message.bytesTotal });
      },
    );
    if (answer.type !== 'ModelDownloaded') throw unexpected('ModelDownloaded', answer.type);
    const { path, bytes, sha256, downloaded } = answer;
    return { path, bytes, sha256, downloaded };
  }

  /** @throws LlamaDialogError SessionNotReady. */
  async unloadModel(name: string): Promise<void> {
    await this.connection.request({ type: 'UnloadModel', name });
  }

  /**
   * Creates a named string storage on the server, as `session.createStringStorage` does in-process: exactly one of
   * `strings`, `entries` (with kind 'map' or 'multimap') or `path` (relative to the server's storage root).
   * @throws LlamaDialogError SessionNotReady; InvalidArgument; InvalidStorageName (7001); DuplicateStorageName (7002);
   *   InvalidStorageData (7003); StorageNameShadowsFile (7004); StoragePathEscape (3009); StorageFileNotFound (3010);
   *   StorageWrongKind (3011).
   */
  async createStringStorage(spec: RemoteStringStorageSpec): Promise<RemoteStringStorage> {
    const answer = await this.connection.request({ ...spec, type: 'CreateStringStorage' });
    if (answer.type !== 'StringStorageCreated') throw unexpected('StringStorageCreated', answer.type);
    return { name: answer.name, kind: answer.kind, size: answer.size };
  }

  /**
   * Drops the session's name for a storage; agents already using it keep it. Resolves false when there was none.
   * @throws LlamaDialogError SessionNotReady.
   */
  async destroyStringStorage(name: string): Promise<boolean> {
    const answer = await this.connection.request({ type: 'DestroyStringStorage', name });
    if (answer.type !== 'StringStorageDestroyed') throw unexpected('StringStorageDestroyed', answer.type);
    return answer.destroyed;
  }

  /**
   * Creates a named knowledge base on the server, as `session.createKnowledgeBase` does in-process: exactly one of
   * `configPath` (a config JSON under the server's storage root), `records` (with `fields`) or `strings`, embedded
   * by `embeddingModel` (one of listEmbeddingModels()). `onProgress` hears the embedding (about once per percent).
   * Inline records travel in one frame (1 MiB at most): larger bases belong in a config file on the server.
   * @throws LlamaDialogError SessionNotReady; InvalidKnowledgeBaseName (8001); DuplicateKnowledgeBaseName (8002);
   *   InvalidKnowledgeBase (8003); StoragePathEscape (3009); StorageFileNotFound (3010); ModelLoadFailed; MalformedMessage.
   */
  async createKnowledgeBase(
    spec: RemoteKnowledgeBaseSpec,
    options: { onProgress?: (progress: RemoteKnowledgeBaseProgress) => void } = {},
  ): Promise<RemoteKnowledgeBase> {
    const answer = await this.connection.requestWithProgress({ ...spec, type: 'CreateKnowledgeBase' }, (message) => {
      if (message.type === 'KnowledgeBaseProgress') options.onProgress?.({ phase: message.phase, done: message.done, total: message.total });
    });
    if (answer.type !== 'KnowledgeBaseCreated') throw unexpected('KnowledgeBaseCreated', answer.type);
    const { name, recordCount, dimensions, indexKind, embedded, reused } = answer;
    return { name, recordCount, dimensions, indexKind, embedded, reused };
  }

  /**
   * Drops the session's name for a knowledge base; agents already using it keep it. Resolves false when there was none.
   * @throws LlamaDialogError SessionNotReady.
   */
  async destroyKnowledgeBase(name: string): Promise<boolean> {
    const answer = await this.connection.request({ type: 'DestroyKnowledgeBase', name });
    if (answer.type !== 'KnowledgeBaseDestroyed') throw unexpected('KnowledgeBaseDestroyed', answer.type);
    return answer.destroyed;
  }

  /** Catalog names of the server's embedding models (`purpose: 'embedding'`). @throws LlamaDialogError SessionNotReady. */
  async listEmbeddingModels(): Promise<string[]> {
    const answer = await this.connection.request({ type: 'ListEmbeddingModels' });
    if (answer.type !== 'EmbeddingModels') throw unexpected('EmbeddingModels', answer.type);
    return answer.models;
  }

  /** Catalog names of the server's voices (`purpose: 'tts'`), the names a voice profile's `model` takes. @throws LlamaDialogError SessionNotReady. */
  async listVoices(): Promise<string[]> {
    const answer = await this.connection.request({ type: 'ListVoices' });
    if (answer.type !== 'VoiceList') throw unexpected('VoiceList', answer.type);
    return answer.voices;
  }

  /** Models loaded in the server process. @throws LlamaDialogError SessionNotReady. */
  async listModels(): Promise<RemoteModelStatus[]> {
    const answer = await this.connection.request({ type: 'ListModels' });
    if (answer.type !== 'ModelList') throw unexpected('ModelList', answer.type);
    return answer.models;
  }

  /** Cancels every running turn, then closes the connection (the server destroys the agents). Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const running = [...this.agents.values()].filter((agent) => agent.currentTurn !== undefined);
      if (this.connection.open) await Promise.allSettled(running.map((agent) => agent.cancel()));
      this.phase = 'Closed';
      for (const agent of [...this.agents.values()]) agent.markDestroyed();
      await this.connection.close();
    })();
    return this.closing;
  }

  private requireActive(): { gameName: string; locale: string } {
    if (this.phase === 'New') throw new LlamaDialogError('SessionNotReady', 'create the session first (session.create)');
    if (this.phase === 'Closed' || !this.options) throw new LlamaDialogError('SessionNotReady', 'this session is closed');
    return this.options;
  }
}

function unexpected(expected: string, got: string): LlamaDialogError {
  return new LlamaDialogError('MalformedMessage', `expected ${expected} from the server, got ${got}`);
}
