/**
 * llama-dialog: low-latency conversational agents (game NPCs first) running in-process on llama.cpp.
 * This file is the public surface; everything else is internal and may change.
 */

// Errors (SPEC §8)
export { ErrorCode, LlamaDialogError, isLlamaDialogError, type ErrorCodeValue, type ErrorName } from './errors.js';

// Engine: models, contexts, synthetic models
export { loadModel, type LoadModelOptions } from './engine/load-model.js';
export { Model, defaultThreadCount, type CreateContextOptions } from './engine/model.js';
export { Context } from './engine/context.js';
export { SharedContext } from './engine/shared-context.js';
export { KV_LAYOUTS } from './engine/types.js';
export { Sequence } from './engine/sequence.js';
export type {
  EvaluateResult,
  GenerateOptions,
  GenerateResult,
  GenerateStepProfile,
  GenerateTimings,
  InferenceContext,
  InferenceSequence,
  KvLayout,
  ModelInfo,
  SamplingOptions,
  SharedContextOptions,
  SharedInferenceContext,
  StopReason,
  TokenizeOptions,
  Tokenizer,
} from './engine/types.js';
export {
  SYNTHETIC_PRESETS,
  writeSyntheticModel,
  type SyntheticModelInfo,
  type SyntheticModelOptions,
  type SyntheticPreset,
} from './synthetic/synthetic-model.js';
export {
  SYNTHETIC_BERT_TINY,
  writeSyntheticBert,
  type SyntheticBertInfo,
  type SyntheticBertOptions,
  type SyntheticBertShape,
} from './synthetic/synthetic-bert.js';
export { readGgufFile, type GgufFile } from './gguf/gguf-reader.js';
export { convertBertToGguf, type BertConversionInfo, type BertConversionOptions } from './gguf/bert-gguf-converter.js';
export { SafetensorsFile, type SafetensorsDtype, type SafetensorsHeader, type SafetensorsTensorInfo } from './gguf/safetensors-reader.js';
export {
  downloadModel,
  type DownloadModelOptions,
  type DownloadProgress,
  type DownloadResult,
  type DownloadSink,
  type OpenDownloadSink,
} from './models/model-download.js';
export { parseModelUrl, type ModelUrl } from './models/model-url.js';
export { modelCacheDir } from './models/model-cache.js';
export { GgufWriter } from './gguf/gguf-writer.js';
export { setLlamaLogLevel, type LlamaLogLevel } from './native/log.js';
export { systemInfo, type SystemInfo } from './native/system-info.js';
export { jsonSchemaToGrammar } from './engine/grammar.js';
export { platformPackageName } from './native/platform-id.js';

// Dialog history and prompt projection
export * from './dialog/index.js';
export * from './prompt/index.js';

// Knowledge: field schemas, records, knowledge-base configs, record filters (SPEC §11)
export * from './knowledge/index.js';

// Graphs, agents, sessions
export { compileGraph } from './graph/compile-graph.js';
export { graphSchema, type GraphJson, type GraphNodeJson } from './graph/graph-schema.js';
export { MAX_NODE_STEPS } from './graph/execute-graph.js';
export { nodeCatalog } from './graph/node-catalog.js';
export { defineNode, type NodeDefinition, type StorageParam } from './graph/node-definition.js';
export { Session, createSession, defaultModelRegistry, type SessionOptions, type SessionHostOptions } from './agent/session.js';
export {
  ModelRegistry,
  type ContextForm,
  type ContextPolicy,
  type KvReservation,
  type ModelCatalogEntry,
  type LoadedModelStatus,
  type ModelStats,
} from './host/model-registry.js';
export { Agent, type SendMessageOptions } from './agent/agent.js';

// String storages (knowledge)
export {
  STRING_STORAGE_KINDS,
  isKeyedStorage,
  type KeyedStringStorage,
  type StorageEntry,
  type StringStorage,
  type StringStorageKind,
} from './knowledge/string-storage.js';
export { stringStorageSpecSchema, type StringStorageSpec } from './knowledge/string-storage-spec.js';
export { MAX_STORAGE_FILE_BYTES } from './knowledge/storage-root.js';
export type { AgentOptions } from './agent/agent-options.js';
export type { AgentState } from './agent/agent-state.js';
export type { KvCacheInitialization } from './host/node-cache.js';
export type { SchedulingPolicy } from './host/model-scheduler.js';
export type { VariableValue } from './agent/agent-variables.js';
export type { RuntimeModel } from './engine/types.js';
export type { ModelLoader } from './host/model-loader.js';
export { Turn } from './agent/turn.js';
export * from './agent/turn-events.js';
export type { TurnDiagnostics, NodeDiagnostics } from './diag/turn-diagnostics.js';
// One cause type; `DiagnosticsCacheMissCause` is its earlier second name, kept for callers that use it.
export type { CacheMissCause, CacheMissCause as DiagnosticsCacheMissCause } from './diag/cache-reuse.js';

// Voice: the agent's voice, speaking nodes' audio, the audio cache and baked lines (docs/VOICE.md)
export { DELIVERY_MODES, type DeliveryMode, type VoiceProfile } from './voice/voice-profile.js';
export type { PcmFormat, SpeechRequest, TtsVoice, VoiceLoader } from './voice/tts-voice.js';
export { AudioCache, DEFAULT_AUDIO_CACHE_BYTES, type AudioCacheKey, type AudioCacheStats } from './voice/audio-cache.js';
export { MAX_AUDIO_CHUNK_SAMPLES, type SentenceTiming, type SpeechReport } from './voice/speech-pipeline.js';
export {
  VOICE_BAKE_VERSION,
  bakeLines,
  decodeVoiceBake,
  encodeVoiceBake,
  loadBakedLines,
  readVoiceBake,
  writeVoiceBake,
  type BakeOptions,
  type BakedClip,
  type VoiceBake,
} from './voice/voice-bake.js';

// Server: the session protocol for game engines (SPEC §9; the client is `llama-dialog/client`)
export { createServer, DialogServer, type ConnectionClosedEvent, type DialogServerEvents } from './server/dialog-server.js';
export { serverLimitDefaults, type ServerOptions } from './server/server-options.js';
export {
  MAX_FRAME_BYTES,
  AUDIO_FRAME_TAG,
  FrameDecoder,
  encodeFrame,
  decodeFramePayload,
  encodeAudioFrame,
  decodeAudioFramePayload,
  decodeServerPayload,
} from './server/frame-codec.js';
export { PROTOCOL_VERSION, clientMessageSchemas, serverMessageSchemas } from './server/protocol-messages.js';
