import type { AgentDialog } from '../../src/agent/agent-dialog.js';
import type { TurnStatus } from '../../src/agent/turn-events.js';
import type { HistoryRole, ToolCallRecordInput, TurnScope } from '../../src/agent/turn-scope.js';

export interface FakeInteraction {
  userText: string;
  slots: Record<string, string>;
  instructions: { name: string; text: string }[];
  replies: { node: string; text: string; historyRole: HistoryRole }[];
  toolCalls: ToolCallRecordInput[];
  status?: TurnStatus;
}

/** Minimal in-memory dialog for state-machine tests that do not project prompts. */
export class FakeDialog implements AgentDialog {
  readonly interactions: FakeInteraction[] = [];

  get turnCount(): number {
    return this.interactions.length;
  }

  beginTurn(userText: string, slots: Record<string, string>): TurnScope {
    const interaction: FakeInteraction = { userText, slots: { ...slots }, instructions: [], replies: [], toolCalls: [] };
    this.interactions.push(interaction);
    const index = this.interactions.length;
    return {
      index,
      userText,
      input: (slot) => (slot === undefined ? userText : interaction.slots[slot]),
      setSlot: (name, value) => {
        interaction.slots[name] = value;
      },
      addInstruction: (name, text) => interaction.instructions.push({ name, text }),
      addReply: (reply) => interaction.replies.push(reply),
      get latestReplyText() {
        return interaction.replies.at(-1)?.text;
      },
      recordToolCall: (call) => interaction.toolCalls.push({ ...call }),
      updateToolCall: (callId, update) => {
        const call = interaction.toolCalls.find((c) => c.callId === callId);
        if (call) Object.assign(call, update);
      },
    };
  }

  endTurn(scope: TurnScope, status: TurnStatus): void {
    const interaction = this.interactions[scope.index - 1];
    if (interaction) interaction.status = status;
  }
}
