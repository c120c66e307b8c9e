#!/usr/bin/env node
// Fetches the pinned llama.cpp source into deps/llama.cpp (git-ignored).
// The source comes from the git bundle that the registry package node-llama-cpp@3.21.1 ships;
// nothing of llama.cpp is ever committed here. LLAMA_CPP_DIR points the build at a user's own checkout instead.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PINNED_COMMIT = '80fb11ac73e66d89eae2c6a91d8a77428fa733ed';
export const PINNED_TAG = 'v0.4.0';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_LLAMA_DIR = join(root, 'deps', 'llama.cpp');

function git(args, cwd) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function findBundle() {
  // node-llama-cpp's exports map hides package.json, so look for the folder on the node_modules path.
  const require = createRequire(import.meta.url);
  const pkgDir = (require.resolve.paths('node-llama-cpp') ?? [])
    .map((base) => join(base, 'node-llama-cpp'))
    .find((candidate) => existsSync(join(candidate, 'package.json')));
  if (!pkgDir) {
    throw new Error(
      'llama.cpp source not found: install the pinned devDependency node-llama-cpp@3.21.1 (npm install), ' +
        'or set LLAMA_CPP_DIR to your own llama.cpp checkout.',
    );
  }
  const bundle = join(pkgDir, 'llama', 'gitRelease.bundle');
  if (!existsSync(bundle)) throw new Error(`node-llama-cpp does not contain ${bundle}`);
  return bundle;
}

/** Returns the llama.cpp source folder, fetching the pinned release when needed. */
export function ensureLlamaCppSource({ quiet = false } = {}) {
  const custom = process.env.LLAMA_CPP_DIR;
  if (custom) {
    const dir = resolve(custom);
    if (!existsSync(join(dir, 'include', 'llama.h'))) throw new Error(`LLAMA_CPP_DIR=${dir} has no include/llama.h`);
    return dir;
  }
  const dir = DEFAULT_LLAMA_DIR;
  if (existsSync(join(dir, '.git'))) {
    const head = git(['rev-parse', 'HEAD'], dir);
    if (head !== PINNED_COMMIT) throw new Error(`${dir} is at ${head}, expected ${PINNED_COMMIT}; delete it and run again`);
    return dir;
  }
  const bundle = findBundle();
  if (!quiet) console.error(`[llama-dialog] cloning llama.cpp ${PINNED_TAG} from ${bundle}`);
  mkdirSync(dirname(dir), { recursive: true });
  git(['clone', '--quiet', bundle, dir]);
  git(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', PINNED_COMMIT], dir);
  const head = git(['rev-parse', 'HEAD'], dir);
  if (head !== PINNED_COMMIT) throw new Error(`cloned llama.cpp is at ${head}, expected ${PINNED_COMMIT}`);
  if (!quiet) console.error(`[llama-dialog] llama.cpp ready at ${dir} (${head.slice(0, 7)})`);
  return dir;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(ensureLlamaCppSource());
}
