#!/usr/bin/env node
// npm install hook: keep a prebuilt (prebuilds/) or already built (build/Release/) binary when there is one;
// otherwise build the addon from source. Replaces npm's default `node-gyp rebuild`, which would wipe build/
// (and with it every incremental llama.cpp object) on each install. LLAMA_DIALOG_SKIP_BUILD=1 skips the build.
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNative } from './build-native.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const nodeGypBuild = createRequire(import.meta.url)('node-gyp-build');

let found;
try {
  found = nodeGypBuild.resolve(root);
} catch {
  found = undefined;
}
if (found) {
  console.error(`[llama-dialog] native binary: ${found}`);
} else if (process.env.LLAMA_DIALOG_SKIP_BUILD === '1') {
  console.error('[llama-dialog] no native binary and LLAMA_DIALOG_SKIP_BUILD=1: run `npm run build:native` before use');
} else {
  try {
    buildNative();
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
