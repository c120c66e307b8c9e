import { performance } from 'node:perf_hooks';
import type { Agent } from '../../agent/agent.js';
import type { TurnCompleteEvent, TurnEvent } from '../../agent/turn-events.js';
import { LlamaDialogError } from '../../errors.js';

/** Everything one quality-bench turn produced. */
export interface QualityTurn {
  events: TurnEvent[];
  complete: TurnCompleteEvent;
  /** The turn's final answer text ('' when no node replied). */
  answer: string;
  /** Wall time of the whole turn, from sendMessage to turnComplete. */
  ms: number;
}

/**
 * Sends one line and collects the turn. A turn that does not end in Success is an error of the benchmark, not a
 * figure: the report would otherwise count a crash as a wrong answer.
 * @throws LlamaDialogError InferenceFailed naming the set and the line when the turn fails.
 */
export async function runQualityTurn(agent: Agent, line: string, where: string): Promise<QualityTurn> {
  const started = performance.now();
  const turn = agent.sendMessage(line);
  const events: TurnEvent[] = [];
  for await (const event of turn) events.push(event);
  const complete = await turn;
  const ms = performance.now() - started;
  if (complete.status !== 'Success') {
    throw new LlamaDialogError('InferenceFailed', `${where}: the turn for "${line}" ended ${complete.status}`, { cause: complete.error });
  }
  const final = events.find((event) => event.type === 'answerText' && event.isFinal);
  return { events, complete, answer: final?.type === 'answerText' ? final.text : '', ms };
}
