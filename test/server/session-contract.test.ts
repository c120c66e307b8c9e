// One suite, run twice: against the in-process Session/Agent and against `llama-dialog/client` talking to a real
// server over 127.0.0.1. The same program must behave the same both ways (events, states, typed errors).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/agent/session.js';
import type { AgentOptions } from '../../src/agent/agent-options.js';
import type { TurnCompleteEvent, TurnEvent } from '../../src/agent/turn-events.js';
import type { DialogSnapshot, InteractionInput } from '../../src/dialog/index.js';
import { LlamaDialogError } from '../../src/errors.js';
import { connect } from '../../src/server/client/index.js';
import { createRuntimeHarness, type RuntimeHarness } from '../kits/runtime-session-kit.js';
import { startTestServer, type TestServer } from './server-kit.js';
import { pauseThenGenerateGraph, shortGenerateGraph } from './wire-client.js';

/** What the suite uses of an agent: the library's Agent and the client's RemoteAgent both fit. */
interface AgentUnderTest {
  readonly id: string;
  readonly state: string;
  sendMessage(text: string, options?: { slots?: Record<string, string> }): AsyncIterable<TurnEvent> & PromiseLike<TurnCompleteEvent>;
  resume(payload?: unknown): void | Promise<void>;
  cancel(): Promise<void>;
  changeParam(node: string, param: string, value: unknown): void | Promise<void>;
  releaseCache(): Promise<void>;
  exportDialog(): DialogSnapshot | Promise<DialogSnapshot>;
  importDialog(snapshot: unknown): void | Promise<void>;
  seedHistory(turns: readonly InteractionInput[]): void | Promise<void>;
  destroy(): Promise<void>;
}

interface SessionUnderTest {
  readonly active: boolean;
  readonly gameName: string;
  createAgent(options: AgentOptions): Promise<AgentUnderTest>;
  getAgent(id: string): AgentUnderTest;
  listAgents(): AgentUnderTest[];
  close(): Promise<void>;
}

const TOOL_CALL = '<tool_call>{"name": "sell_item", "arguments": {"item": "old helmet"}}</tool_call>';

const ledgerGraph = {
  start: 'ledger',
  nodes: [
    {
      name: 'ledger',
      type: 'ToolCall',
      params: {
        systemPrompt: 'LEDGER',
        tools: [{ name: 'sell_item', description: 'Buy an item', parameters: { type: 'object', properties: { item: { type: 'string' } } } }],
        disposition: 'AwaitResult',
        contextSize: 512,
        maxTokens: 40,
        temperature: 0,
      },
      exits: { toolCalled: 'answer', noToolCalled: 'answer' },
    },
    { name: 'answer', type: 'Generate', params: { contextSize: 512, maxTokens: 4, temperature: 0 } },
  ],
};

async function collect(turn: AsyncIterable<TurnEvent>): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

async function untilPaused(turn: AsyncIterable<TurnEvent>): Promise<Extract<TurnEvent, { type: 'paused' }>> {
  for await (const event of turn) if (event.type === 'paused') return event;
  throw new Error('the turn ended without pausing');
}

/** The typed error an action throws or rejects with (sync throws and rejected promises alike). */
async function refusal(action: () => unknown): Promise<LlamaDialogError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof LlamaDialogError) return error;
    throw error;
  }
  throw new Error('expected a LlamaDialogError');
}

let harness: RuntimeHarness;
let kit: TestServer;

beforeAll(async () => {
  harness = await createRuntimeHarness();
  await harness.session.close();
  kit = await startTestServer({}, harness);
});

afterAll(async () => {
  await kit.server.close();
});

const variants: [string, () => Promise<SessionUnderTest>][] = [
  ['in-process Session', async () => new Session({ registry: harness.registry }).create({ gameName: 'contract' })],
  ['remote session over TCP', async () => (await connect('127.0.0.1', kit.port)).create({ gameName: 'contract' })],
];

