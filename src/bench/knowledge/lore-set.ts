/**
 * The lore-v1 data set (src/bench/knowledge-data): a river town of records and the player questions they answer,
 * this package's own data. Read from the source tree or the built package alike (the JSON files sit beside src/).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../native/loader.js';

export interface LoreRecord {
  id: string;
  text: string;
  metadata: { topic: string; place: string; kind: string; tags: string[] };
}

export interface LoreQuestion {
  question: string;
  /** Ids of the records that answer it; empty when none does. */
  relevant: string[];
}

/** The field schema the lore records are declared with. */
export const LORE_FIELDS = [
  { name: 'topic', type: 'string', default: '' },
  { name: 'place', type: 'string', default: 'world' },
  { name: 'kind', type: 'string', default: '' },
  { name: 'tags', type: 'set<string>', default: [] },
];

function dataFile(name: string): string {
  return join(packageRoot(), 'src', 'bench', 'knowledge-data', name);
}

export function loreRecords(): LoreRecord[] {
  return JSON.parse(readFileSync(dataFile('lore-v1.kb.json'), 'utf8')) as LoreRecord[];
}

export function loreQuestions(): LoreQuestion[] {
  return JSON.parse(readFileSync(dataFile('lore-v1-questions.json'), 'utf8')) as LoreQuestion[];
}
