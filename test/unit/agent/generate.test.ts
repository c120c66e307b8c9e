import { describe, expect, it } from 'vitest';
import type { NodeDiagnostics } from '../../../src/diag/turn-diagnostics.js';
import { collect, createHarness } from '../../kits/session-kit.js';

const generateGraph = (params: Record<string, unknown> = {}) => ({
  start: 'answer',
  nodes: [{ name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom, a blacksmith.', maxTokens: 64, ...params } }],
});

function nodeDiag(diagnostics: { nodes: NodeDiagnostics[] } | undefined, name: string): NodeDiagnostics {
  const node = diagnostics?.nodes.find((n) => n.name === name);
  if (!node) throw new Error(`no diagnostics for ${name}`);
  return node;
}

describe('Generate node', () => {
  it('projects system prompt + history, records the reply and reuses the cache on the next turn', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: generateGraph(), defaultModel: 'm1', enableDiagnostics: true });
    const model = models.get('m1')!;
    let n = 0;
    model.reply = () => `reply ${++n}`;
    const first = await agent.sendMessage('Hello');
    expect(first.status).toBe('Success');
    const diag1 = nodeDiag(first.diagnostics, 'answer');
    expect(diag1.input?.prompt.map((m) => [m.role, m.content])).toEqual([
      ['system', 'You are Brom, a blacksmith.'],
      ['user', 'Hello'],
    ]);
    expect(diag1.cache).toMatchObject({ miss: true, causes: ['firstTurn'] });
    expect(diag1.output).toMatchObject({ text: 'reply 1', stopReason: 'eog' });
    const second = await agent.sendMessage('Got a sword?');
    const diag2 = nodeDiag(second.diagnostics, 'answer');
    expect(diag2.input?.prompt.map((m) => m.content)).toEqual(['You are Brom, a blacksmith.', 'Hello', 'reply 1', 'Got a sword?']);
    expect(diag2.cache?.miss).toBe(false);
    expect(diag2.cache?.causes).toEqual([]);
    expect(diag2.cache?.reused).toBe(diag2.cache?.expectedReuse);
    expect(diag2.cache?.reused).toBeGreaterThan(0);
    expect(agent.history.map((turn) => turn.replies.map((r) => r.text))).toEqual([['reply 1'], ['reply 2']]);
    // The prompt really sent to the model is what diagnostics show.
    expect(model.calls.at(-1)?.prompt).toContain('Got a sword?');
    expect(diag2.input?.promptTokens).toBe(model.tokenize(model.calls.at(-1)!.prompt).length);
  });

  it('names the cause of cache misses: system prompt changed, history edited, cache released', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: generateGraph(), defaultModel: 'm1', enableDiagnostics: true });
    models.get('m1')!.reply = () => 'ok';
    await agent.sendMessage('one');
    agent.changeParam('answer', 'systemPrompt', 'You are Brom, a grumpy blacksmith.');
    const changed = await agent.sendMessage('two');
    expect(nodeDiag(changed.diagnostics, 'answer').cache?.causes).toEqual(['systemPromptChanged']);
    agent.editTurn(0, { userLine: 'uno' });
    const edited = await agent.sendMessage('three');
    expect(nodeDiag(edited.diagnostics, 'answer').cache?.causes).toEqual(['historyEdited']);
    await agent.releaseCache();
    const released = await agent.sendMessage('four');
    const cache = nodeDiag(released.diagnostics, 'answer').cache;
    expect(cache?.causes).toEqual(['cacheReleased']);
    expect(cache?.reused).toBe(0);
    const normal = await agent.sendMessage('five');
    expect(nodeDiag(normal.diagnostics, 'answer').cache?.miss).toBe(false);
  });

  it('changeParam of template, placement or input keeps the trim watermark: a dropped turn never returns', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({
      graph: generateGraph({ template: '{{slots.lore}}', contextSize: 1000, maxTokens: 100 }),
      defaultModel: 'm1',
      enableDiagnostics: true,
    });
    let n = 0;
    models.get('m1')!.reply = () => `reply ${++n}`;
    for (let turn = 0; turn < 8; turn++) {
      const done = await agent.sendMessage(`line ${turn}`);
      expect(nodeDiag(done.diagnostics, 'answer').input!.turnsTrimmed).toBe(0);
    }
    // A long framing (knowledge for this turn only) forces a trim that drops the oldest turns.
    const trimmed = nodeDiag((await agent.sendMessage('line 8', { slots: { lore: 'x'.repeat(400) } })).diagnostics, 'answer').input!;
    expect(trimmed.turnsTrimmed).toBeGreaterThan(0);
    const watermark = trimmed.firstTurnInPrompt!;
    expect(watermark).toBeGreaterThan(0);
    // Without the long framing the whole history would fit again; the node must still not show the dropped turns.
    const changes: [string, unknown][] = [
      ['placement', { position: 'after', role: 'user' }],
      ['template', 'Mood: {{mood}}'],
      ['input', 'event'],
    ];
    for (const [param, value] of changes) {
      agent.changeParam('answer', param, value);
      const done = await agent.sendMessage(`after ${param}`, { slots: { event: `event for ${param}` } });
      const diag = nodeDiag(done.diagnostics, 'answer');
      expect(diag.input!.turnsTrimmed).toBe(0);
      expect(diag.input!.firstTurnInPrompt).toBe(watermark);
      expect(diag.input!.prompt.map((m) => m.content).join('\n')).not.toMatch(/^line 0$/m);
      // The trimmed turn's framing is not replayed, but the cause named is the change itself.
      if (param === 'placement') expect(diag.cache!.causes).toEqual(['templateChanged']);
      if (param === 'input') expect(diag.input!.prompt.at(-1)!.content).toContain('event for input');
    }
  });

  it('streams deltas, or one whole answer with stream false; History Role None hides the reply later', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({
      graph: {
        start: 'think',
        nodes: [
          {
            name: 'think',
            type: 'Generate',
            params: { systemPrompt: 'Think.', historyRole: 'None', stream: false, maxTokens: 32 },
            exits: { default: 'say' },
          },
          { name: 'say', type: 'Generate', params: { systemPrompt: 'Speak.', maxTokens: 32 } },
        ],
      },
      defaultModel: 'm1',
    });
    const model = models.get('m1')!;
    model.reply = (prompt) => (prompt.includes('Think.') ? 'secret plan' : 'spoken');
    const events = await collect(agent.sendMessage('hi'));
    const answers = events.filter((e) => e.type === 'answerText');
    expect(answers[0]).toMatchObject({ node: 'think', text: 'secret plan', isDelta: false, isFinal: false });
    expect(answers.filter((e) => e.node === 'say' && e.isDelta).map((e) => e.text).join('')).toBe('spoken');
    expect(answers.at(-1)).toMatchObject({ node: 'say', text: 'spoken', isFinal: true });
    // The hidden reasoning feeds the later node of its own turn.
    expect(model.calls.at(-1)!.prompt).toContain('secret plan');
    model.reply = () => 'x';
    await agent.sendMessage('again');
    const lastPrompt = model.calls.at(-1)!.prompt;
    expect(lastPrompt).toContain('spoken');
    expect(lastPrompt.match(/secret plan/g)).toBeNull();
  });

  it('maintainDialogueHistory false projects every turn without history', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: generateGraph(), defaultModel: 'm1', maintainDialogueHistory: false });
    models.get('m1')!.reply = () => 'answer';
    await agent.sendMessage('first line');
    await agent.sendMessage('second line');
    const prompt = models.get('m1')!.calls.at(-1)!.prompt;
    expect(prompt).toContain('second line');
    expect(prompt).not.toContain('first line');
    expect(agent.history).toHaveLength(2);
  });

  it('export → import into a new agent reproduces the same next prompt; a bad snapshot changes nothing', async () => {
    const { session, models } = createHarness();
    const original = await session.createAgent({ graph: generateGraph(), defaultModel: 'm1', variables: { mood: 'calm' } });
    const model = models.get('m1')!;
    let n = 0;
    model.reply = () => `line ${++n}`;
    await original.sendMessage('Hi');
    await original.sendMessage('Sell me a shield');
    original.setVariable('mood', 'angry');
    const snapshot = JSON.parse(JSON.stringify(original.exportDialog()));
    expect(snapshot.variables).toEqual({ mood: 'angry' });

    const copy = await session.createAgent({ graph: generateGraph(), defaultModel: 'm1', variables: { mood: 'calm' } });
    expect(() => copy.importDialog({ ...snapshot, version: 99 })).toThrow(expect.objectContaining({ errorName: 'InvalidSnapshot' }));
    expect(() => copy.importDialog({ ...snapshot, variables: { mood: 3 } })).toThrow(expect.objectContaining({ errorName: 'InvalidSnapshot' }));
    expect(copy.history).toHaveLength(0);
    expect(copy.variables).toEqual({ mood: 'calm' });
    copy.importDialog(JSON.stringify(snapshot));
    expect(copy.variables).toEqual({ mood: 'angry' });

    model.reply = () => 'same';
    await original.sendMessage('How much?');
    await copy.sendMessage('How much?');
    const [a, b] = model.calls.slice(-2);
    expect(a!.context).not.toBe(b!.context);
    expect(b!.prompt).toBe(a!.prompt);
  });

  it('seedHistory replaces history while idle and shows in the next prompt', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: generateGraph(), defaultModel: 'm1' });
    agent.seedHistory([{ userLine: 'Who are you?', replies: [{ node: 'answer', text: 'I am Brom.' }] }]);
    await agent.sendMessage('Nice to meet you');
    const prompt = models.get('m1')!.calls.at(-1)!.prompt;
    expect(prompt.indexOf('Who are you?')).toBeLessThan(prompt.indexOf('I am Brom.'));
    expect(prompt.indexOf('I am Brom.')).toBeLessThan(prompt.indexOf('Nice to meet you'));
    expect(() => agent.seedHistory([{ userLine: 5 } as never])).toThrow(expect.objectContaining({ errorName: 'InvalidSnapshot' }));
    expect(agent.history).toHaveLength(2);
  });
});
