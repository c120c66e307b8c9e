import { describe, expect, it } from 'vitest';
import { Turn } from '../../../src/agent/turn.js';
import type { TurnEvent } from '../../../src/agent/turn-events.js';

describe('Turn', () => {
  it('replays buffered events to late iterators and ends after turnComplete', async () => {
    const turn = new Turn(1, 'hello');
    turn.push({ type: 'answerText', node: 'g', text: 'a', isDelta: true, isFinal: false });
    const early: TurnEvent[] = [];
    const reading = (async () => {
      for await (const event of turn) early.push(event);
    })();
    turn.push({ type: 'answerText', node: 'g', text: 'ab', isDelta: false, isFinal: true });
    turn.push({ type: 'turnComplete', status: 'Success', tokensGenerated: 2 });
    turn.push({ type: 'answerText', node: 'g', text: 'late', isDelta: false, isFinal: true });
    await reading;
    const late: TurnEvent[] = [];
    for await (const event of turn) late.push(event);
    expect(early.map((e) => e.type)).toEqual(['answerText', 'answerText', 'turnComplete']);
    expect(late).toEqual(early);
    await expect(turn).resolves.toEqual({ type: 'turnComplete', status: 'Success', tokensGenerated: 2 });
    expect(turn.done).toBe(true);
  });
});
