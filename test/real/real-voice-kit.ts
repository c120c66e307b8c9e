// The pinned real voice of the real tier: joe-medium, fetched and imported into <cache>/voices/joe-medium by
// scripts/fetch-test-models.mjs (npm test runs it first; a test file run alone fetches what is missing).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fetchTestVoices, readManifestVoices, voiceFolderPath } from '../../scripts/fetch-test-models.mjs';

/** Folder of a manifest voice in the cache: taken as is when its voice.json is there, else fetched. */
export async function realVoiceFolder(name: 'joe-medium'): Promise<string> {
  const voice = readManifestVoices().find((candidate) => candidate.name === name);
  if (voice === undefined) throw new Error(`test-models.json has no voice named ${name}`);
  const folder = voiceFolderPath(voice);
  if (existsSync(join(folder, 'voice.json'))) return folder;
  return (await fetchTestVoices([name]))[name]!;
}
