// Sessions and agents on the real engine (tiny model) under hostile input: createSession and createAgent options with
// random graphs, and random sequences of agent calls (sendMessage, changeParam, setVariable, resume, submitToolResult,
// editTurn, truncateHistory, seedHistory, importDialog with bit-flipped and mutated snapshots) on an idle agent and
// on one paused mid-turn. A refused call leaves history, params, variables and state as they were; a turn that ends
// in Error carries a typed error and keeps every earlier turn; the agent answers normally afterwards.
// argv: <tiny model path>
import fc from 'fast-check';
import { Session, createSession } from '../../../src/agent/session.js';
import type { Agent } from '../../../src/agent/agent.js';
import { ErrorCode, LlamaDialogError } from '../../../src/errors.js';
import { FuzzRecorder, deepObject, hostileNumber, hostileString, hostileValue, runFuzzChild } from '../fuzz-kit.js';

const [modelPath] = process.argv.slice(2) as [string];
const ENGINE = { threads: 1, batchSize: 64 };

const answerGraph = {
  start: 'answer',
  nodes: [
    { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom, the blacksmith.', contextSize: 256, maxTokens: 4, temperature: 0 }, exits: { default: null } },
  ],
};
const pausingGraph = {
  start: 'hold',
  nodes: [
    { name: 'hold', type: 'Pause', params: {}, exits: { default: 'answer' } },
    { name: 'answer', type: 'Generate', params: { contextSize: 256, maxTokens: 3, temperature: 0 }, exits: { default: null } },
  ],
};

const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof(arbitrary, hostileValue);
const nodeNameArb = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('answer', 'hold') }, { weight: 1, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue });
const paramArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('systemPrompt', 'temperature', 'topP', 'topK', 'repeatPenalty', 'maxTokens', 'contextSize', 'model', 'stop', 'stream', 'historyRole', 'trimTargetRatio', 'pauseTimeoutMs', 'template') },
  { weight: 1, arbitrary: hostileString },
  { weight: 1, arbitrary: hostileValue },
);
const paramValueArb = fc.oneof(hostileNumber, hostileString, fc.array(hostileString, { maxLength: 3 }), hostileValue, fc.constantFrom(0, 1, 0.5, 2, 'None', 'Assistant', '{{userLine}}', '{{#x}}', '{{'));
const textArb = fc.oneof({ weight: 5, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue }, { weight: 1, arbitrary: fc.constant('w'.repeat(5000)) });

/** Sets `value` somewhere inside a copy of a JSON tree (the path walks existing keys). */
function mutateAt(root: unknown, steps: readonly number[], value: unknown): unknown {
  const copy = structuredClone(root) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  for (const [i, step] of steps.entries()) {
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    const key = keys[step % keys.length]!;
    const child = node[key];
    if (i === steps.length - 1 || child === null || typeof child !== 'object') {
      node[key] = value;
      break;
    }
    node = child as Record<string, unknown>;
  }
  return copy;
}

const agentCall = fc.oneof(
  fc.record({ op: fc.constant('sendMessage' as const), text: textArb, options: fc.oneof(fc.constant(undefined), maybe(fc.record({ slots: maybe(fc.dictionary(hostileString, maybe(hostileString), { maxKeys: 2 })) }, { requiredKeys: [] }))) }),
  fc.record({ op: fc.constant('changeParam' as const), node: nodeNameArb, param: paramArb, value: paramValueArb }),
  fc.record({ op: fc.constant('setVariable' as const), name: fc.oneof(fc.constantFrom('gold', 'mood', 'missing'), hostileString, hostileValue), value: maybe(fc.oneof(hostileNumber, hostileString, fc.boolean())) }),
  fc.record({ op: fc.constant('resume' as const), payload: fc.oneof(fc.constant(undefined), hostileValue) }),
  fc.record({ op: fc.constant('submitToolResult' as const), id: fc.oneof(fc.constantFrom('call_1', 'nope'), hostileValue), result: textArb }),
  fc.record({ op: fc.constant('editTurn' as const), turn: fc.oneof(fc.integer({ min: -1, max: 3 }), hostileNumber, hostileValue), edit: maybe(fc.record({ userLine: textArb, replies: maybe(fc.dictionary(fc.constantFrom('0', '1', '-1', 'x'), textArb, { maxKeys: 2 })) }, { requiredKeys: [] })) }),
  fc.record({ op: fc.constant('truncateHistory' as const), from: fc.oneof(fc.integer({ min: -1, max: 4 }), hostileNumber, hostileValue) }),
  fc.record({ op: fc.constant('seedHistory' as const), turns: fc.oneof(hostileValue, deepObject, fc.array(fc.record({ userLine: textArb, replies: maybe(fc.array(fc.record({ node: hostileString, text: textArb, tokens: maybe(fc.array(hostileNumber, { maxLength: 3 })) }), { maxLength: 2 })) }, { requiredKeys: [] }), { maxLength: 3 })) }),
  fc.record({ op: fc.constant('importDialog' as const), kind: fc.constantFrom('flip', 'mutate', 'junk', 'tokens'), ids: fc.array(fc.oneof(fc.integer({ min: 0, max: 200_000 }), fc.constant(2 ** 31 - 1)), { maxLength: 6 }), steps: fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), value: fc.oneof(hostileValue, fc.integer({ min: -5, max: 200_000 }), fc.constant(2 ** 31)), flips: fc.array(fc.record({ at: fc.nat(), bit: fc.integer({ min: 0, max: 6 }) }), { minLength: 1, maxLength: 3 }) }),
  fc.record({ op: fc.constant('exportDialog' as const) }),
);
type AgentCall = typeof agentCall extends fc.Arbitrary<infer T> ? T : never;

