/**
 * Child-process entry of the crowd probe: runs one phase (its options as JSON in argv[2]) and sends the result to the
 * parent. A phase per process, so that each RSS figure starts from a process that held only the model.
 */
import { runCrowdPhase, type CrowdPhaseOptions } from './crowd-phase.js';

const options = JSON.parse(process.argv[2] ?? '{}') as CrowdPhaseOptions;
let message: unknown;
try {
  message = { result: await runCrowdPhase(options) };
} catch (error) {
  message = { error: error instanceof Error ? error.message : String(error) };
}
// Disconnecting lets the process end once the message is out (an open IPC channel keeps it alive).
process.send?.(message, () => process.disconnect());
