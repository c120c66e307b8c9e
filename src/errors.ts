/**
 * Typed errors with stable numeric codes (SPEC §8). Every error the package throws on purpose is a
 * {@link LlamaDialogError}; `code` and `name` never change between releases, `message` says what to fix.
 */
export const ErrorCode = {
  ServerShuttingDown: 2001,
  SessionNotReady: 2002,
  SessionAlreadyExists: 2003,
  InvalidAgentId: 3001,
  AgentAlreadyDestroyed: 3002,
  GraphCompilationFailed: 3003,
  AgentBusy: 3004,
  UnknownNode: 3005,
  ParamNotMutable: 3006,
  InvalidParamValue: 3007,
  InvalidExitTarget: 3008,
  /** A storage file path that is absolute or leaves the storage root (`..`, a symlink out). */
  StoragePathEscape: 3009,
  /** A storage file (or storage name) that does not exist under the storage root. */
  StorageFileNotFound: 3010,
  /** A storage of a kind the node cannot use (IntentToInstruction needs a Map). */
  StorageWrongKind: 3011,
  AgentNotPaused: 3012,
  /** A graph with a Speak or GenerateAndSpeak node, created without `voice` (or with a voice that is not a tts model). */
  VoiceRequired: 3013,
  InferenceFailed: 4001,
  InferenceTimeout: 4002,
  MaxStepsExceeded: 4003,
  ContextOverflow: 4004,
  ModelLoadFailed: 4005,
  // Engine-level codes, beyond the reference server's list: each names one thing a caller did wrong.
  InvalidArgument: 4010,
  InvalidToken: 4011,
  ContextBusy: 4012,
  ObjectDisposed: 4013,
  Aborted: 4014,
  VocabOnlyModel: 4015,
  StateMismatch: 4016,
  TemplateRenderFailed: 4017,
  InputTooLong: 4018,
  InvalidSnapshot: 4019,
  NativeBinaryMissing: 4020,
  /** The model cannot do what was asked: no tokenizer (vocabulary type none), or it cannot generate
   *  (encoder-only, embedding-only, non-causal, no KV cache). */
  UnsupportedModel: 4021,
  /** A context whose estimated KV cache does not fit in the memory available now. */
  InsufficientMemory: 4022,
  // Model downloads (`llama-dialog pull`, catalog `url`, DownloadModel): each names one way a download ends badly.
  /** The download could not finish: network, HTTP status, server refusing access, retries used up. */
  ModelDownloadFailed: 4023,
  /** The server answered 404/410: no file at that address (wrong owner, repo, file name or revision). */
  ModelNotFound: 4024,
  /** The body does not start with the GGUF magic (an HTML page, a .safetensors file, an error text). */
  NotGguf: 4025,
  /** The disk filled up (ENOSPC, EDQUOT) while the file was written. */
  DiskFull: 4026,
  /** The downloaded file's sha256 is not the expected one. */
  ChecksumMismatch: 4027,
  // Model conversion (`llama-dialog convert-embedder`): the input files, then the model they describe.
  /** A .safetensors file (or the zip/wheel holding it) is truncated, has a bad header, or points outside itself. */
  MalformedModelFile: 4040,
  /** The input is readable but is not a model the converter handles: missing config, tensor or vocabulary, wrong shape. */
  ConversionFailed: 4041,
  // Voice (speech synthesis): the voice named, its files, the engine package, one synthesis.
  /** A voice name that is not a `purpose: 'tts'` entry of the model catalog. */
  VoiceNotFound: 4050,
  /** A voice folder refused before the engine sees it: a missing file, an ONNX without the engine's metadata, a bad sample rate. */
  InvalidVoice: 4051,
  /** The optional speech engine package (sherpa-onnx-node) is not installed or its native library does not load. */
  TtsEngineUnavailable: 4052,
  /** The engine failed on one text; the turn goes on without that sentence's audio. */
  SpeechSynthesisFailed: 4053,
  MalformedMessage: 5001,
  UnknownMessageType: 5002,
  FrameTooLarge: 5003,
  ProtocolVersionMismatch: 5004,
  // Server codes beyond the reference server's list (SPEC §9 limits and auth): each names one refusal.
  RequestIdInUse: 5005,
  AuthenticationFailed: 5006,
  ConnectionLimitReached: 5007,
  AgentLimitReached: 5008,
  OutgoingQueueFull: 5009,
  ConnectionClosed: 5010,
  /** A string storage name that is empty, too long, has characters outside [A-Za-z0-9_.-/] or is reserved. */
  InvalidStorageName: 7001,
  DuplicateStorageName: 7002,
  /** Storage contents refused: not UTF-8, empty, bad JSON shape, duplicate Map key, length mismatch, too large. */
  InvalidStorageData: 7003,
  /** A session storage name that is also a file under the storage root: node references would be ambiguous. */
  StorageNameShadowsFile: 7004,
  // Knowledge bases (the reference server's codes): a bad name, a name already taken, a bad config, schema or record.
  InvalidKnowledgeBaseName: 8001,
  DuplicateKnowledgeBaseName: 8002,
  /** A knowledge base's config, field schema or records are invalid (each message names the record and field). */
  InvalidKnowledgeBase: 8003,
} as const;

export type ErrorName = keyof typeof ErrorCode;
export type ErrorCodeValue = (typeof ErrorCode)[ErrorName];

const nameByCode = new Map<number, ErrorName>(
  Object.entries(ErrorCode).map(([name, code]) => [code, name as ErrorName]),
);

/** The one error class of the package. `code` is stable; `errorName` is the SPEC name of that code. */
export class LlamaDialogError extends Error {
  readonly code: ErrorCodeValue;
  readonly errorName: ErrorName;

  constructor(errorName: ErrorName, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = `LlamaDialogError[${errorName}]`;
    this.errorName = errorName;
    this.code = ErrorCode[errorName];
  }

  /** Error for a numeric code coming from the native side (unknown codes become InferenceFailed). */
  static fromCode(code: number, message: string, cause?: unknown): LlamaDialogError {
    return new LlamaDialogError(nameByCode.get(code) ?? 'InferenceFailed', message, { cause });
  }
}

/** True when `error` is a {@link LlamaDialogError} with the given name. */
export function isLlamaDialogError(error: unknown, errorName?: ErrorName): error is LlamaDialogError {
  return error instanceof LlamaDialogError && (errorName === undefined || error.errorName === errorName);
}
