#!/usr/bin/env node
// Builds the addon (llama.cpp + ggml statically linked into build/Release/llama_dialog.node) with cmake-js.
// Incremental: a second run only recompiles what changed.
//
// Environment switches (all optional):
//   LLAMA_CPP_DIR=/path          use your own llama.cpp checkout instead of the pinned one
//   LLAMA_DIALOG_CUDA=1          GGML_CUDA=ON      LLAMA_DIALOG_VULKAN=1  GGML_VULKAN=ON
//   LLAMA_DIALOG_METAL=1|0       GGML_METAL (on by default on macOS by ggml itself)
//   LLAMA_DIALOG_PORTABLE=1      GGML_NATIVE=OFF and every x86 extension off: one binary that runs on any x86-64
//                                (published packages instead carry every CPU variant: npm run build:prebuilt)
//   LLAMA_DIALOG_BUILD_BENCH=1   also build llama-bench and llama-embedding from the same source (npm run bench:engine does this)
//   LLAMA_DIALOG_JOBS=N          parallel compile jobs (default: CPU count)
//   LLAMA_DIALOG_CMAKE_ARGS="-DX=Y ..."  extra CMake definitions
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureLlamaCppSource } from './fetch-llama-cpp.mjs';
import { usearchIncludeDir } from './usearch-headers.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export function cmakeDefinitions(env = process.env) {
  const defs = {};
  const on = (v) => v === '1' || v === 'ON' || v === 'on' || v === 'true';
  if (on(env.LLAMA_DIALOG_CUDA)) defs.GGML_CUDA = 'ON';
  if (on(env.LLAMA_DIALOG_VULKAN)) defs.GGML_VULKAN = 'ON';
  if (env.LLAMA_DIALOG_METAL !== undefined) defs.GGML_METAL = on(env.LLAMA_DIALOG_METAL) ? 'ON' : 'OFF';
  defs.GGML_NATIVE = on(env.LLAMA_DIALOG_PORTABLE) ? 'OFF' : 'ON';
  // GGML_NATIVE=OFF alone leaves ggml's AVX/AVX2/FMA/F16C/BMI2/SSE4.2 defaults on (an x86-64-v3 binary).
  if (on(env.LLAMA_DIALOG_PORTABLE)) {
    for (const feature of ['SSE42', 'AVX', 'AVX2', 'FMA', 'F16C', 'BMI2', 'AVX512']) defs[`GGML_${feature}`] = 'OFF';
  }
  if (on(env.LLAMA_DIALOG_BUILD_BENCH)) defs.LLAMA_DIALOG_BUILD_BENCH = 'ON';
  for (const arg of (env.LLAMA_DIALOG_CMAKE_ARGS ?? '').split(/\s+/).filter(Boolean)) {
    const m = /^-D([^=]+)=(.*)$/.exec(arg);
    if (!m) throw new Error(`LLAMA_DIALOG_CMAKE_ARGS: expected -DNAME=VALUE, got ${arg}`);
    defs[m[1]] = m[2];
  }
  return defs;
}

// cmake-js is a devDependency: present in a clone of the repository, absent from an installed package
// until the user adds the build tools.
function cmakeJsBin() {
  try {
    return createRequire(join(root, 'package.json')).resolve('cmake-js/bin/cmake-js');
  } catch {
    throw new Error('building from source needs cmake-js and node-addon-api: npm install --no-save cmake-js@8.0.0 node-addon-api@8.9.2');
  }
}

function cmakeJs(command, defs, extra = []) {
  const args = [cmakeJsBin(), command, '--log-level', 'warn', ...extra];
  for (const [k, v] of Object.entries(defs)) args.push(`--CD${k}=${v}`);
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    throw new Error(`native ${command} failed (exit ${result.status}); fix the error above and run \`npm run build:native\` again`);
  }
}

export function buildNative({ target } = {}) {
  const llamaDir = ensureLlamaCppSource();
  const defs = { ...cmakeDefinitions(), LLAMA_CPP_DIR: llamaDir, USEARCH_INCLUDE_DIR: usearchIncludeDir() };
  const jobs = process.env.LLAMA_DIALOG_JOBS ?? String(availableParallelism());
  console.error(`[llama-dialog] building native addon (${Object.entries(defs).map(([k, v]) => `${k}=${v}`).join(' ')})`);
  const started = Date.now();
  // cmake-js only configures a build folder that has no CMake cache yet, so a changed switch
  // (say LLAMA_DIALOG_CUDA=1 after a CPU build) needs an explicit configure; unchanged ones keep builds incremental.
  const stamp = join(root, 'build', 'llama-dialog-options.json');
  const wanted = JSON.stringify(defs);
  const configured = existsSync(join(root, 'build', 'CMakeCache.txt')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted;
  if (!configured) {
    cmakeJs('configure', defs);
    writeFileSync(stamp, wanted);
  }
  cmakeJs('build', defs, ['--parallel', jobs, ...(target ? ['--target', target] : [])]);
  console.error(`[llama-dialog] native build done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    buildNative({ target: process.argv[2] });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
