/**
 * Text of the blacksmith workload, version 1. FROZEN: figures are only comparable between runs of the same
 * version, so never edit these strings; add a `blacksmith-v2` file instead and bump {@link BLACKSMITH_VERSION}.
 *
 * Token lengths with the Llama-3 tokenizer (deps/llama.cpp/models/ggml-vocab-llama-bpe.gguf, no special tokens):
 * system prompt 232, each player line 20–30, each generated long-variant line 21–30 (checked by
 * test/unit/bench-workloads.test.ts).
 */

/** Version tag printed with every result; bump it whenever any string below changes. */
export const BLACKSMITH_VERSION = 'blacksmith-v1';

export const BLACKSMITH_SYSTEM_PROMPT = [
  'You are Brannoc Ironhand, the blacksmith of Emberfall, a mining town on the northern edge of the Ashen Hills.',
  'You are fifty-two, soot-stained and proud of your craft.',
  'You speak plainly, with dry humour, and you never break character or mention that you are an AI or a game.',
  'You sell and repair weapons, armour and tools.',
  'Your prices: iron dagger 12 silver, steel longsword 45 silver, chainmail shirt 80 silver, horseshoes 3 silver a set, sharpening 2 silver.',
  'You haggle a little but never go below two thirds of a price.',
  'You know the town well: the mayor, Helga Stonebrook, is honest but slow; the Rusty Tankard inn serves the best ale; wolves have been seen near the old quarry; the mine has been quiet since the collapse last spring.',
  'If the player is rude, you grumble but stay polite.',
  'If asked about your past, you hint that you once served in the king\'s army, and that you lost your brother at the Battle of Greyford.',
  'Keep every answer under three sentences.',
].join(' ');

/** The 40 fixed player lines of the default workload, in order. */
export const BLACKSMITH_PLAYER_LINES: readonly string[] = [
  'Good morning, blacksmith! I just arrived in Emberfall and the guard at the gate told me to come and see you first.',
  'I need a decent weapon before I head into the hills. What would you recommend for someone who travels alone?',
  'How much would you want for that steel longsword hanging on the wall behind your anvil, the one with the leather grip?',
  'Forty-five silver is steep for a traveller like me. Would you take thirty silver and a fine wolf pelt instead?',
  'Fair enough. While I\'m here, could you sharpen my old hunting knife? The edge has gone dull after weeks on the road.',
  'Tell me about the wolves near the old quarry. Have they attacked anyone from town yet, or just the sheep and goats?',
  'Who should I talk to if I wanted to earn some coin by hunting those wolves down? Does the mayor pay any bounties?',
  'What kind of person is Mayor Helga Stonebrook? Will she actually pay a stranger, or do I need a local to vouch for me?',
  'I heard there was a collapse in the mine last spring. What happened down there, and were any of the miners trapped inside?',
  'Do you think the mine will ever open again? A lot of families in town must depend on the ore for their living.',
  'Your forge looks very old. Did you build it yourself, or did you take it over from another smith when you came here?',
  'The guard said you served in the king\'s army once. Is that true, and is that where you learned to work with steel?',
  'I\'m sorry to hear about your brother. Was the Battle of Greyford as terrible as the songs in the taverns make it sound?',
  'Let\'s talk about something lighter. What\'s the best thing to drink at the Rusty Tankard, and what does it cost there?',
  'My horse threw a shoe on the road from the south. Can you fit a new set today, and how long would the job take?',
  'While you\'re working on the horse, could you tell me how you temper steel so it doesn\'t shatter in the cold of winter?',
  'I found this strange black ore in a stream bed two days east of here. Have you ever seen anything quite like it before?',
  'Would you be willing to buy some of that black ore from me if I brought back a full sack? What could it be worth to you?',
  'What would happen if someone tried to forge a blade from that ore? Could it hold a better edge than ordinary steel?',
  'I also need some protection. Is the chainmail shirt heavy, and can I still move quickly enough in it to use a bow?',
  'Eighty silver for the chainmail is more than I have right now. Could I pay half today and the rest after the wolf hunt?',
  'What if I brought you the wolf pelts after the hunt as part of the payment? Are wolf pelts worth anything in this town?',
  'Do traders still come through Emberfall since the mine closed, or has the road become too dangerous for their wagons?',
  'What rumours have the traders brought about the lands beyond the mountains? Anything about dragons or lost treasure?',
  'You seem to know everyone in town. Is there anybody here I should be careful around, or anyone who can\'t be trusted?',
  'I think someone has been following me since I left the inn this morning. A tall man in a grey hooded cloak. Know him?',
  'Could you make me a small hidden blade that fits inside my boot? I would feel much safer walking around after dark.',
  'How long would a hidden boot blade take you to make, and would you keep it quiet if anyone came asking questions about it?',
  'Your apprentice keeps staring at me from behind the bellows. Is he always this shy, or does he want to say something?',
  'What made you choose to settle in a quiet mining town like Emberfall after everything you saw during the war years?',
  'If the wolves come into town at night, what should the people do? Does Emberfall have a militia, or only the gate guards?',
  'I might need help on the hunt. Would you come along with your hammer, or are your fighting days behind you for good?',
  'Please check the longsword\'s balance for me once more. It pulls a little toward the tip when I swing it in a high arc.',
  'That\'s much better, thank you. Can you engrave my family\'s crest on the blade, a raven over a broken tower?',
  'How much extra for the engraving? I want it done properly, not scratched in a rush like some cheap fairground trinket.',
  'I\'ll be leaving for the quarry at dawn tomorrow. Is there any advice you would give someone facing a whole wolf pack?',
  'If I do not come back within three days, could you send word to my sister in Southmere? Her name is Ilsa Marrow.',
  'Before I go, I\'d like a dozen arrowheads as well. Do you forge broadheads, or only plain bodkin points for war?',
  'Here is the silver for everything we agreed on today. Please count it, so that there\'s no misunderstanding between us later.',
  'Thank you, Brannoc. When I come back with the pelts, the first ale at the Rusty Tankard is on me.',
];

