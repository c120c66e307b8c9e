import { z } from 'zod';
import { agentOptionsSchema, voiceProfileSchema as agentVoiceProfileSchema } from '../agent/agent-options.js';
import { knowledgeBaseSpecSchema } from '../knowledge/knowledge-base-spec.js';
import { DELIVERY_MODES } from '../voice/voice-profile.js';

/**
 * The session protocol's messages (SPEC §9), one zod schema per message type. These schemas are the contract:
 * the server validates every request with them, the TypeScript client builds its types from them, and
 * `scripts/generate-protocol-schema.ts` turns them into `protocol/llama-dialog-protocol.schema.json` for other
 * languages. Messages may gain fields in later versions; a field is never renamed.
 */

/**
 * Version of the wire protocol; a Hello with another one gets ProtocolVersionMismatch (5004). Fields and message
 * types are added within a version (clients ignore what they do not know); the version changes when a client of
 * the previous one could misread the stream. 2: binary TtsAudio frames (docs/PROTOCOL.md §1), which a version 1
 * client would take for malformed JSON.
 */
export const PROTOCOL_VERSION = 2;

/** Chosen by the client, echoed by every reply and by the turn events of a SendMessage. */
export const requestIdSchema = z
  .union([z.string().min(1).max(128), z.int().min(0).max(Number.MAX_SAFE_INTEGER)])
  .describe('Chosen by the client; echoed by the answer. Unique among the requests of a connection still in flight.');

const agentId = z.string().min(1).max(128).describe('The id AgentCreated returned.');

/** The agent's voice: the agent's own schema, so the wire accepts exactly what createAgent does. */
const voiceProfileSchema = agentVoiceProfileSchema.describe('A voice profile: which voice speaks for the agent, and how.');

const deliveryModeSchema = z
  .enum(DELIVERY_MODES)
  .describe("'voice': text at once, audio as it is ready; 'synced': each sentence's text with its audio; 'text': no speech.");

function request<Type extends string, Shape extends z.ZodRawShape>(type: Type, shape: Shape, description: string) {
  return z.strictObject({ type: z.literal(type), requestId: requestIdSchema.optional(), ...shape }).describe(description);
}

// ---------------------------------------------------------------- client → server

export const helloSchema = request(
  'Hello',
  {
    protocolVersion: z.int().min(0),
    token: z.string().max(1024).optional().describe('Shared secret; required as the first message when the server was started with one.'),
  },
  'Optional version check (required, with the token, when the server asks for one). Answer: Ack or 5004.',
);

export const createSessionSchema = request(
  'CreateSession',
  { gameName: z.string().min(1).max(256), locale: z.string().min(1).max(64).optional() },
  'Creates the session of this connection, exactly once, before any other request. Answer: SessionCreated.',
);

export const loadModelSchema = request(
  'LoadModel',
  { name: z.string().min(1).max(4096), pinned: z.boolean().optional() },
  'Loads a catalog model (or GGUF path) ahead of time and holds it for the session. Answer: ModelLoaded.',
);

export const unloadModelSchema = request(
  'UnloadModel',
  { name: z.string().min(1).max(4096) },
  "Gives back the session's hold on a model and unpins it. Answer: Ack.",
);

export const downloadModelSchema = request(
  'DownloadModel',
  {
    name: z
      .string()
      .min(1)
      .max(4096)
      .describe('A catalog model with a url, or an address: http(s)://... or hf:<owner>/<repo>[@<revision>]/<file>.'),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/)
      .optional()
      .describe("Expected sha256 of the file (hex); default the catalog entry's."),
  },
  'Downloads a model into the model cache ahead of its first load (resuming a partial download, skipping a file already there). ' +
    'Answer: DownloadProgress events with this requestId, then ModelDownloaded.',
);

export const listModelsSchema = request('ListModels', {}, 'Models loaded in the server process. Answer: ModelList.');

export const createAgentSchema = request(
  'CreateAgent',
  {
    // bakedAudio names server files: a remote client may not choose files to read (the operator's catalog decides).
    ...agentOptionsSchema.omit({ bakedAudio: true }).shape,
    voice: voiceProfileSchema.optional().describe('The voice of speaking nodes; required when the graph speaks (else 3013).'),
    deliveryMode: deliveryModeSchema.optional().describe("How speech is delivered; default 'voice'."),
  },
  'Compiles the graph, loads its models and creates the agent. Fields are the createAgent options. Answer: AgentCreated.',
);

