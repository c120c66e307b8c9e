import { LlamaDialogError } from '../errors.js';
import type { Tokenizer } from '../engine/types.js';
import { seededRandom } from '../util/seeded-random.js';

/**
 * Version of the scene's text: figures are comparable only within one version. v2 puts the archetype's persona
 * before the agent's name (v1 began the persona with it), so agents of one archetype share lore and persona.
 */
export const TAVERN_VERSION = 'tavern-v2';

/** The two kinds of NPC in the tavern; every agent is one of them. */
export const TAVERN_ARCHETYPES = ['guard', 'barkeep'] as const;
export type TavernArchetype = (typeof TAVERN_ARCHETYPES)[number];

/** One NPC of the scene. */
export interface TavernAgent {
  name: string;
  archetype: TavernArchetype;
  /**
   * The shared lore, a blank line, the archetype's persona, then the agent's name: every system prompt starts with
   * the same lore, and the agents of one archetype share the persona too. Shared text first, the agent's own last,
   * is how a game would template its NPCs for shared-prefix reuse.
   */
  systemPrompt: string;
  /** The player's lines to this agent, in order. */
  lines: string[];
}

export interface TavernScene {
  version: string;
  /** The lore every agent shares (the common prefix of every system prompt). */
  lore: string;
  /** Tokens of `lore` with the model's tokenizer (no BOS), measured, not estimated. */
  loreTokens: number;
  agents: TavernAgent[];
}

const LORE_OPENING =
  'You live in Harrowmere, a walled river town on the old salt road. This is what everyone in town knows, and what you know too.';

// Lore sentences are built from these pieces by a seeded generator, so the text is the same everywhere.
const LORE_PLACES = [
  'the Gilded Tankard', 'the north gate', 'the salt market', 'the chapel of the Drowned Saint', 'the tanners\u2019 row',
  'the old mill', 'the ferry landing', 'the reeve\u2019s hall', 'the watchtower on Crow Hill', 'the cistern under the square',
];
const LORE_PEOPLE = [
  'Reeve Aldous Marr', 'Mother Ysolde', 'the ferryman Coll', 'the salt merchant Hedda Vane', 'Captain Brannoc of the watch',
  'the widow Osk', 'the tinker twins', 'Brother Fennick', 'the smith Garrow', 'old Tamsin the herb-wife',
];
const LORE_EVENTS = [
  'keeps a ledger of every debt in town', 'was seen arguing about the river tolls', 'lost a cart of salt to bandits last spring',
  'pays the watch in silver instead of copper', 'has not been seen since the last new moon', 'swears the well water tastes of iron',
  'hosts a card game every seventh night', 'sold a map of the marsh paths to a stranger', 'knows where the old smugglers\u2019 tunnel runs',
  'owes the Gilded Tankard eleven crowns',
];
const LORE_RULES = [
  'The gates close at the second bell after sunset and open at dawn.', 'Blades longer than a forearm must be peace-bound inside the walls.',
  'The salt tax is one copper in ten, paid at the market scale.', 'Nobody fishes below the weir during the spawning moon.',
  'Strangers must give their name to the watch at the gate.', 'The chapel bell rings three times when the river floods.',
  'Ale may not be sold after midnight, except on feast days.', 'Debts are settled at the reeve\u2019s hall on the first day of each month.',
];

const PERSONAS: Record<TavernArchetype, string> = {
  guard:
    'You are a guard of the town watch, posted in the common room of the Gilded Tankard tonight. You are tired, ' +
    'dutiful and suspicious of strangers. Answer the player in one or two short sentences, in character, and never ' +
    'reveal watch business to someone you do not trust.',
  barkeep:
    'You keep the bar at the Gilded Tankard. You are warm, nosy and love gossip, but you never give credit. Answer ' +
    'the player in one or two short sentences, in character, and try to sell them a drink.',
};

const NAMES: Record<TavernArchetype, readonly string[]> = {
  guard: ['Bram', 'Idris', 'Kettle', 'Morwen', 'Sabel', 'Torvin', 'Ulla', 'Wace'],
  barkeep: ['Dunna', 'Effie', 'Hollis', 'Jory', 'Lark', 'Nell', 'Pim', 'Rosk'],
};

