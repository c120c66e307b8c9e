import { describe, expect, it } from 'vitest';
import { buildTavernScene, TAVERN_VERSION } from '../../../src/bench/tavern-scene.js';
import { FakeTokenizer } from '../prompt/fake-tokenizer.js';

describe('buildTavernScene', () => {
  const tokenizer = new FakeTokenizer();
  const scene = buildTavernScene({ tokenizer, agents: 18, linesPerAgent: 10 });

  it('grows the lore to the token target with the given tokenizer and keeps the exact count', () => {
    expect(scene.version).toBe(TAVERN_VERSION);
    expect(scene.loreTokens).toBe(tokenizer.tokenize(scene.lore).length);
    expect(scene.loreTokens).toBeGreaterThanOrEqual(600);
    // One sentence at most past the target.
    expect(scene.loreTokens).toBeLessThan(660);
  });

  it('gives every agent the shared lore first, then its archetype persona, then its name, alternating guard and barkeep with distinct names', () => {
    expect(scene.agents).toHaveLength(18);
    expect(scene.agents.slice(0, 4).map((agent) => agent.archetype)).toEqual(['guard', 'barkeep', 'guard', 'barkeep']);
    for (const agent of scene.agents) {
      expect(agent.systemPrompt.startsWith(`${scene.lore}\n\n`)).toBe(true);
      expect(agent.systemPrompt.endsWith(` Your name is ${agent.name}.`)).toBe(true);
      expect(agent.lines).toHaveLength(10);
      expect(new Set(agent.lines).size).toBeGreaterThan(1);
    }
    expect(new Set(scene.agents.map((agent) => agent.name)).size).toBe(18);
    // Same archetype, same text up to the name: that is what a spawned agent copies.
    const [guard1, , guard2] = scene.agents;
    const shared = (a: string, b: string): string => a.slice(0, [...a].findIndex((ch, i) => ch !== b[i]));
    expect(shared(guard1!.systemPrompt, guard2!.systemPrompt).endsWith(' Your name is ')).toBe(true);
  });

  it('is deterministic', () => {
    expect(buildTavernScene({ tokenizer: new FakeTokenizer(), agents: 18, linesPerAgent: 10 })).toEqual(scene);
  });
});