export const destroyAgentSchema = request('DestroyAgent', { agentId }, "Cancels the agent's turn and destroys it. Answer: Ack.");

export const sendMessageSchema = request(
  'SendMessage',
  { agentId, text: z.string().max(1_000_000), slots: z.record(z.string(), z.string()).optional() },
  "Starts a turn. Answer: Ack, then the turn's events (each with this requestId), the last one TurnComplete.",
);

export const resumeSchema = request(
  'Resume',
  { agentId, payload: z.unknown().optional().describe('Tool result (AwaitResult), acknowledgement (PauseAndAcknowledge) or any value.') },
  'Continues a paused turn. Answer: Ack.',
);

export const cancelSchema = request('Cancel', { agentId }, "Stops the agent's turn. Answer: Ack, sent after that turn's TurnComplete.");

export const changeAgentParamSchema = request(
  'ChangeAgentParam',
  { agentId, node: z.string().min(1), param: z.string().min(1), value: z.unknown() },
  'Changes one param of one node while Idle or Paused. Answer: Ack.',
);

export const submitToolResultSchema = request(
  'SubmitToolResult',
  { agentId, callId: z.string().min(1), result: z.string() },
  'Stores the result of a recorded tool call (Idle or Paused). Answer: Ack.',
);

export const releaseCacheSchema = request('ReleaseCache', { agentId }, "Frees an idle agent's KV memory. Answer: Ack.");

export const exportDialogSchema = request('ExportDialog', { agentId }, "Snapshot of an idle agent's dialog and variables. Answer: Dialog.");

export const importDialogSchema = request(
  'ImportDialog',
  { agentId, snapshot: z.unknown().describe('A snapshot from Dialog (object or its JSON text).') },
  "Replaces an idle agent's dialog and variables. Answer: Ack.",
);

export const seedHistorySchema = request(
  'SeedHistory',
  { agentId, turns: z.array(z.unknown()).describe('Interactions: { userLine, replies?: [{ node, text }], ... }.') },
  "Replaces an idle agent's history. Answer: Ack.",
);

export const createStringStorageSchema = request(
  'CreateStringStorage',
  {
    name: z.string().max(128).describe('1–128 characters from A-Z a-z 0-9 _ . -, not starting with a dot (else 7001).'),
    kind: z.enum(['list', 'map', 'multimap']).optional().describe("Required with entries; with path it must match the file's kind (else 3011)."),
    strings: z.array(z.string()).optional().describe('The values of a list.'),
    entries: z
      .array(z.object({ id: z.string(), text: z.string(), metadata: z.unknown().optional() }))
      .optional()
      .describe('Keyed texts of a map (unique ids) or multimap.'),
    path: z
      .string()
      .max(4096)
      .optional()
      .describe("A .txt (list), .json (map) or .mm.json (multimap) file relative to the server's storage root (serve --storage-root)."),
  },
  'Creates a named string storage of the session from exactly one of strings, entries or path. Answer: StringStorageCreated; ' +
    'errors 7001-7004, 3009-3011.',
);

export const destroyStringStorageSchema = request(
  'DestroyStringStorage',
  { name: z.string().max(128) },
  "Drops the session's name for a string storage; agents already using it keep it. Answer: StringStorageDestroyed.",
);

export const createKnowledgeBaseSchema = request(
  'CreateKnowledgeBase',
  knowledgeBaseSpecSchema.shape,
  'Creates a named knowledge base of the session from exactly one of configPath, records or strings, embedded by a catalog ' +
    'embedding model. Answer: KnowledgeBaseProgress events with this requestId while it embeds, then KnowledgeBaseCreated; ' +
    'errors 8001-8003, 3009, 3010.',
);

export const destroyKnowledgeBaseSchema = request(
  'DestroyKnowledgeBase',
  { name: z.string().max(128) },
  "Drops the session's name for a knowledge base; agents already using it keep it. Answer: KnowledgeBaseDestroyed.",
);

export const listEmbeddingModelsSchema = request(
  'ListEmbeddingModels',
  {},
  "The server catalog's embedding models (purpose 'embedding'), the names CreateKnowledgeBase takes. Answer: EmbeddingModels.",
);

export const setAgentVoiceSchema = request(
  'SetAgentVoice',
  { agentId, voice: voiceProfileSchema },
  "Replaces an idle agent's voice; the new voice is loaded before the swap. Answer: Ack; 3004 unless Idle, 4050, 4051, 4052.",
);

export const setAgentDeliveryModeSchema = request(
  'SetAgentDeliveryMode',
  { agentId, mode: deliveryModeSchema },
  "Switches the agent's delivery mode, at any time (a running turn follows it from its next sentence). Answer: Ack.",
);

