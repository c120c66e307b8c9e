#!/usr/bin/env node
// Fetches the pinned llama.cpp source into deps/llama.cpp (git-ignored).
// The source comes from the git bundle that the registry package node-llama-cpp@3.21.1 ships;
// nothing of llama.cpp is ever committed here. LLAMA_CPP_DIR points the build at a user's own checkout instead.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PINNED_COMMIT = '80fb11ac73e66d89eae2c6a91d8a77428fa733ed';
export const PINNED_TAG = 'v0.4.0';
export const UPSTREAM_GIT = 'https://github.com/ggml-org/llama.cpp.git';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_LLAMA_DIR = join(root, 'deps', 'llama.cpp');

function git(args, cwd) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The pinned release's git bundle inside the node-llama-cpp devDependency, or undefined when absent. */
function findBundle() {
  // node-llama-cpp's exports map hides package.json, so look for the folder on the node_modules path.
  const require = createRequire(import.meta.url);
  const pkgDir = (require.resolve.paths('node-llama-cpp') ?? [])
    .map((base) => join(base, 'node-llama-cpp'))
    .find((candidate) => existsSync(join(candidate, 'package.json')));
  if (!pkgDir) return undefined;
  const bundle = join(pkgDir, 'llama', 'gitRelease.bundle');
  return existsSync(bundle) ? bundle : undefined;
}

// Without the bundle (an installed package has no devDependencies), clone the pinned tag; offline that
// fails, and the message says which two ways remain.
function cloneUpstream(dir, quiet) {
  if (!quiet) console.error(`[llama-dialog] cloning llama.cpp ${PINNED_TAG} from ${UPSTREAM_GIT}`);
  try {
    // By commit, not tag name: the commit is what the build pins and checks.
    mkdirSync(dir, { recursive: true });
    git(['init', '--quiet'], dir);
    git(['fetch', '--quiet', '--depth', '1', UPSTREAM_GIT, PINNED_COMMIT], dir);
    git(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', 'FETCH_HEAD'], dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true }); // a half-made checkout would be taken for the real one next time
    const detail = error instanceof Error && 'stderr' in error ? String(error.stderr).trim() : String(error);
    throw new Error(
      `cannot fetch llama.cpp ${PINNED_TAG} (${detail || 'git clone failed'}). Offline, either set LLAMA_CPP_DIR to a ` +
        `llama.cpp checkout at commit ${PINNED_COMMIT}, or install node-llama-cpp@3.21.1 (its llama/gitRelease.bundle holds it).`,
    );
  }
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
  mkdirSync(dirname(dir), { recursive: true });
  if (bundle) {
    if (!quiet) console.error(`[llama-dialog] cloning llama.cpp ${PINNED_TAG} from ${bundle}`);
    git(['clone', '--quiet', bundle, dir]);
    git(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', PINNED_COMMIT], dir);
  } else {
    cloneUpstream(dir, quiet);
  }
  const head = git(['rev-parse', 'HEAD'], dir);
  if (head !== PINNED_COMMIT) throw new Error(`cloned llama.cpp is at ${head}, expected ${PINNED_COMMIT}`);
  if (!quiet) console.error(`[llama-dialog] llama.cpp ready at ${dir} (${head.slice(0, 7)})`);
  return dir;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(ensureLlamaCppSource());
}