function observeAgent(agent: Agent): unknown {
  const params = Object.fromEntries(agent.nodeNames.map((name) => [name, structuredClone(agent.getParams(name))]));
  return { history: structuredClone(agent.history), params, variables: agent.variables, state: agent.state };
}

/** The part of a turn's record that must survive a failed later turn: every earlier interaction as it was. */
function earlierTurns(agent: Agent, count: number): unknown {
  return structuredClone(agent.history.slice(0, count));
}

async function applyCall(recorder: FuzzRecorder, agent: Agent, call: AgentCall, snapshot: unknown): Promise<void> {
  const observe = () => observeAgent(agent);
  const c = call as Record<string, any>;
  switch (call.op) {
    case 'sendMessage': {
      const before = agent.history.length;
      const kept = earlierTurns(agent, before);
      let turn: ReturnType<Agent['sendMessage']> | undefined;
      const refused = await recorder.call('sendMessage', () => {
        turn = agent.sendMessage(c.text, c.options);
      }, observe);
      if (refused !== undefined || turn === undefined) return;
      if (agent.state === 'Paused' || (await Promise.race([turn.then(() => false), pausedSoon(turn)]))) {
        await recorder.call('resume (paused turn)', () => agent.resume('ok'));
      }
      const done = await turn;
      await recorder.call(`turn ending ${done.status}`, () => {
        if (done.status === 'Error') throw done.error ?? new Error('a turn ended in Error without an error');
        if (done.status !== 'Success') throw new Error(`turn ended ${done.status}`);
      });
      if (!sameJson(earlierTurns(agent, before), kept)) throw new Error('a turn changed earlier turns of the history');
      return;
    }
    case 'changeParam':
      await recorder.call('changeParam', () => agent.changeParam(c.node, c.param, c.value), observe);
      return;
    case 'setVariable':
      await recorder.call('setVariable', () => agent.setVariable(c.name, c.value), observe);
      return;
    case 'resume':
      await recorder.call('resume', () => agent.resume(c.payload), observe);
      return;
    case 'submitToolResult':
      await recorder.call('submitToolResult', () => agent.submitToolResult(c.id, c.result), observe);
      return;
    case 'editTurn':
      await recorder.call('editTurn', () => agent.editTurn(c.turn, c.edit), observe);
      return;
    case 'truncateHistory':
      await recorder.call('truncateHistory', () => agent.truncateHistory(c.from), observe);
      return;
    case 'seedHistory':
      await recorder.call('seedHistory', () => agent.seedHistory(c.turns), observe);
      return;
    case 'importDialog': {
      let input: unknown;
      if (c.kind === 'flip') {
        const bytes = Buffer.from(JSON.stringify(snapshot), 'utf8');
        for (const { at, bit } of c.flips as { at: number; bit: number }[]) bytes[at % bytes.length]! ^= 1 << bit;
        input = bytes.toString('utf8'); // importDialog takes JSON text too: the package parses it.
      } else if (c.kind === 'tokens') {
        // Reply token ids from another model (or none at all): the next turn re-tokenizes the text (issue 12 item 8).
        const copy = structuredClone(snapshot) as { interactions: { replies: { tokens: number[] }[] }[] };
        for (const interaction of copy.interactions) for (const reply of interaction.replies) reply.tokens = c.ids;
        input = copy;
      } else if (c.kind === 'mutate') {
        input = mutateAt(snapshot, c.steps, c.value);
      } else {
        input = c.value;
      }
      await recorder.call('importDialog', () => agent.importDialog(input), observe);
      return;
    }
    case 'exportDialog':
      await recorder.call('exportDialog', () => JSON.stringify(agent.exportDialog()), observe);
      return;
  }
}

