// The two real models through the chat-template rule (issue 19, item 3): SmolLM2 keeps its own GGUF template as is
// (description `gguf`, no adapted shape); Gemma 3 270M (base) has none and gets the built-in format of its own family
// (`builtin:gemma`, the system text folded into the first user turn). A conversation of two replying nodes has zero
// cache misses on normal turns by the diagnostics' own counters. Greedy, short replies: no reply text is asserted.
import { describe, expect, it } from 'vitest';
import { runTemplateConversation } from '../kits/template-miss-count.js';
import { realModelPath, type RealModelName } from './real-model-kit.js';

/**
 * One thread: the test counts cache misses, which no thread count changes, and two spinning ggml threads per context
 * on two shared cores made it 9x slower (18 s against 2 s for SmolLM2 at a load of 7).
 */
const THREADS = 1;

const cases: { name: RealModelName; template: string; warnings: RegExp[] }[] = [
  { name: 'smollm2', template: 'gguf', warnings: [] },
  { name: 'gemma3-270m', template: 'builtin:gemma', warnings: [/no chat template; using the built-in gemma format/] },
];

describe.each(cases)('$name: own template, zero misses on normal turns', ({ name, template, warnings }) => {
  it(`${template}, ${warnings.length} renderer warning(s), 0 misses over 4 turns of two nodes`, async () => {
    const result = await runTemplateConversation(await realModelPath(name), { turns: 4, threads: THREADS, maxTokens: 6 });
    expect(result.templates).toEqual([template]);
    const rendererWarnings = result.warnings.filter((warning) => /chat template/.test(warning));
    expect(rendererWarnings).toHaveLength(warnings.length);
    warnings.forEach((pattern, index) => expect(rendererWarnings[index]).toMatch(pattern));
    expect(result.normalPrompts).toBe(6);
    expect(result.misses).toEqual([]);
    expect(result.inexact).toBe(0);
  });
});
