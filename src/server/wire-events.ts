import { ErrorCode, LlamaDialogError, type ErrorName } from '../errors.js';
import type { TurnCompleteEvent, TurnEvent } from '../agent/turn-events.js';
import type { TurnDiagnostics } from '../diag/turn-diagnostics.js';
import type { SpeechEvent } from '../voice/speech-events.js';
import type { RequestId, TurnEventMessage, WireError } from './protocol-messages.js';

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

/** A library turn event as a wire message of the given agent and SendMessage. */
export function toWireEvent(event: Exclude<TurnEvent, SpeechEvent>, agentId: string, requestId: RequestId | undefined, eventIndex: number): TurnEventMessage {
  const envelope = requestId === undefined ? { agentId, eventIndex } : { agentId, requestId, eventIndex };
  switch (event.type) {
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

/** The library turn event a wire message carries (envelope fields dropped). */
export function fromWireEvent(message: TurnEventMessage): TurnEvent {
  switch (message.type) {
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