export const listVoicesSchema = request('ListVoices', {}, "The server catalog's voices (purpose 'tts'), the names a voice profile takes. Answer: VoiceList.");

/** Every request type, by name. */
export const clientMessageSchemas = {
  Hello: helloSchema,
  CreateSession: createSessionSchema,
  LoadModel: loadModelSchema,
  UnloadModel: unloadModelSchema,
  DownloadModel: downloadModelSchema,
  ListModels: listModelsSchema,
  CreateAgent: createAgentSchema,
  DestroyAgent: destroyAgentSchema,
  SendMessage: sendMessageSchema,
  Resume: resumeSchema,
  Cancel: cancelSchema,
  ChangeAgentParam: changeAgentParamSchema,
  SubmitToolResult: submitToolResultSchema,
  ReleaseCache: releaseCacheSchema,
  ExportDialog: exportDialogSchema,
  ImportDialog: importDialogSchema,
  SeedHistory: seedHistorySchema,
  CreateStringStorage: createStringStorageSchema,
  DestroyStringStorage: destroyStringStorageSchema,
  CreateKnowledgeBase: createKnowledgeBaseSchema,
  DestroyKnowledgeBase: destroyKnowledgeBaseSchema,
  ListEmbeddingModels: listEmbeddingModelsSchema,
  SetAgentVoice: setAgentVoiceSchema,
  SetAgentDeliveryMode: setAgentDeliveryModeSchema,
  ListVoices: listVoicesSchema,
} as const;

export type ClientMessageType = keyof typeof clientMessageSchemas;
export type ClientMessage = { [Type in ClientMessageType]: z.output<(typeof clientMessageSchemas)[Type]> }[ClientMessageType];
/** A request as a client writes it (defaults not yet applied). */
export type ClientMessageInput = { [Type in ClientMessageType]: z.input<(typeof clientMessageSchemas)[Type]> }[ClientMessageType];
export type RequestId = z.output<typeof requestIdSchema>;

// ---------------------------------------------------------------- server → client

function reply<Type extends string, Shape extends z.ZodRawShape>(type: Type, shape: Shape, description: string) {
  return z.object({ type: z.literal(type), requestId: requestIdSchema.optional(), ...shape }).describe(description);
}

const wireErrorSchema = z
  .object({ code: z.int(), name: z.string(), message: z.string() })
  .describe('A typed error: stable numeric code, its SPEC name, and a message that says what to fix.');

const loadedModelSchema = z.object({
  name: z.string(),
  path: z.string(),
  pinned: z.boolean(),
  users: z.int().min(0).describe('Holders (agents, sessions) using it now.'),
});

export const connectionReadySchema = z
  .object({
    type: z.literal('ConnectionReady'),
    protocolVersion: z.int(),
    serverVersion: z.string(),
    authRequired: z.boolean().describe('True when the first message must be Hello with the token.'),
  })
  .describe('Sent unasked on accept, before anything else.');

