import { LlamaDialogError, isLlamaDialogError } from '../../errors.js';
import type { AgentState } from '../../agent/agent-state.js';
import type { SendMessageOptions } from '../../agent/agent.js';
import type { TurnEvent } from '../../agent/turn-events.js';
import type { DialogSnapshot, InteractionInput } from '../../dialog/index.js';
import type { DeliveryMode, VoiceProfile } from '../../voice/voice-profile.js';
import { fromWireEvent } from '../wire-events.js';
import type { ClientConnection } from './client-connection.js';
import { RemoteTurn } from './remote-turn.js';

/**
 * An agent living in a server, with the methods and events of the library's `Agent`. Every rule is the server's
 * (AgentBusy, AgentNotPaused, ...); the refusals arrive as the same typed errors. Methods that are synchronous
 * in-process return promises here; `sendMessage` returns its turn at once, as in-process.
 *
 * `state` follows the turn events this client has received, so it trails the server's by the network delay.
 */
export class RemoteAgent {
  /** Session-scoped id. */
  readonly id: string;
  private currentState: AgentState = 'Idle';
  private active: RemoteTurn | undefined;
  private turnCounter = 0;
  private destroying: Promise<void> | undefined;
  /** Set when the agent went with its lost connection rather than by `destroy()` or `session.close()`. */
  private lostWith: LlamaDialogError | undefined;

  /** @internal Created by `RemoteSession.createAgent`. */
  constructor(
    id: string,
    private readonly connection: ClientConnection,
    private readonly onDestroyed: (agent: RemoteAgent) => void,
  ) {
    this.id = id;
  }

  get state(): AgentState {
    return this.currentState;
  }

  /** The turn in progress (Running or Paused), if any. */
  get currentTurn(): RemoteTurn | undefined {
    return this.active;
  }

  /**
   * Starts a turn; iterate the returned turn for events, or await it for its TurnComplete. A refusal (AgentBusy,
   * InputTooLong, AgentAlreadyDestroyed, ServerShuttingDown, ...) rejects the turn's promise and iterator.
   *
   * After the connection was lost, the turn is refused with ConnectionClosed (5010), not AgentAlreadyDestroyed:
   * the agent is gone with its server session, and that code is what tells a client to reconnect and re-create the
   * agent from its last exported dialog (docs/SCALING.md).
   */
  sendMessage(text: string, options: SendMessageOptions = {}): RemoteTurn {
    this.turnCounter += 1;
    const turn = new RemoteTurn(this.turnCounter, text);
    if (this.currentState === 'Destroyed' || this.destroying) {
      turn.refuse(
        this.lostWith
          ? new LlamaDialogError('ConnectionClosed', `agent ${this.id} is gone with its session (${this.lostWith.message}): reconnect and re-create it`, { cause: this.lostWith })
          : new LlamaDialogError('AgentAlreadyDestroyed', `agent ${this.id} was destroyed`),
      );
      return turn;
    }
    const previous = { state: this.currentState, turn: this.active };
    // Optimistic, like the in-process agent that is Running as soon as sendMessage returns; undone on refusal.
    this.currentState = 'Running';
    this.active = turn;
    const message = options.slots === undefined
      ? { type: 'SendMessage' as const, agentId: this.id, text }
      : { type: 'SendMessage' as const, agentId: this.id, text, slots: options.slots };
    this.connection
      .startTurn(message, (wire) => {
        const event = fromWireEvent(wire);
        if (event.type === 'paused') this.currentState = 'Paused';
        if (event.type === 'turnComplete') this.finishTurn(turn);
        turn.push(event);
      })
      .catch((error: unknown) => {
        if (this.active === turn) {
          this.active = previous.turn;
          if (this.currentState !== 'Destroyed') this.currentState = previous.state;
        }
        turn.refuse(asTypedError(error));
      });
    return turn;
  }

  /** Continues a paused turn. @throws LlamaDialogError AgentNotPaused; AgentAlreadyDestroyed. */
  async resume(payload?: unknown): Promise<void> {
    await this.connection.request(payload === undefined ? { type: 'Resume', agentId: this.id } : { type: 'Resume', agentId: this.id, payload });
    if (this.currentState === 'Paused') this.currentState = 'Running';
  }

  /** Stops the running or paused turn; resolves after its TurnComplete(Cancelled) arrived. */
  async cancel(): Promise<void> {
    await this.connection.request({ type: 'Cancel', agentId: this.id });
  }