/** Resolves true once the turn reports a pause (polling the event stream would consume it for others). */
function pausedSoon(turn: AsyncIterable<{ type: string }>): Promise<boolean> {
  return (async () => {
    for await (const event of turn) if (event.type === 'paused') return true;
    return false;
  })();
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

await runFuzzChild(async (recorder) => {
  await recorder.check(
    'createSession options',
    [hostileValue, fc.oneof(fc.constant(undefined), hostileValue)],
    async (options, host) => {
      await recorder.call('createSession', async () => {
        const session = createSession(options as never, host as never);
        await session.close();
      });
    },
    0.5,
  );

  const session = new Session({ models: { tiny: { path: modelPath } } }).create({ gameName: 'fuzz' });

  // Valid options with at most one field made hostile, so that both the option checks and agent creation are reached.
  const validOptions = fc.record({
    graph: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(answerGraph, pausingGraph) },
      { weight: 2, arbitrary: fc.tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 5 }), paramValueArb).map(([steps, value]) => mutateAt(answerGraph, steps, value)) },
    ),
    defaultModel: fc.constant('tiny'),
    variables: fc.dictionary(fc.constantFrom('gold', 'mood', 'name'), fc.oneof(fc.integer(), hostileString, fc.boolean()), { maxKeys: 2 }),
    kvCacheInitialization: fc.constantFrom('AllocateOnly', 'Prefill', 'DeferAllocation'),
    enableDiagnostics: fc.boolean(),
    maintainDialogueHistory: fc.boolean(),
    engine: fc.record({ batchSize: fc.integer({ min: 1, max: 512 }), threads: fc.constant(1), kvCacheType: fc.constantFrom('f16', 'q8_0', 'q4_0') }, { requiredKeys: ['threads'] }),
  });
  const hostileField = fc.tuple(
    fc.constantFrom('graph', 'defaultModel', 'variables', 'kvCacheInitialization', 'enableDiagnostics', 'maintainDialogueHistory', 'engine', 'voice', 'bogus'),
    fc.oneof(hostileValue, fc.constantFrom('', '/nowhere/model.gguf', modelPath + '.missing', { threads: 0 }, { batchSize: 2 ** 31 }, { kvCacheType: 'q4_0', threads: 1 })),
  );
  await recorder.check(
    'createAgent options',
    [fc.oneof({ weight: 1, arbitrary: hostileValue }, { weight: 6, arbitrary: fc.tuple(validOptions, fc.option(hostileField, { freq: 3 })).map(([options, field]) => (field ? { ...options, [field[0]]: field[1] } : options)) })],
    async (options) => {
      await recorder.call('createAgent', async () => {
        const agent = await session.createAgent(options as never);
        await agent.destroy();
      });
    },
    0.3,
  );

  // One idle agent and one that pauses mid-turn, each taking random call sequences.
  const idle = await session.createAgent({ graph: answerGraph, defaultModel: 'tiny', engine: ENGINE, variables: { gold: 3, mood: 'calm' } });
  const first = await idle.sendMessage('Hello there.');
  if (first.status !== 'Success') throw new Error(`first turn ended ${first.status}: ${first.error?.message}`);
  const snapshot = idle.exportDialog();

  await recorder.check(
    'idle agent call sequences',
    [fc.array(agentCall, { minLength: 1, maxLength: 5 })],
    async (calls) => {
      for (const call of calls) await applyCall(recorder, idle, call, snapshot);
      if (idle.state !== 'Idle') throw new Error(`agent left ${idle.state}`);
    },
    0.5,
  );

  const pausing = await session.createAgent({ graph: pausingGraph, defaultModel: 'tiny', engine: ENGINE, variables: { gold: 3 } });
  await recorder.check(
    'paused agent call sequences',
    [fc.array(agentCall, { minLength: 1, maxLength: 4 })],
    async (calls) => {
      const turn = pausing.sendMessage('Wait a moment.');
      if (!(await pausedSoon(turn))) throw new Error('the pausing graph did not pause');
      for (const call of calls) {
        if (pausing.state !== 'Paused') break;
        // While paused, nothing may start a second turn or touch the history; exportDialog is refused as busy.
        await applyCall(recorder, pausing, call.op === 'sendMessage' ? { ...call, text: String(typeof call.text === 'string' ? call.text : '') } : call, snapshot);
      }
      if (pausing.state === 'Paused') pausing.resume();
      const done = await turn;
      if (done.status === 'Error' && !(done.error instanceof LlamaDialogError && Object.values(ErrorCode).includes(done.error.code))) {
        throw new Error(`paused turn ended in an untyped error: ${String(done.error)}`);
      }
      if (pausing.state !== 'Idle') throw new Error(`agent left ${pausing.state}`);
    },
    0.3,
  );

  // The agents still answer (a property that stopped on a violation may have left the pausing agent paused).
  if (pausing.state === 'Paused') {
    pausing.resume();
    await pausing.currentTurn;
  }
  for (const agent of [idle, pausing]) {
    const turn = agent.sendMessage('Goodbye.');
    if (agent === pausing && (await pausedSoon(turn))) agent.resume();
    const done = await turn;
    recorder.expect('agent answers after fuzzing', done.status === 'Success', `last turn ended ${done.status}: ${done.error?.message}`);
  }
  await session.close();
});