export const ackSchema = reply('Ack', {}, 'The request succeeded.');
export const sessionCreatedSchema = reply('SessionCreated', { sessionId: z.string() }, 'Answer to CreateSession.');
export const agentCreatedSchema = reply('AgentCreated', { agentId: z.string() }, 'Answer to CreateAgent.');
export const modelLoadedSchema = reply('ModelLoaded', { model: loadedModelSchema }, 'Answer to LoadModel.');
export const downloadProgressSchema = reply(
  'DownloadProgress',
  {
    bytesDone: z.int().min(0).describe('Bytes of the file on disk so far (a resumed download starts above 0).'),
    bytesTotal: z.int().min(0).optional().describe('Size of the file, when the server said.'),
  },
  'Progress of a DownloadModel (at most about one per percent); ModelDownloaded or ErrorResponse follows.',
);
export const modelDownloadedSchema = reply(
  'ModelDownloaded',
  {
    path: z.string().describe('The file in the server\'s model cache: a GGUF path for LoadModel and CreateAgent.'),
    bytes: z.int().min(0),
    sha256: z.string(),
    downloaded: z.boolean().describe('False when the file was already there.'),
  },
  'Answer to DownloadModel.',
);
export const modelListSchema = reply('ModelList', { models: z.array(loadedModelSchema) }, 'Answer to ListModels.');
export const dialogSchema = reply(
  'Dialog',
  { snapshot: z.record(z.string(), z.unknown()).describe('Versioned dialog snapshot: { kind, version, interactions, variables }.') },
  'Answer to ExportDialog.',
);
export const stringStorageCreatedSchema = reply(
  'StringStorageCreated',
  {
    name: z.string(),
    kind: z.enum(['list', 'map', 'multimap']),
    size: z.int().min(0).describe('Number of strings (entries for a map or multimap).'),
  },
  'Answer to CreateStringStorage.',
);
export const stringStorageDestroyedSchema = reply(
  'StringStorageDestroyed',
  { name: z.string(), destroyed: z.boolean().describe('False when the session had no storage of that name.') },
  'Answer to DestroyStringStorage.',
);
export const knowledgeBaseProgressSchema = reply(
  'KnowledgeBaseProgress',
  {
    phase: z.enum(['embedding', 'indexing']).describe("'embedding' while records are embedded, then one 'indexing' while the index is built."),
    done: z.int().min(0).describe('Records embedded so far.'),
    total: z.int().min(0).describe('Records that need embedding (those an index file already held are not counted).'),
  },
  'Progress of a CreateKnowledgeBase (at most about one per percent; none for a base reopened whole from its index file); ' +
    'KnowledgeBaseCreated or ErrorResponse follows.',
);
export const knowledgeBaseCreatedSchema = reply(
  'KnowledgeBaseCreated',
  {
    name: z.string(),
    recordCount: z.int().min(0),
    dimensions: z.int().min(1).describe("Size of the embedding model's vectors."),
    indexKind: z.enum(['exact', 'hnsw']).describe('The index the base chose (or was told to use).'),
    embedded: z.int().min(0).describe('Records embedded now.'),
    reused: z.int().min(0).describe("Records whose vector came from the base's index file (configPath bases)."),
  },
  'Answer to CreateKnowledgeBase.',
);
export const knowledgeBaseDestroyedSchema = reply(
  'KnowledgeBaseDestroyed',
  { name: z.string(), destroyed: z.boolean().describe('False when the session had no knowledge base of that name.') },
  'Answer to DestroyKnowledgeBase.',
);
export const embeddingModelsSchema = reply(
  'EmbeddingModels',
  { models: z.array(z.string()).describe("Catalog names of the server's embedding models.") },
  'Answer to ListEmbeddingModels.',
);
export const voiceListSchema = reply(
  'VoiceList',
  { voices: z.array(z.string()).describe("Catalog names of the server's voices.") },
  'Answer to ListVoices.',
);
export const errorResponseSchema = reply('ErrorResponse', wireErrorSchema.shape, 'The request (or the frame) was refused.');

const turnEventFields = {
  agentId: z.string(),
  eventIndex: z.int().min(0).describe('Position of the event in its turn: 0, 1, 2, ... without gaps.'),
};

function turnEvent<Type extends string, Shape extends z.ZodRawShape>(type: Type, shape: Shape, description: string) {
  return reply(type, { ...turnEventFields, ...shape }, description);
}

const toolCallDisposition = z.enum(['Omit', 'Replay', 'Pause', 'PauseAndAcknowledge', 'AwaitResult']);

export const answerTextEventSchema = turnEvent(
  'AnswerText',
  { node: z.string(), text: z.string(), isDelta: z.boolean(), isFinal: z.boolean() },
  'Reply text: pieces (isDelta) while streaming, whole replies otherwise, and exactly one isFinal per turn just before TurnComplete.',
);
export const toolCallEventSchema = turnEvent(
  'ToolCall',
  {
    node: z.string(),
    callId: z.string(),
    name: z.string(),
    arguments: z.unknown().optional(),
    argumentsJson: z.string(),
    valid: z.boolean(),
    error: z.string().optional(),
    disposition: toolCallDisposition,
  },
  'A tool call the model made (invalid ones too).',
);
export const nodeEventSchema = turnEvent(
  'NodeEvent',
  { node: z.string(), nodeType: z.string(), name: z.string(), data: z.record(z.string(), z.unknown()) },
  'Something a node reports (completed, a classification, a warning, ...).',
);
export const pausedEventSchema = turnEvent(
  'Paused',
  {
    node: z.string(),
    reason: z.enum(['pauseNode', 'toolCall']),
    timeoutMs: z.int().min(0),
    toolCall: z
      .object({ callId: z.string(), name: z.string(), arguments: z.unknown().optional(), disposition: toolCallDisposition })
      .optional(),
  },
  'The turn waits for Resume (or its timeout).',
);
export const turnCompleteEventSchema = turnEvent(
  'TurnComplete',
  {
    status: z.enum(['Success', 'Cancelled', 'Error', 'PauseTimedOut']),
    tokensGenerated: z.int().min(0),
    error: wireErrorSchema.optional(),
    diagnostics: z.record(z.string(), z.unknown()).optional(),
  },
  'The last event of every turn, exactly once.',
);

