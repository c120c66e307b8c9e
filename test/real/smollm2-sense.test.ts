// Sense, loosely (issue 19, item 2): SmolLM2-135M-Instruct, greedy, through an agent's Generate node, says the
// things a chat model of its size should. Only substrings and shares are asserted, never a whole reply: the wording
// moves with the CPU's kernels and with any change of prompt rendering, the sense should not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REAL_AGENT, RealModelFixture, greedyGenerateGraph, nodeDiagnostics } from '../kits/real-models.js';

let fixture: RealModelFixture;

beforeAll(async () => {
  fixture = await RealModelFixture.load();
});

afterAll(async () => {
  await fixture?.dispose();
});

/** The reply of the agent's `answer` node to each line, each line asked with no history (a fresh question). */
async function answers(systemPrompt: string, lines: readonly string[], maxTokens = 32): Promise<string[]> {
  const session = fixture.session();
  const agent = await session.createAgent({ ...REAL_AGENT, graph: greedyGenerateGraph(systemPrompt, { maxTokens }), maintainDialogueHistory: false });
  const replies: string[] = [];
  for (const line of lines) {
    const turn = await agent.sendMessage(line);
    expect(turn.status).toBe('Success');
    replies.push(nodeDiagnostics(turn.diagnostics, 'answer').output!.text);
  }
  await agent.destroy();
  return replies;
}

const share = (replies: readonly string[], pattern: RegExp): number => replies.filter((reply) => pattern.test(reply)).length / replies.length;

describe('SmolLM2-135M-Instruct makes sense (greedy)', () => {
  // A plain system prompt, because the template's default one ("You are a helpful AI assistant named SmolLM, trained
  // by Hugging Face") makes this model answer this exact question in French nonsense ("L'Étoile, la Marseillaise,
  // ..."): the same tokens through llama.cpp directly give the same reply, so that is the model, not the rendering.
  const ASSISTANT = 'You are a helpful assistant.';

  it('names Paris as the capital of France', async () => {
    const [reply] = await answers(ASSISTANT, ['What is the capital of France?']);
    expect(reply).toMatch(/paris/i);
    // Asked in other words, most replies still say it (measured 5 of 6 on this machine: "Which city is the capital
    // of France?" gets "Le Bristol").
    const reworded = await answers(ASSISTANT, [
      'What is the capital of France',
      'what is the capital of france?',
      'Which city is the capital of France?',
      'Name the capital city of France.',
      'What is the capital city of France?',
      'Tell me the capital of France.',
    ]);
    expect(share(reworded, /paris/i), reworded.join(' | ')).toBeGreaterThan(0.5);
  });

  it('a named NPC says its name when asked, in most of 10 phrasings', async () => {
    const phrasings = [
      'What is your name?',
      "What's your name?",
      'Who are you?',
      'Tell me your name, smith.',
      'May I know your name?',
      'How should I call you?',
      'Do you have a name?',
      'Hello! And you are...?',
      'What do people call you?',
      'Remind me, what was your name again?',
    ];
    const replies = await answers(
      'You are Brannoc, the blacksmith of Oakvale. Your name is Brannoc. You speak briefly and always answer as Brannoc.',
      phrasings,
    );
    // N = 10, greedy. Measured share: 8 of 10 (0.8) on this machine; "What's your name?" greets the player as
    // Brannoc and calls itself "Erebo", "Remind me..." gets "Grimbold Ironfist", and those two do not count.
    const named = share(replies, /\bbrannoc\b/i);
    expect(named, replies.join(' | ')).toBeGreaterThan(0.5);
  });
});
