#!/usr/bin/env node
// Builds the prebuilt platform package(s) into npm-packages/ (git-ignored), ready for `npm pack`:
//
//   npm run build:prebuilt                      # @llama-dialog/<platform>: addon + shared llama/ggml + every CPU variant
//   npm run build:prebuilt -- --variants host   # only the x86-64 baseline and this CPU's best variant (tests, CI)
//   npm run build:prebuilt -- --vulkan          # also @llama-dialog/<os>-<arch>-vulkan: the Vulkan backend module only
//   npm run build:prebuilt -- --cuda            # also @llama-dialog/<os>-<arch>-cuda: the CUDA backend module only
//   --gpu-only                                  # skip the CPU package (with --vulkan/--cuda)
//   --if-supported                              # do nothing off linux-x64-gnu (what `npm test` passes)
//
// Every package has the main package's exact version; the loader refuses any other. Build folders live
// under build-prebuild/ (one per package) and are incremental. Environment: LLAMA_CPP_DIR, LLAMA_DIALOG_JOBS,
// LLAMA_DIALOG_CUDA_ARCHITECTURES (default below), LLAMA_DIALOG_CMAKE_ARGS="-DX=Y ...".
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureLlamaCppSource, PINNED_COMMIT } from './fetch-llama-cpp.mjs';
import { usearchIncludeDir } from './usearch-headers.mjs';
import { hostPlatformId, x86VariantsFor } from './platform-id.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const mainManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
export const PACKAGES_DIR = join(root, 'npm-packages');
const BUILD_ROOT = join(root, 'build-prebuild');
/** The CUDA architectures of a release module: a few real ones plus PTX that newer GPUs JIT-compile. */
const DEFAULT_CUDA_ARCHITECTURES = '75-virtual;80-virtual;86-real;89-real;120a-real';

