/**
 * Tool-calling quality set, version 1: three tools Brenna, the blacksmith of Emberfall, can call, and 40 player
 * lines, each labelled with the tool it needs (10 per tool) or `null` where no tool is needed (10 lines of small
 * talk, opinions and greetings). The lines are interleaved in a fixed order. Used to measure whether a model calls
 * the right tool, and only when one is needed.
 *
 * This is llama-dialog's own data, written for this package. It is versioned: scores are only comparable between
 * runs of the same version, so changing, adding or removing any line, tool or prompt means bumping
 * {@link TOOL_SET_VERSION} (write a `tool-lines-v2` file instead of editing this one).
 */

/** Version tag printed with every result; bump it whenever any string below changes. */
export const TOOL_SET_VERSION = 'tools-v1';

export interface QualityTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ToolLine {
  line: string;
  tool: string | null;
}

export const QUALITY_TOOLS: readonly QualityTool[] = [
  {
    name: 'check_price',
    description: 'Look up the price of an item the player asks about.',
    parameters: {
      type: 'object',
      properties: {
        item: { type: 'string', maxLength: 40 },
      },
      required: ['item'],
      additionalProperties: false,
    },
  },
  {
    name: 'repair_item',
    description: 'Book a repair of the player\'s item.',
    parameters: {
      type: 'object',
      properties: {
        item: { type: 'string', maxLength: 40 },
        urgent: { type: 'boolean' },
      },
      required: ['item'],
      additionalProperties: false,
    },
  },
  {
    name: 'give_directions',
    description: 'Tell the player the way to a place in town.',
    parameters: {
      type: 'object',
      properties: {
        place: { type: 'string', maxLength: 40 },
      },
      required: ['place'],
      additionalProperties: false,
    },
  },
];

export const TOOL_SYSTEM_PROMPT = [
  'You are Brenna, the blacksmith of Emberfall, talking with a player in your forge.',
  'When the player\'s line needs a price, a repair booking or directions, call the matching tool.',
  'Otherwise do not call any tool; just answer in character, briefly.',
].join(' ');

export const TOOL_LINES: readonly ToolLine[] = [
  { line: 'Good morning, Brenna! Busy day at the forge?', tool: null },
  { line: 'How much is that steel longsword on the wall?', tool: 'check_price' },
  { line: 'My sword is chipped near the tip. Can you fix it?', tool: 'repair_item' },
  { line: 'Where is the Rusty Tankard? I\'m meeting a friend there.', tool: 'give_directions' },
  { line: 'What do you charge for a set of horseshoes?', tool: 'check_price' },
  { line: 'Your forge is really impressive. How long have you been a smith?', tool: null },
  { line: 'How do I get to the town hall from here?', tool: 'give_directions' },
  { line: 'Please mend my shield right away, I ride out within the hour!', tool: 'repair_item' },
  { line: 'Do you prefer working with iron or with steel?', tool: null },
  { line: 'What would a chainmail shirt cost me?', tool: 'check_price' },
  { line: 'Could you sharpen my hunting knife sometime this week? No rush.', tool: 'repair_item' },
  { line: 'Which way to the old quarry?', tool: 'give_directions' },
  { line: 'Cold out today, isn\'t it? My fingers are numb.', tool: null },
  { line: 'Is the iron dagger expensive?', tool: 'check_price' },
  { line: 'Can you point me to the temple? I need to light a candle.', tool: 'give_directions' },
  { line: 'My helmet has a nasty dent. I need it fixed tonight, it\'s urgent.', tool: 'repair_item' },
  { line: 'What got you into blacksmithing in the first place?', tool: null },
  { line: 'Before I decide, what\'s the price on your round shields?', tool: 'check_price' },
  { line: 'The straps on my breastplate tore. Can you repair them?', tool: 'repair_item' },
  { line: 'I need to find the stables. Which way?', tool: 'give_directions' },
  { line: 'Honestly, I think dwarven steel is overrated. What do you reckon?', tool: null },
  { line: 'Where does the healer live? My friend is hurt.', tool: 'give_directions' },
  { line: 'That war hammer looks heavy. What are you asking for it?', tool: 'check_price' },
  { line: 'Fix my axe as fast as you can, the raiders are coming at dusk!', tool: 'repair_item' },
  { line: 'Do you ever take a day off from the forge?', tool: null },
  { line: 'How many silver for a dozen arrowheads?', tool: 'check_price' },
  { line: 'My chainmail has a few broken rings. Could you book it in for mending?', tool: 'repair_item' },
  { line: 'How do I reach the north gate from your shop?', tool: 'give_directions' },
  { line: 'Thanks for the help earlier, I really appreciate it.', tool: null },
  { line: 'Tell me the cost of a steel helmet, please.', tool: 'check_price' },
  { line: 'Is the market square far? How do I get there?', tool: 'give_directions' },
  { line: 'The hinge on my gauntlet is stuck. Mend it whenever you have time.', tool: 'repair_item' },
  { line: 'What is the finest thing you have ever forged?', tool: null },
  { line: 'I might want a crossbow. What does one go for?', tool: 'check_price' },
  { line: 'Emergency! My spear snapped and the tournament starts at noon. Can you fix it?', tool: 'repair_item' },
  { line: 'Where can I find the mayor\'s house?', tool: 'give_directions' },
  { line: 'Which road leads down to the docks?', tool: 'give_directions' },
  { line: 'Ballpark figure for a pair of gauntlets?', tool: 'check_price' },
  { line: 'Can you straighten my bent plough blade?', tool: 'repair_item' },
  { line: 'Farewell for now, Brenna. Stay warm.', tool: null },
];

/** One answer of a router that picks the tool before the call: a plain word, the tool it stands for (null: none). */
export interface ToolRouterChoice {
  id: string;
  tool: string | null;
  description: string;
  /** Two example lines, none of them in {@link TOOL_LINES}. */
  examples: readonly string[];
}

/**
 * The choices of the routed mode: the ToolCall node takes no examples and its tool names are not words a small model
 * writes readily, so a ClassifyIntentLLM picks among plain words first.
 */
export const TOOL_ROUTER_CHOICES: readonly ToolRouterChoice[] = [
  {
    id: 'price',
    tool: 'check_price',
    description: 'The player asks what an item costs.',
    examples: ['What does a box of nails cost here?', 'How much are you asking for the copper kettle?'],
  },
  {
    id: 'repair',
    tool: 'repair_item',
    description: "The player wants one of their items repaired.",
    examples: ['The hinge on my chest is bent, can you straighten it?', 'Please patch up my dented breastplate when you can.'],
  },
  {
    id: 'directions',
    tool: 'give_directions',
    description: 'The player asks the way to a place in town.',
    examples: ['Which way to the old mill?', 'How do I reach the south gate from here?'],
  },
  {
    id: 'none',
    tool: null,
    description: 'Small talk, greetings, opinions or thanks: no tool is needed.',
    examples: ['Lovely weather for smithing today.', 'Thanks, you have been very kind.'],
  },
];
