import { describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import { ModelRegistry } from '../../../src/host/model-registry.js';
import { Session } from '../../../src/agent/session.js';
import type { NodeDiagnostics } from '../../../src/diag/turn-diagnostics.js';
import { createHarness, echoGraph, waitFor } from '../../kits/session-kit.js';

async function codeOf(action: () => unknown): Promise<number> {
  try {
    await action();
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    return (error as LlamaDialogError).code;
  }
  throw new Error('expected an error');
}

const pauseGraph = {
  start: 'pause',
  nodes: [{ name: 'pause', type: 'Pause', params: {}, exits: { default: null } }],
};

describe('every runtime error code comes from a real call', () => {
  it('produces 2002 2003 3001 3002 3003 3004 3005 3006 3007 3008 3012 4003 4004 4005', async () => {
    const codes = new Map<number, string>();
    const record = async (name: string, action: () => unknown): Promise<void> => {
      codes.set(await codeOf(action), name);
    };

    const bare = new Session({ registry: new ModelRegistry({ loader: async () => Promise.reject(new Error('no engine')) }) });
    await record('SessionNotReady', () => bare.createAgent({ graph: pauseGraph }));
    bare.create({ gameName: 'g' });
    await record('SessionAlreadyExists', () => bare.create({ gameName: 'g' }));
    await record('ModelLoadFailed', () =>
      bare.createAgent({ graph: { start: 'g', nodes: [{ name: 'g', type: 'Generate', params: { model: import.meta.filename } }] } }),
    );

    const { session, models } = createHarness();
    await record('InvalidAgentId', () => session.getAgent('agent-404'));
    await record('GraphCompilationFailed', () => session.createAgent({ graph: { start: 'x', nodes: [{ name: 'x', type: 'Nope' }] } }));
    await record('InvalidExitTarget', () =>
      session.createAgent({ graph: { start: 'x', nodes: [{ name: 'x', type: 'Pause', exits: { default: 'ghost' } }] } }),
    );

    const agent = await session.createAgent({ graph: pauseGraph });
    await record('AgentNotPaused', () => agent.resume());
    await record('UnknownNode', () => agent.changeParam('ghost', 'pauseTimeoutMs', 1));
    await record('InvalidParamValue', () => agent.changeParam('pause', 'pauseTimeoutMs', -1));
    const turn = agent.sendMessage('wait');
    await waitFor(turn, 'paused');
    await record('AgentBusy', () => agent.sendMessage('again'));
    await agent.cancel();

    const echo = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    await record('ParamNotMutable', () => echo.changeParam('echo', 'model', 'm2'));
    await echo.destroy();
    await record('AgentAlreadyDestroyed', () => echo.sendMessage('hello'));

    const loop = await session.createAgent({
      graph: { start: 'a', nodes: [{ name: 'a', type: 'Instruction', params: { name: 'n', text: 't' }, exits: { default: 'a' } }] },
    });
    const looped = await loop.sendMessage('go');
    codes.set(looped.error!.code, 'MaxStepsExceeded');

    const small = await session.createAgent({
      graph: { start: 'g', nodes: [{ name: 'g', type: 'Generate', params: { contextSize: 64, maxTokens: 8 } }] },
      defaultModel: 'm1',
    });
    models.get('m1')!.reply = () => 'x';
    const overflow = await small.sendMessage('a line far too long for a context of sixty-four tokens, because every character is a token here');
    expect(overflow.status).toBe('Error');
    codes.set(overflow.error!.code, 'ContextOverflow');
    expect(overflow.error!.message).toMatch(/need \d+ tokens.*context of 64 tokens/);
    expect((await small.sendMessage('short')).status).toBe('Success');

    expect([...codes.keys()].sort()).toEqual([2002, 2003, 3001, 3002, 3003, 3004, 3005, 3006, 3007, 3008, 3012, 4003, 4004, 4005]);
  });
});

describe('turn diagnostics', () => {
  it('are absent unless enabled, and list every node with name, type, exit, time and trim causes', async () => {
    const { session, models } = createHarness();
    const plain = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    expect((await plain.sendMessage('hi')).diagnostics).toBeUndefined();

    const agent = await session.createAgent({
      graph: {
        start: 'guard',
        nodes: [
          { name: 'guard', type: 'Guardrail', params: { patterns: ['^never$'] }, exits: { notTriggered: 'answer' } },
          { name: 'answer', type: 'Generate', params: { systemPrompt: 'S', contextSize: 200, maxTokens: 40 } },
        ],
      },
      defaultModel: 'm1',
      enableDiagnostics: true,
    });
    models.get('m1')!.reply = () => 'a reply of some length';
    const turns: NodeDiagnostics[][] = [];
    for (let i = 0; i < 6; i++) {
      const done = await agent.sendMessage(`line number ${i}`);
      expect(done.diagnostics?.status).toBe('Success');
      turns.push(done.diagnostics!.nodes);
    }
    const first = turns[0]!;
    expect(first.map((n) => [n.name, n.type, n.exit])).toEqual([
      ['guard', 'Guardrail', 'notTriggered'],
      ['answer', 'Generate', 'default'],
    ]);
    expect(first.every((n) => n.ms >= 0)).toBe(true);
    const answers = turns.map((nodes) => nodes[1]!);
    const trimmed = answers.filter((n) => (n.input?.turnsTrimmed ?? 0) > 0);
    expect(trimmed.length).toBeGreaterThan(0);
    for (const n of trimmed) {
      expect(n.cache?.causes).toContain('trim');
      expect(n.input!.promptTokens).toBeLessThanOrEqual(Math.floor(n.input!.budget * 0.75));
    }
    for (const n of answers.slice(1).filter((a) => (a.input?.turnsTrimmed ?? 0) === 0)) {
      expect(n.cache?.miss).toBe(false);
    }
    const json = JSON.parse(JSON.stringify(turns));
    expect(json[1][1].input.prompt[0]).toMatchObject({ role: 'system', content: 'S' });
  });
});