function log(message) {
  console.error(`[llama-dialog prebuild] ${message}`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
}

function extraCmakeDefinitions() {
  const defs = {};
  for (const arg of (process.env.LLAMA_DIALOG_CMAKE_ARGS ?? '').split(/\s+/).filter(Boolean)) {
    const m = /^-D([^=]+)=(.*)$/.exec(arg);
    if (!m) throw new Error(`LLAMA_DIALOG_CMAKE_ARGS: expected -DNAME=VALUE, got ${arg}`);
    defs[m[1]] = m[2];
  }
  return defs;
}

// cmake-js configures once per folder; a changed definition set reconfigures (kept incremental otherwise).
function configure(buildDir, defs) {
  const stamp = join(buildDir, 'llama-dialog-options.json');
  const wanted = JSON.stringify(defs);
  if (existsSync(join(buildDir, 'CMakeCache.txt')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return;
  const args = [join(root, 'node_modules', 'cmake-js', 'bin', 'cmake-js'), 'configure', '--log-level', 'warn', '-m', '-O', buildDir];
  for (const [k, v] of Object.entries(defs)) args.push(`--CD${k}=${v}`);
  run(process.execPath, args);
  writeFileSync(stamp, wanted);
}

// Makefiles, because `make <target>/fast` builds a target without its CMake dependencies: ggml makes
// itself depend on every backend module, and the quick build wants only two CPU variants of fourteen.
// Sequential /fast targets: make would not order them among themselves.
function make(buildDir, targets, { fast }) {
  const jobs = process.env.LLAMA_DIALOG_JOBS ?? String(availableParallelism());
  if (!fast) {
    run('make', ['-C', buildDir, `-j${jobs}`, '--no-print-directory', ...targets]);
    return;
  }
  for (const target of targets) {
    scanHeaderDependencies(buildDir, target);
    run('make', ['-C', buildDir, `-j${jobs}`, '--no-print-directory', `${target}/fast`]);
  }
}

// A /fast target also skips the target's `depend` step, which merges the compilers' .d files into the make
// rules; without it an edited header rebuilt nothing on the next incremental build (a stale addon object built
// against an older native/sequence.h corrupted the heap). So run that step first, as the full target would.
function scanHeaderDependencies(buildDir, target) {
  const makefile = readFileSync(join(buildDir, 'Makefile'), 'utf8');
  const rule = new RegExp(`^${target}/fast:\\n\\t\\$\\(MAKE\\) \\$\\(MAKESILENT\\) -f (\\S+) (\\S+)/build$`, 'm').exec(makefile);
  if (!rule) throw new Error(`${join(buildDir, 'Makefile')}: no ${target}/fast rule; reconfigure by deleting ${buildDir}`);
  run('make', ['-C', buildDir, '--no-print-directory', '-f', rule[1], `${rule[2]}/depend`]);
}

function readelfNeeded(file) {
  const out = execFileSync('readelf', ['-d', file], { encoding: 'utf8' });
  return [...out.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
}

function copyInto(dir, from, name = from.split('/').pop()) {
  copyFileSync(from, join(dir, name));
  return name;
}

function writeManifest(dir, { name, description, files, extra = {} }) {
  const manifest = {
    name,
    version: mainManifest.version,
    description,
    license: mainManifest.license,
    os: [process.platform],
    cpu: [process.arch],
    ...(process.platform === 'linux' ? { libc: [hostPlatformId().endsWith('-musl') ? 'musl' : 'glibc'] } : {}),
    files: [...files, 'build-info.json'],
    exports: { './package.json': './package.json', './build-info.json': './build-info.json' },
    preferUnplugged: true,
    ...extra,
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
}

function freshPackageDir(id) {
  const dir = join(PACKAGES_DIR, id);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

function baseDefinitions(llamaDir) {
  return {
    LLAMA_CPP_DIR: llamaDir,
    USEARCH_INCLUDE_DIR: usearchIncludeDir(),
    LLAMA_DIALOG_DYNAMIC_BACKENDS: 'ON',
    ...extraCmakeDefinitions(),
  };
}

/** The CPU platform package: addon (prebuildify's `<name>.napi.node`), shared libs, CPU variant modules. */
export function buildPlatformPackage({ variants = 'all' } = {}) {
  const llamaDir = ensureLlamaCppSource();
  const id = hostPlatformId();
  const buildDir = join(BUILD_ROOT, id);
  const started = Date.now();
  configure(buildDir, baseDefinitions(llamaDir));
  const bin = join(buildDir, 'bin');
  let cpuModules;
  if (variants === 'all') {
    make(buildDir, ['llama_dialog'], { fast: false });
    cpuModules = readdirSync(bin).filter((f) => /^libggml-cpu-.+\.so$/.test(f));
  } else {
    const wanted = x86VariantsFor(readFileSync('/proc/cpuinfo', 'utf8'));
    log(`building CPU variants ${wanted.join(', ')} only (--variants host)`);
    // The variants with their own dependencies (ggml-base, their CPU-feature objects); then ggml, llama and
    // the addon without theirs, which would be every variant.
    make(buildDir, wanted.map((v) => `ggml-cpu-${v}`), { fast: false });
    make(buildDir, ['ggml', 'llama', 'llama_dialog'], { fast: true });
    cpuModules = wanted.map((v) => `libggml-cpu-${v}.so`);
  }
  const dir = freshPackageDir(id);
  const files = [copyInto(dir, join(bin, 'llama_dialog.node'), 'llama-dialog.napi.node')];
  for (const lib of ['libllama.so', 'libggml.so', 'libggml-base.so', ...cpuModules]) files.push(copyInto(dir, join(bin, lib)));
  // ggml's CPU modules use OpenMP (one warm thread team, see native/compute_thread.h); libgomp is not on
  // every slim image, so the package carries it (GPL with the GCC Runtime Library Exception).
  if (cpuModules.some((m) => readelfNeeded(join(bin, m)).includes('libgomp.so.1'))) {
    const gomp = execFileSync('gcc', ['-print-file-name=libgomp.so.1'], { encoding: 'utf8' }).trim();
    if (!existsSync(gomp)) throw new Error('the CPU modules need libgomp.so.1 but gcc does not know where it is');
    files.push(copyInto(dir, gomp, 'libgomp.so.1'));
  }
  const hostBest = x86VariantsFor(readFileSync('/proc/cpuinfo', 'utf8')).at(-1);
  writeFileSync(
    join(dir, 'build-info.json'),
    JSON.stringify(
      {
        llamaCppCommit: PINNED_COMMIT,
        addon: 'llama-dialog.napi.node',
        cpuVariants: cpuModules.map((m) => m.replace(/^libggml-cpu-(.+)\.so$/, '$1')),
        buildHostBestVariant: hostBest,
      },
      null,
      2,
    ) + '\n',
  );
  writeManifest(dir, { name: `@llama-dialog/${id}`, description: `llama-dialog's native addon and llama.cpp for ${id}`, files });
  log(`${id} ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${dir}`);
  return dir;
}

/** A GPU package: only the backend module, which links the platform package's libggml-base at run time. */
export function buildGpuPackage(kind) {
  const llamaDir = ensureLlamaCppSource();
  const id = `${process.platform}-${process.arch}-${kind}`;
  const buildDir = join(BUILD_ROOT, id);
  const started = Date.now();
  const defs = { ...baseDefinitions(llamaDir), GGML_CPU_ALL_VARIANTS: 'OFF' };
  if (kind === 'vulkan') defs.GGML_VULKAN = 'ON';
  if (kind === 'cuda') {
    defs.GGML_CUDA = 'ON';
    defs.CMAKE_CUDA_ARCHITECTURES = process.env.LLAMA_DIALOG_CUDA_ARCHITECTURES ?? DEFAULT_CUDA_ARCHITECTURES;
  }
  configure(buildDir, defs);
  // The module's own dependencies only (ggml-base, and for Vulkan the generated shaders).
  make(buildDir, [`ggml-${kind}`], { fast: false });
  const module = `libggml-${kind}.so`;
  const dir = freshPackageDir(id);
  const files = [copyInto(dir, join(buildDir, 'bin', module))];
  const runtime = kind === 'vulkan' ? ['libvulkan.so.1'] : readelfNeeded(join(dir, module)).filter((n) => /^lib(cudart|cublas|cuda)\b/.test(n));
  writeFileSync(
    join(dir, 'build-info.json'),
    JSON.stringify({ llamaCppCommit: PINNED_COMMIT, backend: kind, module, runtimeLibraries: runtime, ...(kind === 'cuda' ? { cudaArchitectures: defs.CMAKE_CUDA_ARCHITECTURES } : {}) }, null, 2) + '\n',
  );
  writeManifest(dir, { name: `@llama-dialog/${id}`, description: `llama-dialog's ${kind} backend module for ${process.platform}-${process.arch}`, files });
  const seconds = (Date.now() - started) / 1000;
  log(`${id} ready in ${seconds.toFixed(1)} s: ${module} ${(statSync(join(dir, module)).size / 1e6).toFixed(1)} MB`);
  return dir;
}

function parseArgs(argv) {
  const options = { variants: 'all', gpu: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--variants') options.variants = argv[++i];
    else if (arg === '--vulkan') options.gpu.push('vulkan');
    else if (arg === '--cuda') options.gpu.push('cuda');
    else if (arg === '--gpu-only') options.gpuOnly = true;
    else if (arg === '--if-supported') options.ifSupported = true;
    else throw new Error(`unknown option ${arg}; see the header of scripts/prebuild.mjs`);
  }
  if (options.variants !== 'all' && options.variants !== 'host') throw new Error('--variants is all or host');
  return options;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const options = parseArgs(process.argv.slice(2));
    // `npm test` builds the package the pack-and-install test installs; that test runs on linux-x64-gnu only.
    if (options.ifSupported && hostPlatformId() !== 'linux-x64-gnu') {
      log(`skipped: the pack-and-install test builds linux-x64-gnu, this is ${hostPlatformId()}`);
      process.exit(0);
    }
    if (!options.gpuOnly) buildPlatformPackage({ variants: options.variants });
    for (const kind of options.gpu) buildGpuPackage(kind);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