export const ttsAudioFormatEventSchema = turnEvent(
  'TtsAudioFormat',
  {
    node: z.string(),
    sampleRate: z.int().min(1).describe('Samples per second of every TtsAudio of this turn.'),
    channels: z.literal(1),
    encoding: z.literal('s16le').describe('Signed 16-bit little-endian samples.'),
  },
  'The audio format of a speaking turn: once, before its first TtsAudio.',
);
export const ttsAudioEventSchema = turnEvent(
  'TtsAudio',
  {
    node: z.string(),
    seq: z.int().min(0).describe('Position of this audio frame among the audio frames of its turn: 0, 1, 2, ... without gaps.'),
    sampleOffset: z.int().min(0).describe('Samples of this turn sent before this frame (its start on the turn\'s timeline).'),
    samples: z.int().min(0).describe('Samples in this frame: the PCM after the header is 2 × samples bytes.'),
    sentence: z.string().describe('The sentence spoken (cleaned text).'),
    sentenceIndex: z.int().min(0).describe('0-based index of the sentence within the turn.'),
    textStart: z.int().min(0).describe("Start of the sentence in the reply's raw text (UTF-16 offset), for subtitles."),
    textEnd: z.int().min(0),
    lastOfSentence: z.boolean().describe('True on the last frame of the sentence.'),
  },
  'Speech: the JSON header of a binary audio frame (tag 0x01, docs/PROTOCOL.md §1); the PCM follows the header. In order, ' +
    'all before the turn\'s TurnComplete.',
);

/** Every message the server sends, by name. */
export const serverMessageSchemas = {
  ConnectionReady: connectionReadySchema,
  Ack: ackSchema,
  SessionCreated: sessionCreatedSchema,
  AgentCreated: agentCreatedSchema,
  ModelLoaded: modelLoadedSchema,
  ModelList: modelListSchema,
  DownloadProgress: downloadProgressSchema,
  ModelDownloaded: modelDownloadedSchema,
  Dialog: dialogSchema,
  StringStorageCreated: stringStorageCreatedSchema,
  StringStorageDestroyed: stringStorageDestroyedSchema,
  KnowledgeBaseProgress: knowledgeBaseProgressSchema,
  KnowledgeBaseCreated: knowledgeBaseCreatedSchema,
  KnowledgeBaseDestroyed: knowledgeBaseDestroyedSchema,
  EmbeddingModels: embeddingModelsSchema,
  VoiceList: voiceListSchema,
  ErrorResponse: errorResponseSchema,
  AnswerText: answerTextEventSchema,
  ToolCall: toolCallEventSchema,
  NodeEvent: nodeEventSchema,
  Paused: pausedEventSchema,
  TurnComplete: turnCompleteEventSchema,
  TtsAudioFormat: ttsAudioFormatEventSchema,
  TtsAudio: ttsAudioEventSchema,
} as const;

export type ServerMessageType = keyof typeof serverMessageSchemas;
export type ServerMessage = { [Type in ServerMessageType]: z.output<(typeof serverMessageSchemas)[Type]> }[ServerMessageType];
export type WireError = z.output<typeof wireErrorSchema>;
export type WireLoadedModel = z.output<typeof loadedModelSchema>;
export type TurnEventMessage = z.output<
  | typeof answerTextEventSchema
  | typeof toolCallEventSchema
  | typeof nodeEventSchema
  | typeof pausedEventSchema
  | typeof turnCompleteEventSchema
  | typeof ttsAudioFormatEventSchema
  | typeof ttsAudioEventSchema
>;

/** A TtsAudio frame as the server sends it and the clients decode it: the JSON header and its samples. */
export type WireTtsAudio = z.output<typeof ttsAudioEventSchema> & { pcm: Int16Array };

/** Server message types that report on a request still in flight (they never answer it). */
export const PROGRESS_EVENT_TYPES: ReadonlySet<string> = new Set(['DownloadProgress', 'KnowledgeBaseProgress']);

/** Server message types that are turn events. */
export const TURN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'AnswerText',
  'ToolCall',
  'NodeEvent',
  'Paused',
  'TurnComplete',
  'TtsAudioFormat',
  'TtsAudio',
]);
