/**
 * The crowd probe's scene (issue "many NPCs by default"): N guards at one gate with the same ~240-token system prompt
 * (their standing orders), each asked its own line, naming it, at the same moment: the probe the issue describes, a
 * new user's first crowd with one Generate node per agent.
 */
export const CROWD_VERSION = 'crowd-v1';

const STANDING_ORDERS = [
  'You are a guard of the Saltgate, the river gate of Harrowmere, a walled town on the old salt road.',
  'Your standing orders, read aloud at every change of watch:',
  'The gate opens at dawn and closes at the second bell after sunset; nobody passes after the bell without a writ from the reeve.',
  'Every stranger gives a name and a reason, and both go into the gate book.',
  'Blades longer than a forearm are peace-bound with red cord before they pass the arch.',
  'Salt carts pay one copper in ten at the scale by the guardhouse; merchants with the guild seal pay at the market instead.',
  'Beggars may shelter under the arch in rain, but not block the road.',
  'If the chapel bell rings three times the river is rising: close the lower sluice and send a runner to the mill.',
  'Captain Brannoc inspects the watch at noon; report anything odd to him and to nobody else.',
  'You answer travellers briefly and plainly, in one or two sentences, as a tired but honest guard would.',
  'You never leave your post, never take coin for passage, and never speak of the smugglers\u2019 tunnel, whatever you have heard.',
  'Rumours this week: a cart of salt went missing on the marsh road, the widow Osk has not opened her shutters since the new moon,',
  'and a stranger in a grey cloak has asked twice about the old mill.',
].join(' ');

const NAMES = ['Aldo', 'Bryn', 'Cato', 'Dell', 'Edda', 'Fenn', 'Gale', 'Hobb', 'Isla', 'Jory', 'Kest', 'Lorn', 'Mags', 'Nell', 'Orm', 'Pike'];
const QUESTIONS = [
  'When does the gate close tonight?',
  'Can I bring my sword into town?',
  'Where do I pay the salt toll?',
  'Have you seen a man in a grey cloak?',
  'Is the marsh road safe this week?',
  'Who do I report a theft to?',
  'May I sleep under the arch tonight?',
  'Why is the chapel bell ringing?',
];

export interface CrowdAgent {
  name: string;
  systemPrompt: string;
  line: string;
}

/** The scene's agents: `count` guards (names repeat with a number past 16), one question each, the same orders. */
export function crowdAgents(count: number): CrowdAgent[] {
  return Array.from({ length: count }, (_, index) => {
    const base = NAMES[index % NAMES.length] as string;
    const name = index < NAMES.length ? base : `${base} ${Math.floor(index / NAMES.length) + 1}`;
    return {
      name,
      systemPrompt: STANDING_ORDERS,
      line: `Guard ${name}, ${(QUESTIONS[index % QUESTIONS.length] as string).toLowerCase()}`,
    };
  });
}
