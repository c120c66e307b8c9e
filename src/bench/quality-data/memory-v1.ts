/**
 * Conversation-memory quality set, version 1. Early in a conversation the player tells Brenna, the blacksmith of
 * Emberfall, six facts ({@link MEMORY_FACTS} `tell`); then ordinary shop chatter follows ({@link MEMORY_FILLER_LINES});
 * then the player asks each fact back (`ask`). A reply counts as recalled when it contains, lowercased, any one of
 * the fact's `expect` substrings. The expected words are distinctive ones that Brenna would not say by chance, no
 * `ask` line contains its answer, and no filler line contains any fact's words, names or numbers.
 *
 * This is llama-dialog's own data, written for this package. It is versioned: scores are only comparable between
 * runs of the same version, so changing, adding or removing any line, fact or prompt means bumping
 * {@link MEMORY_SET_VERSION} (write a `memory-v2` file instead of editing this one).
 */

/** Version tag printed with every result; bump it whenever any string below changes. */
export const MEMORY_SET_VERSION = 'memory-v1';

export interface MemoryFact {
  id: string;
  tell: string;
  ask: string;
  expect: readonly string[];
}

export const MEMORY_SYSTEM_PROMPT = [
  'You are Brenna, the blacksmith of Emberfall, and you remember everything your customers tell you.',
  'Answer briefly and in character.',
].join(' ');

export const MEMORY_FACTS: readonly MemoryFact[] = [
  {
    id: 'name',
    tell: 'My name is Tamsin Holloway, by the way.',
    ask: 'Do you remember my name?',
    expect: ['tamsin', 'holloway'],
  },
  {
    id: 'debt',
    tell: 'I still owe you 37 gold for that shield, and I have not forgotten it.',
    ask: 'How much gold do I owe you again?',
    expect: ['37', 'thirty-seven', 'thirty seven'],
  },
  {
    id: 'promise',
    tell: 'I promise I will bring you three wolf pelts for your apron and gloves.',
    ask: 'What was it I promised to bring you?',
    expect: ['pelt'],
  },
  {
    id: 'horse',
    tell: 'My horse is called Quillibet; she is the grey one tied up outside.',
    ask: 'What is my horse called?',
    expect: ['quillibet'],
  },
  {
    id: 'home',
    tell: 'I grew up in Marrowdeep, a tiny village far past the salt flats.',
    ask: 'Which village did I tell you I grew up in?',
    expect: ['marrowdeep'],
  },
  {
    id: 'return',
    tell: 'I will come back to collect my order on the morning of Cindermass.',
    ask: 'When did I say I would come back for my order?',
    expect: ['cindermass'],
  },
];

export const MEMORY_FILLER_LINES: readonly string[] = [
  'The rain has not let up all week. Does the damp air make the forge harder to keep lit?',
  'Your apprentice seems to be getting the hang of the bellows. He was sweating buckets when I walked in.',
  'I always wondered why smiths quench steel in oil instead of water. Is there a real difference?',
  'Prices at the market have gone up again. Even bread costs more than it did last season.',
  'The baker told me the mayor is planning to repave the main square before winter sets in.',
  'That sword on the rack has a lovely pattern in the blade. Did you fold the steel yourself?',
  'It is so warm in here compared to outside. I could stand by your fire all afternoon.',
  'I saw the miners marching down the hill this morning, covered head to toe in soot.',
  'Do you think the price of iron will drop once the new mine shaft opens?',
  'The fog rolled in thick over the river last night. I could barely see my own hands.',
  'Is it true that good charcoal makes a bigger difference than good ore?',
  'Someone at the inn was arguing that bronze beats steel for armour. I laughed in his face.',
  'Your hammer rings like a bell. I could hear it from the far end of the street.',
  'The wind off the hills has been bitter lately. Everyone in town is wearing two cloaks.',
  'I heard the tailor and the cooper had a shouting match over a fence again.',
  'How do you keep your tools from rusting in this weather? Mine turn orange overnight.',
  'The price of a good blade seems fair when you think of all the hours that go into it.',
  'The new priest at the temple gives very long sermons. Half the town fell asleep at the last one.',
  'Is that a new anvil? It looks much heavier than the one you had before.',
  'My uncle used to say a forge is the heart of any town. I think he was right.',
  'The river is running high after all the storms, and the ferryman refuses to cross.',
  'I like the smell of hot metal and coal smoke. Strange, I know, but it feels homely.',
  'The merchants from the south are charging silly amounts for spices this season.',
  'Do you ever get burned working the forge, or do your hands just toughen up over the years?',
  'The guard captain was in a foul mood this morning. Somebody must have stolen his lunch.',
  'That steel looks almost blue where the light catches it. Is that from the tempering?',
  'Sunny afternoons are so rare here. I spent the whole morning sitting by the well.',
  'The innkeeper swears his new ale is the finest in the valley. It tastes like vinegar to me.',
  'I suppose a cheap sword is only cheap until it breaks in the middle of a fight.',
  'How long does it take to heat the forge up properly in the morning?',
  'The tanner\'s daughter is getting married soon, and the whole street is invited to the wedding.',
  'Clouds are gathering over the peaks again. Looks like another storm before nightfall.',
  'Copper has become expensive ever since the eastern road was closed by the landslide.',
  'Do you ever sing while you work? The rhythm of the hammer seems made for it.',
  'I watched you shape that hinge earlier. You make it look so easy.',
  'People say the smith who worked here before you could bend iron bars with his bare hands.',
  'The market stalls were half empty today. Most traders stayed indoors because of the rain.',
  'I never understood why some steel shatters and some bends. Is it all in the heating?',
  'The cobbler has raised his prices too. Soon I will be walking around barefoot.',
  'Your bellows squeak something awful. Maybe a drop of oil would help them?',
  'The lake froze at the edges this morning. Winter is coming early this year.',
  'A travelling bard played at the inn last night and nobody could get him to stop.',
  'Is it harder to work with fine steel than plain iron, or just slower?',
  'The cheapest goods in town are at the stall by the fountain, though the quality varies a lot.',
  'The mayor\'s cat got stuck on the chapel roof again. Took half the watch to get it down.',
  'It is quiet in town today. Even the dogs seem too lazy to bark at anyone.',
  'How do you tell when the metal is hot enough to work? Is it by the colour?',
  'The smoke from your chimney is the first thing I see every morning from my window.',
  'Everything costs more than it did when I was young, but I suppose everyone says that.',
  'The fishmonger claims he caught an eel as long as a cart. Nobody believes a word of it.',
  'Hot work on a hot afternoon. I do not know how you bear it in here.',
  'I hear the fire in this forge was never allowed to go out in the old times, not even at night.',
  'The smith in the next town charges far more than you do, and his work is worse.',
  'Rain on the roof, fire in the forge. There are worse ways to spend an afternoon.',
  'Some say the hills around here are full of iron ore just waiting to be dug up.',
  'What is the hardest thing you have ever had to forge, and did it come out right?',
  'The healer has been busy lately. Half the town has a cough from all the damp.',
  'A good steel pot lasts a lifetime. My mother still cooks with the one her mother used.',
  'I noticed the candle maker closed his shop early. Rumour says he is courting someone.',
  'The stars were so bright last night that I stayed up far too late watching them.',
];
