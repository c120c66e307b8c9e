import { LlamaDialogError } from '../errors.js';
import type { Agent } from '../agent/agent.js';
import type { Session } from '../agent/session.js';
import type { Turn } from '../agent/turn.js';
import type { InteractionInput } from '../dialog/index.js';
import type { KnowledgeBuildProgress } from '../knowledge/knowledge-base.js';
import type { DownloadProgress } from '../models/model-download.js';
import type { ClientMessage, RequestId, ServerMessage } from './protocol-messages.js';
import { toWireAudio, toWireEvent, type TurnAudioPosition, type WireTurnEvent } from './wire-events.js';

/**
 * Where a handler's answers and turn events go (the connection's outgoing queue). `turn` keys the events of one
 * turn (unique per connection), so the queue keeps a TurnComplete behind that turn's audio.
 */
export type MessageSink = (message: ServerMessage, turn?: number) => void;

/**
 * Maps the session requests of one connection one to one onto the library's Session and Agent, so every rule of
 * the runtime (SessionNotReady, AgentBusy, pause/resume, scheduling) holds over the wire without a second copy.
 * Each request's promise settles when the request is over; for SendMessage that is after its TurnComplete was
 * sent, which is what keeps a SendMessage's requestId in flight for the whole turn.
 */
export class SessionRequests {
  /** agentId → the forwarding of that agent's current turn (at most one: an agent runs one turn at a time). */
  private readonly turnForwarding = new Map<string, Promise<void>>();
  /** Ids this connection destroyed: over the wire an id is the agent's handle, so using one again is 3002, as in-process. */
  private readonly destroyedAgentIds = new Set<string>();
  private readonly sessionId = globalThis.crypto.randomUUID();
  private agentsBeingCreated = 0;
  /** Keys the turns forwarded on this connection (MessageSink's `turn`). */
  private turnCounter = 0;
  /** Aborted when the connection's session closes: a knowledge base still embedding for a gone client stops. */
  private readonly closing = new AbortController();

  constructor(
    private readonly session: Session,
    private readonly maxAgentsPerSession: number,
    private readonly send: MessageSink,
  ) {}

  /**
   * Runs one request (anything but Hello) and sends its answer.
   * @throws LlamaDialogError whatever the library refuses with; AgentLimitReached over the agent limit.
   */
  async handle(message: Exclude<ClientMessage, { type: 'Hello' }>): Promise<void> {
    const requestId = message.requestId;
    const answer = (reply: DistributiveOmit<ServerMessage, 'requestId'>): void =>
      this.send((requestId === undefined ? reply : { ...reply, requestId }) as ServerMessage);
    const ack = (): void => answer({ type: 'Ack' });
    switch (message.type) {
      case 'CreateSession':
        this.session.create(message.locale === undefined ? { gameName: message.gameName } : { gameName: message.gameName, locale: message.locale });
        return answer({ type: 'SessionCreated', sessionId: this.sessionId });
      case 'LoadModel': {
        const model = await this.session.loadModel(message.name, message.pinned === undefined ? {} : { pinned: message.pinned });
        return answer({ type: 'ModelLoaded', model });
      }
      case 'UnloadModel':
        await this.session.unloadModel(message.name);
        return ack();
      case 'DownloadModel': {
        const progress = progressThrottle((bytesDone, bytesTotal) =>
          answer(bytesTotal === undefined ? { type: 'DownloadProgress', bytesDone } : { type: 'DownloadProgress', bytesDone, bytesTotal }),
        );
        const { path, bytes, sha256, downloaded } = await this.session.downloadModel(message.name, {
          ...(message.sha256 === undefined ? {} : { sha256: message.sha256 }),
          onProgress: progress,
        });
        return answer({ type: 'ModelDownloaded', path, bytes, sha256, downloaded });
      }
      case 'ListModels':
        return answer({ type: 'ModelList', models: this.session.listModels() });
      case 'CreateAgent':
        return answer({ type: 'AgentCreated', agentId: await this.createAgent(message) });
      case 'DestroyAgent': {
        const agent = this.agent(message.agentId);
        this.destroyedAgentIds.add(agent.id);
        await agent.destroy();
        await this.turnForwarding.get(message.agentId);
        return ack();
      }
      case 'SendMessage': {
        const agent = this.agent(message.agentId);
        const turn = agent.sendMessage(message.text, message.slots === undefined ? {} : { slots: message.slots });
        // The Ack goes out before the turn's first event: the agent yields once before it emits anything.
        ack();
        const forwarding = this.forward(turn, agent.id, requestId);
        this.turnForwarding.set(agent.id, forwarding);
        try {
          await forwarding;
        } finally {
          if (this.turnForwarding.get(agent.id) === forwarding) this.turnForwarding.delete(agent.id);
        }
        return;
      }
      case 'Resume':
        this.agent(message.agentId).resume(message.payload);
        return ack();
      case 'Cancel': {
        await this.agent(message.agentId).cancel();
        // SPEC: the Ack comes after the turn's TurnComplete, so wait until that frame was sent.
        await this.turnForwarding.get(message.agentId);
        return ack();
      }
      case 'ChangeAgentParam':
        this.agent(message.agentId).changeParam(message.node, message.param, message.value);
        return ack();
      case 'SubmitToolResult':
        this.agent(message.agentId).submitToolResult(message.callId, message.result);
        return ack();
      case 'ReleaseCache':
        await this.agent(message.agentId).releaseCache();
        return ack();
      case 'ExportDialog': {
        const snapshot = this.agent(message.agentId).exportDialog();
        return answer({ type: 'Dialog', snapshot: snapshot as unknown as Record<string, unknown> });
      }
      case 'ImportDialog':
        this.agent(message.agentId).importDialog(message.snapshot);
        return ack();
      case 'SeedHistory':
        this.agent(message.agentId).seedHistory(message.turns as InteractionInput[]);
        return ack();
      case 'CreateStringStorage': {
        const { type: _type, requestId: _requestId, ...spec } = message;
        const storage = this.session.createStringStorage(spec);
        return answer({ type: 'StringStorageCreated', name: storage.name, kind: storage.kind, size: storage.strings.length });
      }
      case 'DestroyStringStorage':
        return answer({ type: 'StringStorageDestroyed', name: message.name, destroyed: this.session.destroyStringStorage(message.name) });
      case 'CreateKnowledgeBase': {
        const { type: _type, requestId: _requestId, ...spec } = message;
        const base = await this.session.createKnowledgeBase(spec, {
          onProgress: knowledgeProgressThrottle((progress) => answer({ type: 'KnowledgeBaseProgress', ...progress })),
          signal: this.closing.signal,
        });
        const { records, dimensions, indexKind, embedded, reused } = base.stats;
        return answer({ type: 'KnowledgeBaseCreated', name: base.name, recordCount: records, dimensions, indexKind, embedded, reused });
      }
      case 'DestroyKnowledgeBase':
        return answer({ type: 'KnowledgeBaseDestroyed', name: message.name, destroyed: this.session.destroyKnowledgeBase(message.name) });
      case 'ListEmbeddingModels':
        return answer({ type: 'EmbeddingModels', models: this.session.listEmbeddingModels() });
      case 'SetAgentVoice':
        await this.agent(message.agentId).setVoice(message.voice);
        return ack();
      case 'SetAgentDeliveryMode':
        this.agent(message.agentId).setDeliveryMode(message.mode);
        return ack();
      case 'ListVoices':
        return answer({ type: 'VoiceList', voices: this.session.listVoices() });
    }
  }

