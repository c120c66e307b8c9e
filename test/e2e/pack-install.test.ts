// The package as a user gets it: `npm pack` of the main package and of the linux-x64-gnu platform
// package, installed offline with scripts refused into a fresh folder whose PATH has node and npm but no
// compiler, cmake or git; then a child process imports `llama-dialog` by name and generates.
//
// The platform package is built here with `scripts/prebuild.mjs --variants host` (the x86-64 baseline
// and this CPU's best variant; the release build carries all of them: LLAMA_DIALOG_PACK_TEST_VARIANTS=all)
// into npm-packages/, incrementally in build-prebuild/.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import { platformId, platformPackageName } from '../../src/native/platform-id.js';
import { llamaCppDir, repoRoot } from '../helpers/llama-cpp.js';
import { ensureTestModel } from '../helpers/models.js';

const onLinuxX64Glibc = platformId() === 'linux-x64-gnu';
const PROMPT_TEXT = 'The blacksmith looked up from the anvil and said';
const REPLY_TOKENS = 8;

interface ChildReport {
  tokens: number[];
  info: { cpuVariant: string; binary: { source: string; package?: string }; dynamicBackends: boolean; gpu: Record<string, string> };
  firstTokenAtMs: number;
}

interface ChildFailure {
  error: { name: string; errorName?: string; code?: number; message: string };
}

// The program a user would write: the package by name, a model, 8 greedy tokens.
const USER_PROGRAM = `
const started = performance.now();
try {
  const { loadModel, systemInfo } = await import('llama-dialog');
  const model = await loadModel({ path: process.argv[1] });
  const context = await model.createContext({ contextSize: 256, threads: 1 });
  const prompt = model.tokenize(process.argv[2], { addSpecial: true });
  let firstTokenAtMs = -1;
  const result = await context.generate({
    prompt,
    maxTokens: ${REPLY_TOKENS},
    sampling: { temperature: 0 },
    onToken: () => { if (firstTokenAtMs < 0) firstTokenAtMs = performance.now() - started; },
  });
  console.log(JSON.stringify({ tokens: Array.from(result.tokens), info: systemInfo(), firstTokenAtMs }));
  await context.dispose();
  await model.dispose();
} catch (error) {
  console.log(JSON.stringify({ error: { name: error.name, errorName: error.errorName, code: error.code, message: error.message } }));
}
`;

// stderr goes to the test's own output: a long build shows its progress, a failure shows why.
function sh(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  return execFileSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'], ...options });
}

function packInto(dir: string, packageDir: string): string {
  const out = sh('npm', ['pack', '--silent', '--pack-destination', dir, packageDir], { cwd: repoRoot });
  return join(dir, out.trim().split('\n').at(-1)!);
}

/**
 * The main package's runtime dependencies, packed from this checkout's node_modules. An offline install
 * needs each dependency's registry metadata in npm's cache, which `npm ci` never stores (it fetches tarballs
 * by their lock-file address); handing npm the tarballs themselves keeps the install offline and exact.
 */
