// Knowledge in a node's template and the KV cache (issue 20, item 7). With the reference's placement (the template
// for the current turn only), the next prompt differs where last turn's template stood, so every normal turn decodes
// the last user line and reply again. With placement.keep 'history' each template stays with its turn, replayed as
// sent, so the previous prompt is a prefix of the next one; chunks a kept template already shows are not repeated,
// and maxKnowledgeTokens caps what one turn adds.
import { describe, expect, it } from 'vitest';
import { Dialog } from '../../../src/dialog/dialog.js';
import { commonPrefixLength } from '../../../src/engine/common-prefix.js';
import { makeProjector } from './helpers.js';
import { KNOWLEDGE_BLOCK_LABEL, formatKnowledgeBlock } from '../../../src/prompt/knowledge-block.js';

const TEMPLATE = '{{#knowledge}}{{#has_chunks}}Facts ({{name}}):\n{{#chunks}}- {{text}}\n{{/chunks}}{{/has_chunks}}{{/knowledge}}';
const LORE = {
  swords: 'Swords cost twelve silver at the smithy.',
  curfew: 'The curfew bell rings at the ninth hour.',
  ferry: 'The ferry costs two copper coins.',
  wolves: 'Wolves hunt near the old mill after dark.',
};

/** Turn by turn: the line, the chunks Retrieve attached (ids of LORE), and the prompts the node got. */
function converse(
  keep: 'turn' | 'history',
  turns: (keyof typeof LORE)[][],
  maxKnowledgeTokens = 0,
  template = TEMPLATE,
  role: 'system' | 'user' = 'system',
  sourceOf: (id: keyof typeof LORE) => string = () => 'lore',
) {
  const { projector } = makeProjector({ template, placement: { keep, role }, maxKnowledgeTokens });
  const dialog = new Dialog();
  const prompts = [];
  for (const [index, chunks] of turns.entries()) {
    dialog.beginTurn(`Question number ${index}?`);
    for (const id of chunks) dialog.addKnowledge({ text: LORE[id], source: sourceOf(id), score: 0.2, node: 'lookup', id });
    const projection = projector.project(dialog);
    prompts.push(projection);
    dialog.addReply({ node: 'answer', text: `Answer number ${index}.` });
  }
  return prompts;
}

describe('knowledge placement', () => {
  const TURNS: (keyof typeof LORE)[][] = [['swords', 'curfew'], ['swords', 'curfew'], ['ferry', 'swords'], ['wolves'], ['swords', 'curfew']];

  it("keep 'turn' (the reference's rule): each turn's prompt breaks the previous one where its template stood", () => {
    const prompts = converse('turn', TURNS);
    for (let turn = 1; turn < prompts.length; turn++) {
      const previous = prompts[turn - 1]!.tokens;
      expect(commonPrefixLength(previous, prompts[turn]!.tokens), `turn ${turn}`).toBeLessThan(previous.length);
      // Only this turn's knowledge is in the prompt.
      const text = prompts[turn]!.messages.map((message) => message.content).join('\n');
      expect(text.split('Facts (lore)').length - 1).toBe(1);
    }
  });

  it("keep 'history': every prompt starts with the whole previous one, and a chunk already shown is not repeated", () => {
    const prompts = converse('history', TURNS);
    for (let turn = 1; turn < prompts.length; turn++) {
      const previous = prompts[turn - 1]!.tokens;
      expect(commonPrefixLength(previous, prompts[turn]!.tokens), `turn ${turn}`).toBe(previous.length);
    }
    const knowledge = prompts.map((projection) => projection.diagnostics.knowledge);
    expect(knowledge.map((use) => use.shown)).toEqual([2, 0, 1, 1, 0]);
    expect(knowledge.map((use) => use.alreadyInHistory)).toEqual([0, 2, 1, 0, 2]);
    const last = prompts.at(-1)!.messages.map((message) => message.content).join('\n');
    for (const text of Object.values(LORE)) expect(last.split(text).length - 1, text).toBe(1);
  });

  it('maxKnowledgeTokens keeps the nearest chunks that fit and lists the ones it dropped', () => {
    const [first] = converse('turn', [['swords', 'curfew', 'ferry']], 20);
    const use = first!.diagnostics.knowledge;
    expect(use.tokens).toBeLessThanOrEqual(20);
    expect(use.shown).toBe(1);
    expect(use.dropped.map((chunk) => chunk.id)).toEqual(['curfew', 'ferry']);
    expect(use.shown + use.dropped.length).toBe(3);
    expect(use.dropped.every((chunk) => chunk.source === 'lore' && chunk.tokens > 0)).toBe(true);
    const text = first!.messages.map((message) => message.content).join('\n');
    expect(text).toContain(LORE.swords);
    for (const chunk of use.dropped) expect(text).not.toContain(LORE[chunk.id as keyof typeof LORE]);
    // The dropped chunks still count nowhere: the prompt's tokens are its messages' tokens.
    expect(first!.tokens.length).toBe(first!.diagnostics.promptTokens);
  });

  it("the template's closing newline is not sent: the user's line follows the knowledge after exactly one blank line", () => {
    const [first] = converse('history', [['swords']], 0, TEMPLATE, 'user');
    expect(first!.messages.at(-1)!.content).toBe(`Facts (lore):\n- ${LORE.swords}\n\nQuestion number 0?`);
  });

  it('knowledgeBlock: one label for every source, one chunk per line, nothing at all on a turn with no new chunk', () => {
    const prompts = converse('history', [['swords', 'wolves'], ['swords'], ['curfew']], 0, '{{knowledgeBlock}}', 'user', (id) =>
      id === 'wolves' ? 'rumours' : 'lore',
    );
    const lines = prompts.map((projection) => projection.messages.at(-1)!.content);
    expect(lines[0]).toBe(`${KNOWLEDGE_BLOCK_LABEL}\n${LORE.swords}\n${LORE.wolves}\n\nQuestion number 0?`);
    // Turn 1's only chunk is already in the kept history: its user message is the line alone, as without knowledge.
    expect(lines[1]).toBe('Question number 1?');
    expect(lines[2]).toBe(`${KNOWLEDGE_BLOCK_LABEL}\n${LORE.curfew}\n\nQuestion number 2?`);
    for (let turn = 1; turn < prompts.length; turn++) {
      const previous = prompts[turn - 1]!.tokens;
      expect(commonPrefixLength(previous, prompts[turn]!.tokens), `turn ${turn}`).toBe(previous.length);
    }
    // Exact counts: the prompt is its messages, knowledge included.
    for (const projection of prompts) expect(projection.tokens.length).toBe(projection.diagnostics.promptTokens);
    expect(formatKnowledgeBlock([])).toBe('');
  });
});