describe.each(variants)('%s', (_label, openSession) => {
  const agentOptions = (graph: unknown): AgentOptions => ({ graph, defaultModel: 'tiny', engine: { threads: 1 } });

  it('streams a turn: deltas add up to one final answer, then one turnComplete; the agent is Idle again', async () => {
    const session = await openSession();
    expect(session.gameName).toBe('contract');
    const agent = await session.createAgent(agentOptions(shortGenerateGraph()));
    expect(agent.state).toBe('Idle');
    const turn = agent.sendMessage('Good morning!');
    expect(agent.state).toBe('Running');
    const events = await collect(turn);
    const deltas = events.filter((e) => e.type === 'answerText' && e.isDelta);
    const finals = events.filter((e) => e.type === 'answerText' && e.isFinal);
    expect(deltas.length).toBeGreaterThan(0);
    expect(finals).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'turnComplete', status: 'Success' });
    expect(events.filter((e) => e.type === 'turnComplete')).toHaveLength(1);
    const text = deltas.map((e) => (e.type === 'answerText' ? e.text : '')).join('');
    expect(finals[0]).toMatchObject({ text, node: 'answer' });
    expect((await turn).tokensGenerated).toBeGreaterThan(0);
    expect(agent.state).toBe('Idle');
    const snapshot = await agent.exportDialog();
    expect(snapshot.interactions.map((i) => i.replies[0]?.text)).toEqual([text]);
    expect(session.listAgents().map((a) => a.id)).toEqual([agent.id]);
    await session.close();
  });

  it('pauses on a tool call, refuses a second line (AgentBusy), resumes with the result, records it', async () => {
    const session = await openSession();
    let forced = 0;
    harness.forceOutput = (prompt) => (prompt.includes('LEDGER') && forced++ === 0 ? TOOL_CALL : undefined);
    const agent = await session.createAgent(agentOptions(ledgerGraph));
    const turn = agent.sendMessage('Want my old helmet?');
    const paused = await untilPaused(turn);
    expect(paused.toolCall).toMatchObject({ name: 'sell_item', arguments: { item: 'old helmet' }, disposition: 'AwaitResult' });
    expect(agent.state).toBe('Paused');
    expect((await refusal(() => agent.sendMessage('Hello?'))).code).toBe(3004);
    expect(agent.state).toBe('Paused');
    await agent.changeParam('answer', 'temperature', 0.5);
    await agent.resume({ paid: 12 });
    const complete = await turn;
    expect(complete.status).toBe('Success');
    expect(agent.state).toBe('Idle');
    const snapshot = await agent.exportDialog();
    expect(snapshot.interactions[0]!.toolCalls[0]).toMatchObject({ name: 'sell_item', result: '{"paid":12}' });
    expect((await refusal(() => agent.resume())).code).toBe(3012);
    await session.close();
  });

  it('cancel ends a paused turn with Cancelled; changeParam refusals keep their codes', async () => {
    const session = await openSession();
    const agent = await session.createAgent(agentOptions(pauseThenGenerateGraph()));
    const turn = agent.sendMessage('Wait here');
    await untilPaused(turn);
    await agent.cancel();
    expect((await turn).status).toBe('Cancelled');
    expect(agent.state).toBe('Idle');
    expect((await refusal(() => agent.changeParam('nowhere', 'temperature', 1))).errorName).toBe('UnknownNode');
    expect((await refusal(() => agent.changeParam('answer', 'model', 'x'))).errorName).toBe('ParamNotMutable');
    expect((await refusal(() => agent.changeParam('answer', 'temperature', 'hot'))).errorName).toBe('InvalidParamValue');
    await session.close();
  });

  it('exports, imports into another agent, seeds history; a bad snapshot changes nothing', async () => {
    const session = await openSession();
    const first = await session.createAgent(agentOptions(shortGenerateGraph()));
    await first.seedHistory([{ userLine: 'Who are you?', replies: [{ node: 'answer', text: 'Brom, the smith.' }] }]);
    expect((await first.sendMessage('Any swords?')).status).toBe('Success');
    const snapshot = await first.exportDialog();
    expect(snapshot.interactions.map((i) => i.userLine)).toEqual(['Who are you?', 'Any swords?']);
    const second = await session.createAgent(agentOptions(shortGenerateGraph()));
    await second.importDialog(snapshot);
    expect(await second.exportDialog()).toEqual(snapshot);
    expect((await refusal(() => second.importDialog({ kind: 'not a snapshot' }))).errorName).toBe('InvalidSnapshot');
    expect(await second.exportDialog()).toEqual(snapshot);
    await second.releaseCache();
    expect((await second.sendMessage('And shields?')).status).toBe('Success');
    await session.close();
  });

  it('a failing turn ends with status Error and the typed error; diagnostics come with it when enabled', async () => {
    const session = await openSession();
    const looping = await session.createAgent({
      ...agentOptions({
        start: 'a',
        nodes: [
          { name: 'a', type: 'Guardrail', params: { patterns: ['.'] }, exits: { triggered: 'b' } },
          { name: 'b', type: 'Instruction', params: { name: 'n', text: 't' }, exits: { default: 'a' } },
        ],
      }),
      enableDiagnostics: true,
    });
    const done = await looping.sendMessage('loop');
    expect(done.status).toBe('Error');
    expect(done.error).toBeInstanceOf(LlamaDialogError);
    expect(done.error).toMatchObject({ errorName: 'MaxStepsExceeded', code: 4003 });
    expect(done.diagnostics?.nodes).toHaveLength(64);
    expect(done.diagnostics?.status).toBe('Error');
    expect(looping.state).toBe('Idle');
    expect((await refusal(() => session.createAgent(agentOptions({ start: 'x', nodes: [] })))).errorName).toBe('GraphCompilationFailed');
    await session.close();
  });

  it('destroy and close: destroyed agents are gone, a running turn ends Cancelled, the closed session refuses', async () => {
    const session = await openSession();
    const gone = await session.createAgent(agentOptions(shortGenerateGraph()));
    await gone.destroy();
    expect((await refusal(() => gone.sendMessage('Hello?'))).errorName).toBe('AgentAlreadyDestroyed');
    expect((await refusal(() => session.getAgent(gone.id))).errorName).toBe('InvalidAgentId');
    const waiting = await session.createAgent(agentOptions(pauseThenGenerateGraph()));
    const turn = waiting.sendMessage('Wait');
    await untilPaused(turn);
    await session.close();
    expect((await turn).status).toBe('Cancelled');
    expect(session.active).toBe(false);
    expect((await refusal(() => session.listAgents())).errorName).toBe('SessionNotReady');
  });
});