function packRuntimeDependencies(dir: string): string[] {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dependencies?: Record<string, string>; dev?: boolean; optional?: boolean }>;
  };
  const wanted = new Set<string>();
  const visit = (deps: Record<string, string> | undefined) => {
    for (const name of Object.keys(deps ?? {})) {
      if (wanted.has(name) || lock.packages[`node_modules/${name}`] === undefined) continue;
      wanted.add(name);
      visit(lock.packages[`node_modules/${name}`]!.dependencies);
    }
  };
  visit(lock.packages['']!.dependencies);
  return [...wanted].map((name) => {
    const out = sh('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', dir, join(repoRoot, 'node_modules', name)], { cwd: dir });
    return join(dir, out.trim().split('\n').at(-1)!);
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

function highestSymbolVersion(file: string, prefix: 'GLIBC_' | 'GLIBCXX_'): string {
  const versions = [...sh('objdump', ['-T', file]).matchAll(new RegExp(`${prefix}([0-9.]+)`, 'g'))].map((m) => m[1]!);
  versions.sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  return versions.length > 0 ? `${prefix}${versions.at(-1)}` : '-';
}

describe.runIf(onLinuxX64Glibc)('packed tarballs: install without scripts or a compiler, then generate', () => {
  const work = mkdtempSync(join(tmpdir(), 'llama-dialog-pack-'));
  const app = join(work, 'app');
  const toolBin = join(work, 'bin');
  let platformDir: string;
  let mainTarball: string;
  let platformTarball: string;
  let modelPath: string;
  let installMs: number;
  let userEnv: NodeJS.ProcessEnv;

  function runUserProgram(extraEnv: NodeJS.ProcessEnv = {}): ChildReport | ChildFailure {
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', USER_PROGRAM, modelPath, PROMPT_TEXT], {
      cwd: app,
      env: { ...userEnv, ...extraEnv },
      encoding: 'utf8',
    });
    const line = out.stdout.trim().split('\n').at(-1) ?? '';
    if (out.status !== 0 || !line.startsWith('{')) throw new Error(`user program exited ${out.status}: ${out.stderr}`);
    return JSON.parse(line) as ChildReport | ChildFailure;
  }

  beforeAll(async () => {
    modelPath = await ensureTestModel('tiny');
    const started = Date.now();
    // Builds (incrementally) the platform package from the same llama.cpp source as the source build.
    // LLAMA_DIALOG_PACK_TEST_VARIANTS=all tests the release build (every variant); the default keeps CI short.
    const variants = process.env.LLAMA_DIALOG_PACK_TEST_VARIANTS ?? 'host';
    sh(process.execPath, [join(repoRoot, 'scripts', 'prebuild.mjs'), '--variants', variants], { cwd: repoRoot });
    platformDir = join(repoRoot, 'npm-packages', platformId());
    console.log(`[pack-install] platform package built in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    mkdirSync(app, { recursive: true });
    mkdirSync(join(work, 'deps'));
    mainTarball = packInto(work, repoRoot);
    platformTarball = packInto(work, platformDir);
    const dependencyTarballs = packRuntimeDependencies(join(work, 'deps'));

    // PATH with node and npm only: /usr/bin (where cc, g++, make, cmake and git live) is left out.
    mkdirSync(toolBin);
    symlinkSync(process.execPath, join(toolBin, 'node'));
    symlinkSync(sh('sh', ['-c', 'command -v npm']).trim(), join(toolBin, 'npm'));
    userEnv = { HOME: process.env.HOME, PATH: toolBin };
    if (process.env.npm_config_cache) userEnv.npm_config_cache = process.env.npm_config_cache;
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'npc-game', version: '1.0.0', type: 'module', private: true }));

    const installStart = performance.now();
    sh('npm', ['install', '--offline', '--ignore-scripts', '--strict-allow-scripts', '--no-audit', '--no-fund', mainTarball, platformTarball, ...dependencyTarballs], {
      cwd: app,
      env: userEnv,
    });
    installMs = performance.now() - installStart;
  }, 1_800_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('the user environment really has no compiler, cmake or git', () => {
    for (const tool of ['cc', 'gcc', 'g++', 'cmake', 'make', 'git']) {
      const found = spawnSync('/bin/sh', ['-c', `command -v ${tool}`], { env: userEnv });
      expect(found.status, `${tool} is on the user PATH`).not.toBe(0);
    }
  });

  it('generates the same 8 greedy tokens as the source build, on the CPU variant ggml chose', async () => {
    const report = runUserProgram();
    if ('error' in report) throw new Error(`import or generation failed: ${report.error.message}`);
    expect(report.info.binary.source).toBe('platform-package');
    expect(report.info.binary.package).toBe(platformPackageName());
    expect(report.info.dynamicBackends).toBe(true);
    const buildInfo = JSON.parse(readFileSync(join(platformDir, 'build-info.json'), 'utf8')) as { buildHostBestVariant: string; cpuVariants: string[] };
    expect(report.info.cpuVariant).toBe(buildInfo.buildHostBestVariant);
    expect(report.info.gpu.vulkan).toMatch(/^not installed/);

    // The same generation through the source build in this process (tests load build/Release).
    const model = await loadModel({ path: modelPath });
    try {
      const context = await model.createContext({ contextSize: 256, threads: 1 });
      const fromSource = await context.generate({ prompt: model.tokenize(PROMPT_TEXT, { addSpecial: true }), maxTokens: REPLY_TOKENS, sampling: { temperature: 0 } });
      await context.dispose();
      expect(fromSource.tokens.length).toBe(REPLY_TOKENS);
      expect(report.tokens).toEqual(Array.from(fromSource.tokens));
    } finally {
      await model.dispose();
    }
    console.log(
      `[pack-install] npm install of both tarballs ${(installMs / 1000).toFixed(1)} s; import to first token ${(report.firstTokenAtMs / 1000).toFixed(2)} s; ` +
        `install to first token ${((installMs + report.firstTokenAtMs) / 1000).toFixed(1)} s; CPU variant ${report.info.cpuVariant}`,
    );
  });

  it('installs no script and no build: the installed manifests have none and nothing was compiled', () => {
    const installed = join(app, 'node_modules', 'llama-dialog');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { scripts?: Record<string, string>; gypfile?: boolean };
    for (const hook of ['preinstall', 'install', 'postinstall']) expect(manifest.scripts?.[hook]).toBeUndefined();
    expect(manifest.gypfile).toBe(false);
    expect(existsSync(join(installed, 'binding.gyp'))).toBe(false);
    expect(existsSync(join(installed, 'build'))).toBe(false);
    const platformManifest = JSON.parse(readFileSync(join(app, 'node_modules', platformPackageName(), 'package.json'), 'utf8')) as { scripts?: unknown; os: string[]; cpu: string[]; libc: string[]; version: string };
    expect(platformManifest.scripts).toBeUndefined();
    expect(platformManifest).toMatchObject({ os: ['linux'], cpu: ['x64'], libc: ['glibc'] });
    expect(platformManifest.version).toBe(manifest && (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version);
    // The tree npm reports is complete and consistent (exit 0), with the platform package in it.
    const tree = JSON.parse(sh('npm', ['ls', '--all', '--json'], { cwd: app, env: userEnv })) as { dependencies: Record<string, unknown> };
    expect(Object.keys(tree.dependencies)).toEqual(expect.arrayContaining(['llama-dialog', platformPackageName()]));
  });

  it('the tarballs hold no symlinks and no path of the build machine', () => {
    for (const tarball of [mainTarball, platformTarball]) {
      const listing = sh('tar', ['tzvf', tarball]).trim().split('\n');
      expect(listing.filter((line) => line.startsWith('l')), `symlinks in ${tarball}`).toEqual([]);
    }
    const unpacked = join(work, 'unpacked');
    for (const [name, tarball] of [['main', mainTarball], ['platform', platformTarball]] as const) {
      mkdirSync(join(unpacked, name), { recursive: true });
      sh('tar', ['xzf', tarball, '-C', join(unpacked, name)]);
    }
    const machinePaths = [repoRoot.replace(/\/$/, ''), llamaCppDir()].map((p) => Buffer.from(p));
    const offenders: string[] = [];
    for (const file of filesUnder(unpacked)) {
      const bytes = readFileSync(file);
      const hit = machinePaths.find((path) => bytes.includes(path));
      if (hit) offenders.push(`${file.slice(unpacked.length)} contains ${hit.toString()}`);
    }
    expect(offenders).toEqual([]);
  });

  it('the baseline CPU module uses no AVX (no ymm/zmm register anywhere); the best variant does', () => {
    const wideRegisters = (file: string) => (sh('objdump', ['-d', '--no-show-raw-insn', file]).match(/%[yz]mm\d+/g) ?? []).length;
    expect(wideRegisters(join(platformDir, 'libggml-cpu-x64.so'))).toBe(0);
    const buildInfo = JSON.parse(readFileSync(join(platformDir, 'build-info.json'), 'utf8')) as { buildHostBestVariant: string };
    if (buildInfo.buildHostBestVariant !== 'x64' && buildInfo.buildHostBestVariant !== 'sse42') {
      // The check can fail: the same count on an AVX variant is far from zero.
      expect(wideRegisters(join(platformDir, `libggml-cpu-${buildInfo.buildHostBestVariant}.so`))).toBeGreaterThan(100);
    }
    const ceilings = readdirSync(platformDir)
      .filter((f) => /\.(so|node)(\.\d+)?$/.test(f))
      .map((f) => `${f}: ${highestSymbolVersion(join(platformDir, f), 'GLIBC_')} ${highestSymbolVersion(join(platformDir, f), 'GLIBCXX_')}`);
    console.log(`[pack-install] highest symbol versions needed:\n  ${ceilings.join('\n  ')}`);
    expect(ceilings.length).toBeGreaterThanOrEqual(5);
  });

  it('a broken LLAMA_DIALOG_BINARY is a NativeBinaryMissing that says how to fix it', () => {
    const report = runUserProgram({ LLAMA_DIALOG_BINARY: join(work, 'no-such-addon.node') });
    expect('error' in report).toBe(true);
    const { error } = report as ChildFailure;
    expect(error.errorName).toBe('NativeBinaryMissing');
    expect(error.message).toContain('LLAMA_DIALOG_BINARY=');
    expect(error.message).toMatch(/unset LLAMA_DIALOG_BINARY/);
  });

  it('a missing platform package is a NativeBinaryMissing naming the package, platform and the source build', () => {
    const installedPlatform = join(app, 'node_modules', platformPackageName());
    const aside = `${installedPlatform}.aside`;
    renameSync(installedPlatform, aside);
    try {
      const report = runUserProgram();
      expect('error' in report).toBe(true);
      const { error } = report as ChildFailure;
      expect(error.errorName).toBe('NativeBinaryMissing');
      expect(error.message).toContain(`${platformPackageName()}@`);
      expect(error.message).toContain(`${process.platform}-${process.arch}`);
      expect(error.message).toContain(process.version);
      expect(error.message).toMatch(/libc: glibc/);
      expect(error.message).toContain('npx llama-dialog build-from-source');
    } finally {
      renameSync(aside, installedPlatform);
    }
  });
});