  /** Resolves once every turn being forwarded now has sent its TurnComplete. */
  async turnsSettled(): Promise<void> {
    await Promise.all([...this.turnForwarding.values()]);
  }

  /** Closes the session (cancels turns, destroys agents, gives models back) and waits for the last TurnCompletes. */
  async close(): Promise<void> {
    this.closing.abort();
    await this.session.close();
    await this.turnsSettled();
  }

  /** @throws LlamaDialogError SessionNotReady; AgentAlreadyDestroyed; InvalidAgentId. */
  private agent(agentId: string): Agent {
    if (this.session.active && this.destroyedAgentIds.has(agentId)) {
      throw new LlamaDialogError('AgentAlreadyDestroyed', `agent ${agentId} was destroyed`);
    }
    return this.session.getAgent(agentId);
  }

  private async createAgent(message: Extract<ClientMessage, { type: 'CreateAgent' }>): Promise<string> {
    const { type: _type, requestId: _requestId, ...options } = message;
    const alive = this.session.listAgents().length + this.agentsBeingCreated;
    if (alive >= this.maxAgentsPerSession) {
      throw new LlamaDialogError(
        'AgentLimitReached',
        `this session already has ${alive} agents; the limit is ${this.maxAgentsPerSession} (serve --max-agents): destroy one first`,
      );
    }
    this.agentsBeingCreated += 1;
    try {
      return (await this.session.createAgent(options)).id;
    } finally {
      this.agentsBeingCreated -= 1;
    }
  }

  private async forward(turn: Turn, agentId: string, requestId: RequestId | undefined): Promise<void> {
    const turnKey = ++this.turnCounter;
    let eventIndex = 0;
    const audio: TurnAudioPosition = { seq: 0, samples: 0 };
    for await (const event of turn) {
      if (event.type === 'ttsAudio') {
        for (const frame of toWireAudio(event, agentId, requestId, () => eventIndex++, audio)) this.send(frame, turnKey);
      } else {
        this.send(toWireEvent(event, agentId, requestId, eventIndex++), turnKey);
      }
    }
  }
}

/** Bytes between two DownloadProgress frames when the size is unknown. */
const PROGRESS_STEP_BYTES = 4 * 2 ** 20;

/**
 * Passes on the first report, every percent (or 4 MiB without a total) and the last one: a download reports every
 * chunk, and one frame per 64 KiB would flood a slow client's queue (maxQueuedFrames).
 */
function progressThrottle(send: (bytesDone: number, bytesTotal: number | undefined) => void): (progress: DownloadProgress) => void {
  let nextAt = -1;
  return ({ bytesDone, bytesTotal }) => {
    if (bytesDone < nextAt && bytesDone !== bytesTotal) return;
    send(bytesDone, bytesTotal);
    nextAt = bytesDone + (bytesTotal === undefined ? PROGRESS_STEP_BYTES : Math.max(1, Math.ceil(bytesTotal / 100)));
  };
}

/**
 * Passes on the first report of each phase, every percent of the records and the last one: a base of 100k records
 * reports every 64 embedded, and the frames would crowd the connection's queue for nothing.
 */
function knowledgeProgressThrottle(send: (progress: KnowledgeBuildProgress) => void): (progress: KnowledgeBuildProgress) => void {
  let phase: KnowledgeBuildProgress['phase'] | undefined;
  let nextAt = 0;
  return (progress) => {
    if (progress.phase === phase && progress.done < nextAt && progress.done !== progress.total) return;
    send({ phase: progress.phase, done: progress.done, total: progress.total });
    phase = progress.phase;
    nextAt = progress.done + Math.max(1, Math.ceil(progress.total / 100));
  };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
