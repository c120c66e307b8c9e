/**
 * Tool-call validity with and without the ToolCall node's grammar, on the tiny random-weight model (whose output
 * is noise, so only the grammar can make it call a tool well). Runs the same agent setup (tools, prompt, sampling,
 * player lines; test/kits/tool-call-scenario.ts) `--turns` times constrained (toolChoice `required`) and
 * `--turns` times unconstrained, and prints, for each, the share of turns whose output is a parseable call to one
 * of the tools with schema-valid arguments. `--auto` adds a third run, constrained with toolChoice `auto` (call or
 * plain answer), where the figure to read is that no turn holds an invalid call.
 *
 *   npx tsx scripts/bench-tool-calls.ts [--turns 200] [--threads 2] [--auto]
 */
import { parseArgs } from 'node:util';
import { createToolCallAgent, createToolCallSession, runToolCallTurns, type ToolCallMode, type ToolCallTally } from '../test/kits/tool-call-scenario.js';

const { values } = parseArgs({
  options: { turns: { type: 'string', default: '200' }, threads: { type: 'string', default: '2' }, auto: { type: 'boolean', default: false } },
});
const turns = Number(values.turns);
const threads = Number(values.threads);
if (!Number.isInteger(turns) || turns < 1 || !Number.isInteger(threads) || threads < 1) {
  throw new Error('--turns and --threads must be positive integers');
}

const runs: { label: string; mode: ToolCallMode }[] = [
  { label: 'with grammar (constrained, toolChoice required)', mode: { constrained: true, toolChoice: 'required' } },
  { label: 'without grammar (constrained: false)', mode: { constrained: false, toolChoice: 'auto' } },
];
if (values.auto) runs.push({ label: 'with grammar (constrained, toolChoice auto)', mode: { constrained: true, toolChoice: 'auto' } });

const percent = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)} %`;

function report(label: string, tally: ToolCallTally, ms: number): void {
  console.log(`${label}: ${tally.turns} turns in ${(ms / 1000).toFixed(1)} s`);
  console.log(`  parseable + schema-valid calls: ${tally.validCallTurns}/${tally.turns} = ${percent(tally.validCallTurns, tally.turns)}`);
  console.log(`  invalid calls: ${tally.invalidCallTurns}, no call: ${tally.noCallTurns}`);
  for (const error of tally.sampleErrors) console.log(`  e.g. ${error}`);
  const example = tally.calls.find((call) => call.valid);
  if (example) console.log(`  e.g. ${example.name}(${example.argumentsJson})`);
}

const session = await createToolCallSession();
try {
  for (const { label, mode } of runs) {
    const agent = await createToolCallAgent(session, mode, threads);
    const started = performance.now();
    const tally = await runToolCallTurns(agent, turns);
    report(label, tally, performance.now() - started);
    await agent.destroy();
  }
} finally {
  await session.close();
}