/**
 * Pieces of the generated lines of the long variant: `<opener> <question>? <closer>`. Every combination is
 * 21–30 tokens long with the Llama-3 tokenizer, so any seeded pick stays in the workload's 20–30 range.
 */
export const BLACKSMITH_LINE_PIECES = {
  openers: [
    'Brannoc, one more thing.',
    'Sorry to bother you again, smith.',
    'Listen, my friend.',
    'Another question, if you have time.',
    'Forgive my curiosity, smith.',
    'Before I forget, smith,',
    'I was just wondering,',
    'Tell me honestly, Brannoc,',
  ],
  questions: [
    'what would you charge to mend a cracked oak shield with an iron rim',
    'how many horseshoes can you forge in a day when the fire is hot',
    'is the road to the old quarry safe after sunset for a lone traveller',
    'does the Rusty Tankard rent clean rooms to travellers passing through',
    'who sells the best leather in Emberfall for straps and scabbards',
    'could you repair the brass buckle on my belt before the evening bell',
    'have the wolves been seen closer to the town walls in recent nights',
    'what does the mayor really think of strangers like me asking questions',
    'where do you buy your iron now that the mine has been closed',
    'would a steel dagger serve me better than an iron one on the road',
    'how do you keep your forge burning through the long winter nights',
    'has anyone tried to reopen the collapsed tunnels under the hill',
    'do you still carry anything with you from your years in the army',
    'what is the quickest path from here to the heart of the Ashen Hills',
    'can you make a lighter helmet for a young squire of about fifteen',
    'which traders still stop here on their long journey to the north',
    'how often do you need to replace the head of your heavy hammer',
    'would you teach me how to sharpen my own blades on a whetstone',
    'is your apprentice ready to take on paid work on his own yet',
    'what would you forge for yourself if coin were no object at all',
  ],
  closers: [
    'I\'d be grateful.',
    'There\'s no rush.',
    'Just curious, really.',
    'I trust your judgement.',
    'Be honest with me.',
    'It matters to me.',
    'Thanks in advance.',
    'Take your time.',
  ],
} as const;

/** Instructions of the Summarize node in the `summary` variant. */
export const BLACKSMITH_SUMMARY_PROMPT =
  'Summarize the conversation between the player and Brannoc the blacksmith so far in at most four short ' +
  'sentences: what was asked, what was agreed, prices and promises, and what is still open. Write plain prose.';
