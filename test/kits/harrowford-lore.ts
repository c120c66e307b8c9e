/** A five-record knowledge base of a river town, shared by the real-tier knowledge tests (in process and over the wire). */
export const LORE = [
  { id: 'smithy-prices', text: 'Brann the blacksmith sells swords for twelve silver and axes for eight.', metadata: { place: 'market' } },
  { id: 'curfew', text: 'The curfew bell rings at the ninth hour; after it the north gate stays shut until dawn.', metadata: { place: 'gate' } },
  { id: 'ferry', text: 'The river ferry costs two copper coins and runs from dawn to dusk.', metadata: { place: 'harbour' } },
  { id: 'wolves', text: 'Wolves have been seen near the old mill after dark.', metadata: { place: 'mill' } },
  { id: 'temple', text: 'The temple of the Dawn Mother keeps silence from sunset until the first bell.', metadata: { place: 'temple' } },
];

/** The lore's one metadata field. */
export const LORE_FIELDS = [{ name: 'place', type: 'string', default: 'town' }];
