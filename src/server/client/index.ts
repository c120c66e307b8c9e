/**
 * `llama-dialog/client`: the TypeScript client of the session protocol (SPEC §9, docs/PROTOCOL.md). The objects it
 * returns have the methods and events of the library's Session, Agent and Turn, so a program runs unchanged
 * in-process or against `llama-dialog serve`. It does not load the native addon.
 */
import { ClientConnection, type ConnectOptions } from './client-connection.js';
import { RemoteSession } from './remote-session.js';

export {
  RemoteSession,
  type RemoteAgentOptions,
  type RemoteDownloadResult,
  type RemoteKnowledgeBase,
  type RemoteKnowledgeBaseProgress,
  type RemoteKnowledgeBaseSpec,
  type RemoteModelStatus,
  type RemoteStringStorage,
  type RemoteStringStorageSpec,
} from './remote-session.js';
export { RemoteAgent } from './remote-agent.js';
export { RemoteTurn } from './remote-turn.js';
export type { ConnectOptions, ServerGreeting } from './client-connection.js';
export { PROTOCOL_VERSION } from '../protocol-messages.js';
export { ErrorCode, LlamaDialogError, isLlamaDialogError, type ErrorName } from '../../errors.js';
export type * from '../../agent/turn-events.js';
export type { SpeechEvent, TtsAudioEvent, TtsAudioFormatEvent } from '../../voice/speech-events.js';
export type { DeliveryMode, VoiceProfile } from '../../voice/voice-profile.js';
export type { RemoteTtsAudioEvent } from '../wire-events.js';
export { collectTurnAudio, writeTurnWav, type TurnAudio } from './turn-audio.js';
export { encodeWav, writeWav } from '../../voice/wav-file.js';

/**
 * Connects to a server and says Hello (with `options.token` when given). Returns the connection's session, not yet
 * created: call `create({ gameName })` next, as with `new Session().create(...)`.
 * @throws LlamaDialogError ConnectionClosed (unreachable, or closed before ConnectionReady); the server's refusal:
 * ConnectionLimitReached (5007), AuthenticationFailed (5006), ProtocolVersionMismatch (5004).
 */
export async function connect(host: string, port: number, options: ConnectOptions = {}): Promise<RemoteSession> {
  return new RemoteSession(await ClientConnection.open(host, port, options));
}