  /** @throws LlamaDialogError AgentBusy while Running; UnknownNode; ParamNotMutable; InvalidParamValue. */
  async changeParam(node: string, param: string, value: unknown): Promise<void> {
    await this.connection.request({ type: 'ChangeAgentParam', agentId: this.id, node, param, value });
  }

  /** @throws LlamaDialogError AgentBusy while Running; InvalidArgument for an unknown call id. */
  async submitToolResult(callId: string, result: string): Promise<void> {
    await this.connection.request({ type: 'SubmitToolResult', agentId: this.id, callId, result });
  }

  /**
   * Replaces the agent's voice (the server loads the new one before the swap).
   * @throws LlamaDialogError AgentBusy unless Idle; VoiceNotFound (4050); InvalidVoice (4051); TtsEngineUnavailable (4052);
   *   MalformedMessage for a profile out of range (speed 0.1–3.0, speakerId ≥ 0).
   */
  async setVoice(profile: VoiceProfile): Promise<void> {
    await this.connection.request({ type: 'SetAgentVoice', agentId: this.id, voice: profile });
  }

  /**
   * Switches how the agent delivers speech ('voice', 'synced' or 'text'), at any time: a running turn follows it from
   * its next sentence. @throws LlamaDialogError MalformedMessage for another mode.
   */
  async setDeliveryMode(mode: DeliveryMode): Promise<void> {
    await this.connection.request({ type: 'SetAgentDeliveryMode', agentId: this.id, mode });
  }

  /** @throws LlamaDialogError AgentBusy unless Idle. */
  async releaseCache(): Promise<void> {
    await this.connection.request({ type: 'ReleaseCache', agentId: this.id });
  }

  /** @throws LlamaDialogError AgentBusy unless Idle. */
  async exportDialog(): Promise<DialogSnapshot> {
    const answer = await this.connection.request({ type: 'ExportDialog', agentId: this.id });
    if (answer.type !== 'Dialog') throw unexpected('Dialog', answer.type);
    return answer.snapshot as unknown as DialogSnapshot;
  }

  /** @throws LlamaDialogError InvalidSnapshot (agent unchanged); AgentBusy unless Idle. */
  async importDialog(snapshot: unknown): Promise<void> {
    await this.connection.request({ type: 'ImportDialog', agentId: this.id, snapshot });
  }

  /** @throws LlamaDialogError InvalidSnapshot; AgentBusy unless Idle. */
  async seedHistory(turns: readonly InteractionInput[]): Promise<void> {
    await this.connection.request({ type: 'SeedHistory', agentId: this.id, turns: [...turns] });
  }

  /** Cancels any turn and destroys the agent on the server. Idempotent. */
  destroy(): Promise<void> {
    this.destroying ??= (async () => {
      try {
        await this.connection.request({ type: 'DestroyAgent', agentId: this.id });
      } catch (error) {
        // Already gone with its connection or its session: destroyed all the same.
        if (!isLlamaDialogError(error, 'ConnectionClosed') && !isLlamaDialogError(error, 'SessionNotReady')) throw error;
      }
      this.markDestroyed();
    })();
    return this.destroying;
  }

  /** @internal The session closed or the connection was lost: the server destroyed this agent. */
  markDestroyed(lost?: LlamaDialogError): void {
    // The first cause wins: an agent the program destroyed or closed stays AgentAlreadyDestroyed when the socket ends after.
    if (this.currentState !== 'Destroyed' && !this.destroying) this.lostWith = lost;
    const turn = this.active;
    this.currentState = 'Destroyed';
    this.active = undefined;
    if (turn && lost) turn.push({ type: 'turnComplete', status: 'Error', tokensGenerated: 0, error: lost });
    this.onDestroyed(this);
  }

  private finishTurn(turn: RemoteTurn): void {
    if (this.active === turn) this.active = undefined;
    if (this.currentState !== 'Destroyed') this.currentState = 'Idle';
  }
}

function asTypedError(error: unknown): LlamaDialogError {
  if (isLlamaDialogError(error)) return error;
  return new LlamaDialogError('ConnectionClosed', error instanceof Error ? error.message : String(error), { cause: error });
}

function unexpected(expected: string, got: string): LlamaDialogError {
  return new LlamaDialogError('MalformedMessage', `expected ${expected} from the server, got ${got}`);
}
