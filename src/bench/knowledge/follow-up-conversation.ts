/**
 * The second conversation of the knowledge cache-cost bench: a traveller asks the innkeeper about one thing, the
 * town's blacksmith, and keeps asking follow-up questions, as players do once a topic interests them. Written as a
 * player would talk (short lines, "he" for the smith), not picked to retrieve well: several lines bring back chunks
 * an earlier turn already showed, which placement.keep 'history' does not repeat.
 */
export const FOLLOW_UP_CONVERSATION: readonly string[] = [
  'I need some work done on my gear. Is there a smith in town?',
  'Where is his forge?',
  'What sort of man is he?',
  'How much does he ask for a sword?',
  'And an axe?',
  'My horse threw a shoe on the road. Can he fix that?',
  'Does he do repairs? The rim of my shield is split.',
  'When does he open in the morning?',
  'Will he let me pay when I collect it?',
  'Does he work alone?',
  'Is his iron any good?',
  'How would I know a blade is really his?',
];
