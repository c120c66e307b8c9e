import { describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import { Session, createSession } from '../../../src/agent/session.js';
import { ModelRegistry } from '../../../src/host/model-registry.js';
import { deferred } from '../../kits/deferred.js';
import { createHarness, echoGraph, fakeModelFiles, testCatalog } from '../../kits/session-kit.js';

async function rejection(promise: Promise<unknown>): Promise<LlamaDialogError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    return error as LlamaDialogError;
  }
  throw new Error('expected a rejection');
}

function thrown(fn: () => unknown): LlamaDialogError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    return error as LlamaDialogError;
  }
  throw new Error('expected a throw');
}

describe('session lifecycle', () => {
  it('refuses everything before create with SessionNotReady and a second create with SessionAlreadyExists', async () => {
    const session = new Session({ registry: new ModelRegistry({ loader: async () => Promise.reject(new Error('x')) }) });
    expect((await rejection(session.createAgent({ graph: echoGraph() }))).code).toBe(2002);
    expect(thrown(() => session.createStringStorage({ name: 's', strings: ['a'] })).errorName).toBe('SessionNotReady');
    expect((await rejection(session.loadModel('m'))).errorName).toBe('SessionNotReady');
    expect(thrown(() => session.getAgent('agent-1')).errorName).toBe('SessionNotReady');
    session.create({ gameName: 'forge' });
    expect(session.gameName).toBe('forge');
    expect(session.locale).toBe('en-US');
    const again = thrown(() => session.create({ gameName: 'forge' }));
    expect(again.errorName).toBe('SessionAlreadyExists');
    expect(again.code).toBe(2003);
    expect(thrown(() => createSession({ gameName: '' })).errorName).toBe('InvalidArgument');
  });

  it('close cancels running turns, destroys agents, drops storages and frees on-demand models only', async () => {
    const { session, models, registry } = createHarness(['onDemand', 'pinned'], {}, ['pinned']);
    const a = await session.createAgent({ graph: echoGraph(), defaultModel: 'onDemand' });
    const b = await session.createAgent({ graph: echoGraph(), defaultModel: 'pinned' });
    session.createStringStorage({ name: 'lore', strings: ['The forge is hot.'] });
    const gate = deferred();
    models.get('onDemand')!.beforeToken = () => gate.promise;
    const turn = a.sendMessage('hello');
    const closing = session.close();
    gate.resolve();
    await closing;
    expect((await turn).status).toBe('Cancelled');
    expect(a.state).toBe('Destroyed');
    expect(b.state).toBe('Destroyed');
    expect(models.get('onDemand')!.disposed).toBe(true);
    expect(models.get('pinned')!.disposed).toBe(false);
    expect(registry.status().map((s) => s.name)).toEqual(['pinned']);
    expect(thrown(() => session.getStringStorage('lore')).errorName).toBe('SessionNotReady');
    expect((await rejection(session.createAgent({ graph: echoGraph(), defaultModel: 'pinned' }))).errorName).toBe(
      'SessionNotReady',
    );
    await session.close();
  });

  it('shares one loaded model between agents and frees it when the last one goes', async () => {
    const { session, models, loads } = createHarness(['m1']);
    const a = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    const b = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    expect(loads).toEqual(['m1']);
    await session.destroyAgent(a.id);
    expect(models.get('m1')!.disposed).toBe(false);
    await b.destroy();
    expect(models.get('m1')!.disposed).toBe(true);
    expect(thrown(() => session.getAgent(a.id)).code).toBe(3001);
  });

  it('keeps a model loaded through session.loadModel until unloadModel', async () => {
    const { session, models } = createHarness(['m1']);
    await session.loadModel('m1');
    const agent = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    await agent.destroy();
    expect(models.get('m1')!.disposed).toBe(false);
    await session.unloadModel('m1');
    expect(models.get('m1')!.disposed).toBe(true);
  });

  it('fails agent creation on a missing model file, an engine load failure, and maxTokens ≥ contextSize', async () => {
    const { session } = createHarness(['m1']);
    const missing = await rejection(session.createAgent({ graph: echoGraph({ model: '/no/such/model.gguf' }) }));
    expect(missing.errorName).toBe('GraphCompilationFailed');
    expect(missing.message).toContain('/no/such/model.gguf');
    const tooBig = await rejection(
      session.createAgent({ graph: echoGraph({ contextSize: 64, maxTokens: 64 }), defaultModel: 'm1' }),
    );
    expect(tooBig.errorName).toBe('GraphCompilationFailed');
    expect(tooBig.message).toContain('maxTokens 64 must be less than contextSize 64');
    const files = fakeModelFiles('broken');
    const broken = new Session({
      registry: new ModelRegistry({ loader: async () => Promise.reject(new Error('not a GGUF')), catalog: { broken: { path: files.broken! } } }),
      nodeTypes: testCatalog,
    }).create({ gameName: 'g' });
    const loadFailed = await rejection(broken.createAgent({ graph: echoGraph(), defaultModel: 'broken' }));
    expect(loadFailed.errorName).toBe('ModelLoadFailed');
    expect(loadFailed.code).toBe(4005);
    expect(loadFailed.message).toContain('not a GGUF');
    const badOptions = await rejection(session.createAgent({ graph: echoGraph(), kvCacheInitialization: 'Eager' as never }));
    expect(badOptions.errorName).toBe('InvalidParamValue');
  });
});

