// End of turn and replay on the real models: 40 turns of the blacksmith conversation through an agent (a streaming
// Generate node and a rolling Summarize node, contexts small enough to trim), read from the diagnostics' own
// counters: zero cache misses on normal turns, and every miss on a trim or summary turn explained by that cause.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/agent/session.js';
import type { Agent } from '../../src/agent/agent.js';
import type { TurnDiagnostics } from '../../src/diag/turn-diagnostics.js';
import { loadModel } from '../../src/engine/load-model.js';
import { BLACKSMITH_PLAYER_LINES, BLACKSMITH_SUMMARY_PROMPT, BLACKSMITH_SYSTEM_PROMPT } from '../../src/bench/blacksmith-v1.js';
import { REAL_TEST_THREADS, realModelPath, type RealModelName } from './real-model-kit.js';

const TURNS = 40;

interface ReplyFacts {
  turn: number;
  stopReason: string;
  text: string;
  miss: boolean;
  causes: string[];
  trimmed: boolean;
  summaryChanged: boolean;
}

const CASES: { name: RealModelName; endOfTurn: string; maxTokens: number }[] = [
  { name: 'smollm2', endOfTurn: '<|im_end|>', maxTokens: 40 },
  { name: 'gemma3-270m', endOfTurn: '<end_of_turn>', maxTokens: 24 },
];

describe.each(CASES)('40 turns on $name', ({ name, endOfTurn, maxTokens }) => {
  let session: Session;
  let agent: Agent;
  const replies: ReplyFacts[] = [];
  const summaryNodeMisses: string[][] = [];
  let summariesWritten = 0;

  beforeAll(async () => {
    const path = await realModelPath(name);
    session = new Session({ loadModel }).create({ gameName: `replay on ${name}` });
    agent = await session.createAgent({
      graph: {
        start: 'reply',
        nodes: [
          {
            name: 'reply',
            type: 'Generate',
            params: { systemPrompt: BLACKSMITH_SYSTEM_PROMPT, contextSize: 640, maxTokens, temperature: 0, stream: true },
            exits: { default: 'summarize' },
          },
          {
            name: 'summarize',
            type: 'Summarize',
            params: { systemPrompt: BLACKSMITH_SUMMARY_PROMPT, triggerTokens: 320, keepRecentTurns: 3, maxTokens: 48, contextSize: 1024 },
            exits: { default: null },
          },
        ],
      },
      defaultModel: path,
      enableDiagnostics: true,
      engine: { threads: REAL_TEST_THREADS },
    });
    let previousSummary: string | null = null;
    for (let turn = 0; turn < TURNS; turn++) {
      const line = BLACKSMITH_PLAYER_LINES[turn % BLACKSMITH_PLAYER_LINES.length]!;
      const events = agent.sendMessage(line);
      for await (const _event of events) {
        // drain: the figures come from the diagnostics
      }
      const complete = await events;
      expect(complete.status).toBe('Success');
      const diagnostics = complete.diagnostics as TurnDiagnostics;
      const reply = diagnostics.nodes.find((node) => node.name === 'reply')!;
      const summaryKey = reply.input?.summaryUsed ? `${reply.input.summaryUsed.writtenInTurn}` : null;
      replies.push({
        turn,
        stopReason: reply.output!.stopReason,
        text: reply.output!.text,
        miss: reply.cache!.miss,
        causes: reply.cache!.causes,
        trimmed: reply.input!.turnsTrimmed > 0,
        summaryChanged: summaryKey !== previousSummary,
      });
      previousSummary = summaryKey;
      const summarize = diagnostics.nodes.find((node) => node.name === 'summarize');
      if (summarize?.cache) {
        summariesWritten++;
        if (summarize.cache.miss) summaryNodeMisses.push(summarize.cache.causes);
      }
    }
  }, 600_000);

  afterAll(async () => {
    await session?.close();
  });

  it('trims and summarizes on the way (the conversation exercises both)', () => {
    expect(replies.filter((reply) => reply.trimmed).length).toBeGreaterThan(0);
    expect(summariesWritten).toBeGreaterThan(0);
    expect(replies.filter((reply) => reply.summaryChanged && reply.turn > 0).length).toBeGreaterThan(0);
  });

  it('has zero cache misses on normal turns', () => {
    const normal = replies.filter((reply) => reply.turn > 0 && !reply.trimmed && !reply.summaryChanged);
    expect(normal.length).toBeGreaterThan(TURNS / 2);
    expect(normal.filter((reply) => reply.miss).map((reply) => `turn ${reply.turn}: ${reply.causes.join(',')}`)).toEqual([]);
  });

  it('explains every miss of a trim or summary turn by its cause', () => {
    for (const reply of replies.filter((item) => item.miss)) {
      if (reply.turn === 0) {
        expect(reply.causes).toContain('firstTurn');
        continue;
      }
      const expected = reply.trimmed ? 'trim' : 'newSummary';
      expect(reply.causes, `turn ${reply.turn}`).toContain(expected);
    }
    // The Summarize node reads a new transcript each time: its misses are explained too, never 'unknown'.
    for (const causes of summaryNodeMisses) expect(causes.filter((cause) => cause === 'unknown' || cause === 'previousTurnNotReplayed')).toEqual([]);
  });

  it("never lets the end-of-turn token's text leak into a reply", () => {
    for (const reply of replies) {
      expect(reply.text).not.toContain(endOfTurn);
      expect(['eog', 'maxTokens']).toContain(reply.stopReason);
    }
  });
});
