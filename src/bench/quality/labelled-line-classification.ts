import type { Agent } from '../../agent/agent.js';
import type { NodeEvent } from '../../agent/turn-events.js';
import type { ClassificationOutcome } from './classification-metrics.js';
import type { QualityProgress } from './quality-settings.js';
import { runQualityTurn } from './quality-turn.js';
import type { LabelledLine } from '../quality-data/intents-v1.js';

/**
 * Sends every labelled line to an agent whose classifier node reports its pick in the node event `eventName`
 * (`{ intent }`; none or null when it abstained), one turn per line, and collects what it picked.
 * @returns each line's outcome and its turn's wall time, in line order.
 */
export async function classifyLabelledLines(
  agent: Agent,
  lines: readonly LabelledLine[],
  row: string,
  eventName: string,
  progress: QualityProgress,
): Promise<{ outcomes: ClassificationOutcome[]; times: number[] }> {
  const outcomes: ClassificationOutcome[] = [];
  const times: number[] = [];
  for (const [index, labelled] of lines.entries()) {
    const turn = await runQualityTurn(agent, labelled.line, `intents (${row})`);
    const event = turn.events.find((e): e is NodeEvent => e.type === 'nodeEvent' && e.name === eventName);
    outcomes.push({ expected: labelled.intent, predicted: (event?.data as { intent?: string | null } | undefined)?.intent ?? null });
    times.push(turn.ms);
    progress(`intents: ${row} ${index + 1}/${lines.length}`);
  }
  return { outcomes, times };
}