const LINE_PIECES: Record<TavernArchetype, { openers: readonly string[]; questions: readonly string[] }> = {
  guard: {
    openers: ['Evening, officer.', 'Excuse me, guard,', 'Sorry to bother you on duty,', 'Listen,'],
    questions: [
      'when do the gates close tonight', 'have you seen anyone suspicious near the ferry landing', 'is it true someone robbed the salt carts',
      'who gives the orders in the watch these days', 'can I carry my sword inside the walls', 'what happened at the old mill last week',
      'where can a traveller sleep safely in this town', 'do you know anything about the smugglers\u2019 tunnel',
    ],
  },
  barkeep: {
    openers: ['Good evening!', 'Hey, barkeep,', 'Another question for you,', 'Tell me honestly,'],
    questions: [
      'what is the best ale you pour', 'who is the loud fellow playing cards in the corner', 'any rooms free for the night',
      'what is the latest gossip about the reeve', 'does the ferryman ever drink here', 'how much for a bowl of stew and bread',
      'who owes you the most money in town', 'have you heard about the strangers from the marsh',
    ],
  },
};

const DEFAULT_LORE_TOKENS = 600;

/**
 * Builds the tavern scene: lore grown sentence by sentence from a seeded generator until it reaches `loreTokens`
 * with the model's own tokenizer (the exact count is kept), then one persona and a list of player lines per agent.
 * Agents alternate between the archetypes (guard, barkeep, guard, …).
 * @throws LlamaDialogError InvalidArgument for a non-positive agent or line count, or a lore target out of 50..8000.
 */
export function buildTavernScene(options: {
  tokenizer: Tokenizer;
  agents: number;
  linesPerAgent: number;
  loreTokens?: number;
}): TavernScene {
  const { tokenizer, agents, linesPerAgent } = options;
  const target = options.loreTokens ?? DEFAULT_LORE_TOKENS;
  if (!Number.isInteger(agents) || agents < 1) throw new LlamaDialogError('InvalidArgument', `agents must be a positive integer, got ${agents}`);
  if (!Number.isInteger(linesPerAgent) || linesPerAgent < 1) {
    throw new LlamaDialogError('InvalidArgument', `lines per agent must be a positive integer, got ${linesPerAgent}`);
  }
  if (!Number.isInteger(target) || target < 50 || target > 8000) {
    throw new LlamaDialogError('InvalidArgument', `lore tokens must be an integer from 50 to 8000, got ${target}`);
  }
  const lore = growLore(tokenizer, target);
  const byArchetype: Record<TavernArchetype, number> = { guard: 0, barkeep: 0 };
  const sceneAgents: TavernAgent[] = [];
  for (let index = 0; index < agents; index++) {
    const archetype = TAVERN_ARCHETYPES[index % TAVERN_ARCHETYPES.length] as TavernArchetype;
    const ordinal = byArchetype[archetype]++;
    const names = NAMES[archetype];
    // Past the name list, names repeat with a number, so any agent count works.
    const name = `${names[ordinal % names.length]}${ordinal >= names.length ? ` ${Math.floor(ordinal / names.length) + 1}` : ''}`;
    sceneAgents.push({
      name,
      archetype,
      systemPrompt: `${lore.text}\n\n${PERSONAS[archetype]} Your name is ${name}.`,
      lines: playerLines(archetype, index, linesPerAgent),
    });
  }
  return { version: TAVERN_VERSION, lore: lore.text, loreTokens: lore.tokens, agents: sceneAgents };
}

function growLore(tokenizer: Tokenizer, target: number): { text: string; tokens: number } {
  const random = seededRandom(0x7a7e_4e01);
  const pick = (items: readonly string[]): string => items[Math.floor(random() * items.length)] ?? items[0] ?? '';
  let text = LORE_OPENING;
  let tokens = tokenizer.tokenize(text).length;
  for (let sentence = 0; tokens < target; sentence++) {
    // Every fourth sentence is a town rule; the others are who does what where.
    const next =
      sentence % 4 === 3
        ? pick(LORE_RULES)
        : `${capitalize(pick(LORE_PEOPLE))}, often found at ${pick(LORE_PLACES)}, ${pick(LORE_EVENTS)}.`;
    text = `${text} ${next}`;
    tokens = tokenizer.tokenize(text).length;
  }
  return { text, tokens };
}

/** The player's lines to agent `index`: questions cycle from an offset that differs per agent, openers rotate. */
function playerLines(archetype: TavernArchetype, index: number, count: number): string[] {
  const { openers, questions } = LINE_PIECES[archetype];
  const lines: string[] = [];
  for (let k = 0; k < count; k++) {
    const opener = openers[(index + k) % openers.length] ?? '';
    const question = questions[(index * 3 + k) % questions.length] ?? '';
    // An opener ending in a comma runs on into the question; otherwise the question starts a sentence.
    lines.push(`${opener} ${opener.endsWith(',') ? question : capitalize(question)}?`);
  }
  return lines;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
