import { describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import type { AnswerTextEvent, PausedEvent } from '../../../src/agent/turn-events.js';
import { deferred } from '../../kits/deferred.js';
import { collect, createHarness, echoGraph, waitFor } from '../../kits/session-kit.js';

function expectError(fn: () => unknown, name: string, code: number): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    expect((error as LlamaDialogError).errorName).toBe(name);
    expect((error as LlamaDialogError).code).toBe(code);
    return;
  }
  throw new Error(`expected ${name}`);
}

const pauseGraph = (timeoutMs = 0, timeoutExit: string | null = null) => ({
  start: 'pause',
  nodes: [
    { name: 'pause', type: 'Pause', params: { pauseTimeoutMs: timeoutMs }, exits: { default: 'reply', timeout: timeoutExit } },
    { name: 'reply', type: 'CannedResponse', params: { strings: ['resumed'], strategy: 'first' } },
    { name: 'late', type: 'CannedResponse', params: { strings: ['too late'], strategy: 'first' } },
  ],
});

describe('agent turn state machine', () => {
  it('runs Idle → Running → Idle and streams exactly one final answer', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    models.get('m1')!.reply = () => 'hey';
    expect(agent.state).toBe('Idle');
    const turn = agent.sendMessage('hello');
    expect(agent.state).toBe('Running');
    const events = await collect(turn);
    const answers = events.filter((e): e is AnswerTextEvent => e.type === 'answerText');
    expect(answers.filter((a) => a.isDelta).map((a) => a.text).join('')).toBe('hey');
    expect(answers.filter((a) => a.isFinal)).toEqual([{ type: 'answerText', node: 'echo', text: 'hey', isDelta: false, isFinal: true }]);
    expect(events.at(-1)).toMatchObject({ type: 'turnComplete', status: 'Success', tokensGenerated: 3 });
    expect(events.filter((e) => e.type === 'turnComplete')).toHaveLength(1);
    expect(agent.state).toBe('Idle');
  });

  it('refuses a second sendMessage while Running with AgentBusy and leaves the running turn alone', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    const gate = deferred();
    const model = models.get('m1')!;
    model.reply = () => 'first';
    model.beforeToken = () => gate.promise;
    const turn = agent.sendMessage('one');
    expectError(() => agent.sendMessage('two'), 'AgentBusy', 3004);
    expectError(() => agent.changeParam('echo', 'prefix', 'x'), 'AgentBusy', 3004);
    expectError(() => agent.resume(), 'AgentNotPaused', 3012);
    gate.resolve();
    const done = await turn;
    expect(done.status).toBe('Success');
    expect(model.calls.map((c) => c.prompt)).toEqual(['one']);
  });

  it('pauses: AgentBusy while Paused, changeParam allowed, resume continues the turn', async () => {
    const { session } = createHarness();
    const agent = await session.createAgent({ graph: pauseGraph() });
    const turn = agent.sendMessage('wait');
    const paused = (await waitFor(turn, 'paused')) as PausedEvent;
    expect(paused).toMatchObject({ node: 'pause', reason: 'pauseNode', timeoutMs: 0 });
    expect(agent.state).toBe('Paused');
    expectError(() => agent.sendMessage('again'), 'AgentBusy', 3004);
    agent.changeParam('reply', 'strings', ['changed while paused']);
    agent.resume({ ok: true });
    const events = await collect(turn);
    expect(events.find((e) => e.type === 'answerText' && e.isFinal)).toMatchObject({ text: 'changed while paused' });
    expect((await turn).status).toBe('Success');
    expect(agent.state).toBe('Idle');
    expectError(() => agent.resume(), 'AgentNotPaused', 3012);
  });

  it('takes the timeout exit when a pause times out', async () => {
    const { session } = createHarness();
    const agent = await session.createAgent({ graph: pauseGraph(5, 'late') });
    const done = await agent.sendMessage('wait');
    expect(done.status).toBe('Success');
    expect(agent.currentTurn).toBeUndefined();
    const again = await collect(agent.sendMessage('again'));
    expect(again.find((e) => e.type === 'answerText' && e.isFinal)).toMatchObject({ text: 'too late' });
  });

  it('ends the turn PauseTimedOut when the pause has no timeout exit', async () => {
    const { session } = createHarness();
    const agent = await session.createAgent({ graph: pauseGraph(5, null) });
    const done = await agent.sendMessage('wait');
    expect(done.status).toBe('PauseTimedOut');
    expect(done.error).toBeUndefined();
    expect(agent.state).toBe('Idle');
  });

  it('stops a routing loop at 64 steps with MaxStepsExceeded and stays usable', async () => {
    const { session } = createHarness();
    const agent = await session.createAgent({
      graph: {
        start: 'a',
        nodes: [
          { name: 'a', type: 'Instruction', params: { name: 'a', text: 'a' }, exits: { default: 'b' } },
          { name: 'b', type: 'Guardrail', params: { patterns: ['loop'] }, exits: { triggered: 'a', notTriggered: null } },
        ],
      },
      enableDiagnostics: true,
    });
    const done = await agent.sendMessage('loop forever');
    expect(done.status).toBe('Error');
    expect(done.error).toMatchObject({ errorName: 'MaxStepsExceeded', code: 4003 });
    expect(done.diagnostics?.nodes).toHaveLength(64);
    expect(done.diagnostics?.steps).toBe(64);
    const next = await agent.sendMessage('stop');
    expect(next.status).toBe('Success');
  });

  it('cancels mid-generation with Cancelled and the agent stays usable', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    const model = models.get('m1')!;
    model.reply = () => 'a long reply';
    const reachedThird = deferred();
    const release = deferred();
    model.beforeToken = async ({ index }) => {
      if (index === 3) {
        reachedThird.resolve();
        await release.promise;
      }
    };
    const turn = agent.sendMessage('talk');
    await reachedThird.promise;
    const cancelled = agent.cancel();
    release.resolve();
    const done = await turn;
    await cancelled;
    expect(done.status).toBe('Cancelled');
    expect(done.tokensGenerated).toBe(0);
    const events = await collect(turn);
    expect(events.filter((e) => e.type === 'answerText' && e.isFinal)).toEqual([
      { type: 'answerText', node: 'echo', text: 'a l', isDelta: false, isFinal: true },
    ]);
    model.beforeToken = undefined;
    model.reply = () => 'fine';
    const next = await agent.sendMessage('again');
    expect(next.status).toBe('Success');
  });

  it('cancels a paused turn', async () => {
    const { session } = createHarness();
    const agent = await session.createAgent({ graph: pauseGraph() });
    const turn = agent.sendMessage('wait');
    await waitFor(turn, 'paused');
    await agent.cancel();
    expect((await turn).status).toBe('Cancelled');
    expect(agent.state).toBe('Idle');
  });

  it('checks changeParam: unknown node, structural param, bad value, unknown param', async () => {
    const { session } = createHarness();
    const agent = await session.createAgent({ graph: echoGraph({ prefix: 'p:' }), defaultModel: 'm1' });
    expectError(() => agent.changeParam('nope', 'prefix', 'x'), 'UnknownNode', 3005);
    expectError(() => agent.changeParam('echo', 'model', 'm2'), 'ParamNotMutable', 3006);
    expectError(() => agent.changeParam('echo', 'maxTokens', 3), 'ParamNotMutable', 3006);
    expectError(() => agent.changeParam('echo', 'prefix', 42), 'InvalidParamValue', 3007);
    expectError(() => agent.changeParam('echo', 'colour', 'red'), 'InvalidParamValue', 3007);
    expect(agent.getParams('echo').prefix).toBe('p:');
    agent.changeParam('echo', 'prefix', 'q:');
    expect(agent.getParams('echo').prefix).toBe('q:');
  });

  it('destroy cancels the turn, frees caches and refuses later calls', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    const gate = deferred();
    models.get('m1')!.beforeToken = () => gate.promise;
    const turn = agent.sendMessage('hi');
    const destroyed = agent.destroy();
    gate.resolve();
    await destroyed;
    expect((await turn).status).toBe('Cancelled');
    expect(agent.state).toBe('Destroyed');
    expect(models.get('m1')!.contexts.every((c) => c.disposed)).toBe(true);
    expectError(() => agent.sendMessage('x'), 'AgentAlreadyDestroyed', 3002);
    expectError(() => session.getAgent(agent.id), 'InvalidAgentId', 3001);
  });
});
