import { ErrorCode, LlamaDialogError, type ErrorName } from '../errors.js';
import type { TurnCompleteEvent, TurnEvent } from '../agent/turn-events.js';
import type { TurnDiagnostics } from '../diag/turn-diagnostics.js';
import type { TtsAudioEvent } from '../voice/speech-events.js';
import type { RequestId, TurnEventMessage, WireError, WireTtsAudio } from './protocol-messages.js';

/** A turn event as the server forwards it (the agent's TurnEvent union, speech events included). */
export type WireTurnEvent = TurnEvent;

/** A `ttsAudio` event as the TypeScript client rebuilds it: the in-process fields plus the frame's place in the turn. */
export interface RemoteTtsAudioEvent extends TtsAudioEvent {
  /** Position among the turn's audio events: 0, 1, 2, ... without gaps. */
  seq: number;
  /** Samples of the turn before this chunk. */
  sampleOffset: number;
}

/** Samples in one TtsAudio frame at most: 8192 (16 KiB of PCM, about 370 ms at 22 050 Hz). Longer chunks are split. */
export const MAX_AUDIO_FRAME_SAMPLES = 8192;

/** Where a turn's audio stands: the seq and the sample offset of its next TtsAudio frame. */
export interface TurnAudioPosition {
  seq: number;
  samples: number;
}

// The one mapping between the library's turn events (camelCase `type`) and the wire's (PascalCase), used by the
// server to send and by the TypeScript client to rebuild identical events.

/** The wire form of a typed error. */
export function toWireError(error: LlamaDialogError): WireError {
  return { code: error.code, name: error.errorName, message: error.message };
}

/** A typed error from its wire form; an unknown code keeps its message under InferenceFailed. */
export function fromWireError(wire: WireError): LlamaDialogError {
  const name = (Object.hasOwn(ErrorCode, wire.name) ? wire.name : undefined) as ErrorName | undefined;
  if (name && ErrorCode[name] === wire.code) return new LlamaDialogError(name, wire.message);
  return LlamaDialogError.fromCode(wire.code, wire.message);
}

/**
 * A `ttsAudio` event as TtsAudio frames: one, or several of at most MAX_AUDIO_FRAME_SAMPLES samples for a longer
 * chunk (only the last one keeps `lastOfSentence`). `nextEventIndex` hands out the frames' eventIndex; `position`
 * advances.
 */
export function toWireAudio(
  event: TtsAudioEvent,
  agentId: string,
  requestId: RequestId | undefined,
  nextEventIndex: () => number,
  position: TurnAudioPosition,
): WireTtsAudio[] {
  const frames: WireTtsAudio[] = [];
  const { pcm } = event;
  const count = Math.max(1, Math.ceil(pcm.length / MAX_AUDIO_FRAME_SAMPLES));
  for (let index = 0; index < count; index++) {
    const piece = pcm.subarray(index * MAX_AUDIO_FRAME_SAMPLES, (index + 1) * MAX_AUDIO_FRAME_SAMPLES);
    const last = index === count - 1;
    const eventIndex = nextEventIndex();
    frames.push({
      type: 'TtsAudio',
      agentId,
      ...(requestId === undefined ? {} : { requestId }),
      eventIndex,
      node: event.node,
      seq: position.seq,
      sampleOffset: position.samples,
      samples: piece.length,
      sentence: event.sentence,
      sentenceIndex: event.sentenceIndex,
      textStart: event.textStart,
      textEnd: event.textEnd,
      lastOfSentence: event.lastOfSentence && last,
      pcm: piece,
    });
    position.seq += 1;
    position.samples += piece.length;
  }
  return frames;
}

/** A library turn event (any but `ttsAudio`: {@link toWireAudio}) as a wire message of the given agent and SendMessage. */
export function toWireEvent(
  event: Exclude<WireTurnEvent, TtsAudioEvent>,
  agentId: string,
  requestId: RequestId | undefined,
  eventIndex: number,
): TurnEventMessage {
  const envelope = requestId === undefined ? { agentId, eventIndex } : { agentId, requestId, eventIndex };
  switch (event.type) {
    case 'ttsAudioFormat':
      return { type: 'TtsAudioFormat', ...envelope, node: event.node, sampleRate: event.sampleRate, channels: event.channels, encoding: event.encoding };
    case 'answerText': {
      const { type: _type, ...fields } = event;
      return { type: 'AnswerText', ...envelope, ...fields };
    }
    case 'toolCall': {
      const { type: _type, ...fields } = event;
      return { type: 'ToolCall', ...envelope, ...fields };
    }
    case 'nodeEvent': {
      const { type: _type, ...fields } = event;
      return { type: 'NodeEvent', ...envelope, ...fields };
    }
    case 'paused': {
      const { type: _type, ...fields } = event;
      return { type: 'Paused', ...envelope, ...fields };
    }
    case 'turnComplete': {
      const message: TurnEventMessage = {
        type: 'TurnComplete',
        ...envelope,
        status: event.status,
        tokensGenerated: event.tokensGenerated,
      };
      if (event.error) message.error = toWireError(event.error);
      if (event.diagnostics) message.diagnostics = event.diagnostics as unknown as Record<string, unknown>;
      return message;
    }
  }
}

/** The library turn event a wire message carries (envelope fields dropped); a TtsAudio message must carry its `pcm`. */
export function fromWireEvent(message: TurnEventMessage): WireTurnEvent {
  switch (message.type) {
    case 'TtsAudioFormat':
      return { type: 'ttsAudioFormat', node: message.node, sampleRate: message.sampleRate, channels: message.channels, encoding: message.encoding };
    case 'TtsAudio': {
      const event: RemoteTtsAudioEvent = {
        type: 'ttsAudio',
        node: message.node,
        pcm: (message as WireTtsAudio).pcm,
        sentence: message.sentence,
        sentenceIndex: message.sentenceIndex,
        textStart: message.textStart,
        textEnd: message.textEnd,
        lastOfSentence: message.lastOfSentence,
        seq: message.seq,
        sampleOffset: message.sampleOffset,
      };
      return event;
    }
    case 'AnswerText':
      return { type: 'answerText', node: message.node, text: message.text, isDelta: message.isDelta, isFinal: message.isFinal };
    case 'ToolCall': {
      const event: TurnEvent = {
        type: 'toolCall',
        node: message.node,
        callId: message.callId,
        name: message.name,
        arguments: message.arguments,
        argumentsJson: message.argumentsJson,
        valid: message.valid,
        disposition: message.disposition,
      };
      if (message.error !== undefined) event.error = message.error;
      return event;
    }
    case 'NodeEvent':
      return { type: 'nodeEvent', node: message.node, nodeType: message.nodeType, name: message.name, data: message.data };
    case 'Paused': {
      const event: TurnEvent = { type: 'paused', node: message.node, reason: message.reason, timeoutMs: message.timeoutMs };
      if (message.toolCall) event.toolCall = { ...message.toolCall, arguments: message.toolCall.arguments };
      return event;
    }
    case 'TurnComplete': {
      const event: TurnCompleteEvent = { type: 'turnComplete', status: message.status, tokensGenerated: message.tokensGenerated };
      if (message.error) event.error = fromWireError(message.error);
      if (message.diagnostics) event.diagnostics = message.diagnostics as unknown as TurnDiagnostics;
      return event;
    }
  }
}