describe('per-model FIFO scheduling', () => {
  it('runs agents on one model in FIFO order and agents on another model concurrently', async () => {
    const { session, models } = createHarness(['shared', 'other'], {}, [], { shared: { scheduling: 'fifo' } });
    const first = await session.createAgent({ graph: echoGraph(), defaultModel: 'shared' });
    const second = await session.createAgent({ graph: echoGraph(), defaultModel: 'shared' });
    const third = await session.createAgent({ graph: echoGraph(), defaultModel: 'other' });
    const shared = models.get('shared')!;
    const other = models.get('other')!;
    const gate = deferred();
    const started = deferred();
    shared.beforeToken = async ({ context }) => {
      if (context === 0) {
        started.resolve();
        await gate.promise;
      }
    };
    const t1 = first.sendMessage('first');
    await started.promise;
    const t2 = second.sendMessage('second');
    // The other model is not behind the shared model's queue: its turn completes while the first is blocked.
    expect((await third.sendMessage('third')).status).toBe('Success');
    expect(other.calls.map((c) => c.prompt)).toEqual(['third']);
    expect(shared.calls.map((c) => c.prompt)).toEqual(['first']);
    gate.resolve();
    expect((await t1).status).toBe('Success');
    expect((await t2).status).toBe('Success');
    expect(shared.calls.map((c) => c.prompt)).toEqual(['first', 'second']);
  });
});

describe('KV cache initialization', () => {
  it('AllocateOnly creates contexts at creation, DeferAllocation on first use, Prefill decodes the prefix', async () => {
    const { session, models } = createHarness(['m1']);
    const model = () => models.get('m1')!;
    const allocate = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    expect(model().contexts).toHaveLength(1);
    expect(allocate.isCacheAllocated('echo')).toBe(true);
    const deferredAgent = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1', kvCacheInitialization: 'DeferAllocation' });
    expect(model().contexts).toHaveLength(1);
    expect(deferredAgent.isCacheAllocated('echo')).toBe(false);
    await deferredAgent.sendMessage('hi');
    expect(model().contexts).toHaveLength(2);
    const prefilled = await session.createAgent({
      graph: echoGraph({ prefix: 'SYSTEM ' }),
      defaultModel: 'm1',
      kvCacheInitialization: 'Prefill',
    });
    expect(model().contexts).toHaveLength(3);
    expect(model().detokenize(model().contexts[2]!.tokens)).toBe('SYSTEM ');
    await prefilled.sendMessage('hi');
    expect(model().contexts[2]!.evaluations.at(-1)).toMatchObject({ reused: 7, evaluated: 2 });
  });

  it('releaseCache frees an idle agent’s contexts and the next turn rebuilds them', async () => {
    const { session, models } = createHarness(['m1']);
    const agent = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    await agent.sendMessage('one');
    await agent.releaseCache();
    expect(agent.isCacheAllocated('echo')).toBe(false);
    expect(models.get('m1')!.contexts[0]!.disposed).toBe(true);
    expect((await agent.sendMessage('two')).status).toBe('Success');
    expect(agent.isCacheAllocated('echo')).toBe(true);
    expect(models.get('m1')!.contexts).toHaveLength(2);
    const gate = deferred();
    models.get('m1')!.beforeToken = () => gate.promise;
    const turn = agent.sendMessage('three');
    expect((await rejection(agent.releaseCache())).errorName).toBe('AgentBusy');
    gate.resolve();
    await turn;
  });
});
