// findEspeakDataDir: an explicit dir must be complete; a complete system dir wins over the npm package; the npm
// package's emscripten image is extracted once into the cache (nothing half-written, no path escaping the target);
// no data anywhere is TtsEngineUnavailable naming both ways to install it.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { espeakDictionaryFile, findEspeakDataDir } from '../../../src/voice/espeak-data.js';
import { refusal } from '../../kits/refusal.js';
import { writeFakeEspeakData } from '../../kits/voice-files.js';

const dir = mkdtempSync(join(tmpdir(), 'espeak-data-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in @echogarden/espeak-ng-emscripten: a file table in espeak-ng.js indexing espeak-ng.data. */
function fakeEmscriptenPackage(name: string, files: Record<string, string>): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  let offset = 0;
  const table: string[] = [];
  const chunks: Buffer[] = [];
  for (const [file, text] of Object.entries(files)) {
    const bytes = Buffer.from(text);
    table.push(`{filename:"/usr/share/espeak-ng-data/${file}",start:${offset},end:${offset + bytes.length}}`);
    chunks.push(bytes);
    offset += bytes.length;
  }
  writeFileSync(join(folder, 'espeak-ng.js'), `var Module={};loadPackage({files:[${table.join(',')}]});`);
  writeFileSync(join(folder, 'espeak-ng.data'), Buffer.concat(chunks));
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: '@echogarden/espeak-ng-emscripten', version: '9.9.9' }));
  return join(folder, 'espeak-ng.js');
}

const CORE = { phontab: 'pt', phonindex: 'pi', phondata: 'pd', intonations: 'in', en_dict: 'en', 'lang/gmw/en-US': 'name en-us' };

describe('findEspeakDataDir', () => {
  it('maps espeak voices to their dictionary file', () => {
    expect(espeakDictionaryFile('en-us')).toBe('en_dict');
    expect(espeakDictionaryFile('pt-BR')).toBe('pt_dict');
    expect(espeakDictionaryFile('de')).toBe('de_dict');
  });

  it('an explicit dir is used when complete, refused naming what it lacks', () => {
    const complete = writeFakeEspeakData(join(dir, 'explicit'));
    expect(findEspeakDataDir({ explicit: complete, espeakVoice: 'en-us' })).toBe(complete);
    unlinkSync(join(complete, 'phonindex'));
    expect(() => findEspeakDataDir({ explicit: complete })).toThrow(/lacks phonindex/);
    expect(refusal(() => findEspeakDataDir({ explicit: join(dir, 'nowhere') }))).toBe('InvalidVoice');
  });

  it('a complete system dir wins; one without the voice dictionary is passed over', () => {
    const german = writeFakeEspeakData(join(dir, 'system-de'), ['de_dict']);
    const english = writeFakeEspeakData(join(dir, 'system-en'));
    expect(findEspeakDataDir({ systemDirs: [german, english], espeakVoice: 'en-us', resolvePackageFile: () => { throw new Error('not reached'); } })).toBe(english);
  });

  it('extracts the npm package image into the cache once, atomically, ignoring entries that escape it', () => {
    const script = fakeEmscriptenPackage('pkg', { ...CORE, '../../escaped': 'x' });
    const cacheRoot = join(dir, 'cache');
    const found = findEspeakDataDir({ systemDirs: [], espeakVoice: 'en-us', cacheRoot, resolvePackageFile: () => script });
    expect(found).toBe(join(cacheRoot, 'echogarden-9.9.9'));
    expect(readFileSync(join(found, 'phondata'), 'utf8')).toBe('pd');
    expect(readFileSync(join(found, 'lang/gmw/en-US'), 'utf8')).toBe('name en-us');
    expect(existsSync(join(dir, 'escaped'))).toBe(false);
    expect(readdirSync(cacheRoot)).toEqual(['echogarden-9.9.9']);
    // A second call finds it and does not extract again (a marker file written since survives).
    writeFileSync(join(found, 'marker'), '1');
    expect(findEspeakDataDir({ systemDirs: [], espeakVoice: 'en-us', cacheRoot, resolvePackageFile: () => script })).toBe(found);
    expect(existsSync(join(found, 'marker'))).toBe(true);
  });

  it('a package image without the voice dictionary is TtsEngineUnavailable naming it', () => {
    const script = fakeEmscriptenPackage('pkg-nodict', { phontab: 'a', phonindex: 'b', phondata: 'c', intonations: 'd', 'lang/x': 'e' });
    expect(() => findEspeakDataDir({ systemDirs: [], espeakVoice: 'en-us', cacheRoot: join(dir, 'cache2'), resolvePackageFile: () => script })).toThrow(/lacks en_dict/);
  });

  it('no data anywhere is TtsEngineUnavailable naming the Debian package and the npm package', () => {
    const resolvePackageFile = (): string => {
      throw Object.assign(new Error('Cannot find module'), { code: 'MODULE_NOT_FOUND' });
    };
    expect(refusal(() => findEspeakDataDir({ systemDirs: [join(dir, 'none')], resolvePackageFile }))).toBe('TtsEngineUnavailable');
    expect(() => findEspeakDataDir({ systemDirs: [], resolvePackageFile })).toThrow(/apt-get install espeak-ng-data, or npm install @echogarden\/espeak-ng-emscripten/);
  });
});
