/**
 * Finds and loads the addon, in SPEC §2.5's order:
 *  1. `LLAMA_DIALOG_BINARY`: a `.node` file, or a folder holding one (a user's own build);
 *  2. a local source build, `build/Release/llama_dialog.node` in this package (contributors, `build-from-source`);
 *  3. the prebuilt platform package `@llama-dialog/<platform>` (an optional dependency), same version only.
 * A prebuilt addon then loads ggml's backend modules: the installed GPU packages whose runtime library is
 * present, and the best CPU variant of its own folder. It never compiles anything; when nothing is found
 * the NativeBinaryMissing error says exactly what to install or build.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LlamaDialogError } from '../errors.js';
import type { NativeAddon } from './binding.js';
import { describeLibc, GPU_BACKEND_KINDS, gpuPackageName, platformPackageName, type GpuBackendKind } from './platform-id.js';

export { describeLibc } from './platform-id.js';

const require = createRequire(import.meta.url);

/** Where the loaded addon came from. */
export type NativeBinarySource = 'override' | 'source-build' | 'platform-package';

export interface NativeBinaryLocation {
  source: NativeBinarySource;
  /** The `.node` file. */
  file: string;
  /** The npm package that held it (platform packages only). */
  packageName?: string;
}

/** What happened to each backend module when the addon started (systemInfo() reports it). */
export interface BackendLoadReport {
  /** True for prebuilt packages (backends are modules); false for static source builds. */
  dynamic: boolean;
  /** Modules ggml loaded, e.g. `{ backend: 'CPU', path: '…/libggml-cpu-zen4.so' }`. */
  loaded: { backend: string; path: string }[];
  /** Per GPU kind: `loaded …`, `not installed …`, `unavailable: …`, or `failed: …`. */
  gpu: Record<GpuBackendKind, string>;
}

/** The addon file names a folder may hold: prebuildify's `<name>.napi.node` and cmake-js's target name. */
const ADDON_FILE_NAMES = ['llama-dialog.napi.node', 'llama_dialog.node', join('build', 'Release', 'llama_dialog.node')];

const SOURCE_BUILD_COMMAND = 'npx llama-dialog build-from-source (needs cmake and a C++ compiler; in a clone of the repository: npm run build:native)';

let cached: { addon: NativeAddon; location: NativeBinaryLocation; backends: BackendLoadReport } | undefined;

/** The package root (the folder whose package.json names llama-dialog), found from this file. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'llama-dialog') return dir;
      } catch {
        // not ours (or unreadable): keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('llama-dialog: cannot find the package root above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

function readVersion(packageDir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** The folder of an installed package as seen from `root`, or undefined when it is not installed. */
function installedPackageDir(root: string, name: string): string | undefined {
  try {
    return dirname(createRequire(join(root, 'package.json')).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

function missing(message: string, cause?: unknown): LlamaDialogError {
  return new LlamaDialogError('NativeBinaryMissing', message, cause === undefined ? undefined : { cause });
}

function platformLine(): string {
  return `${process.platform}-${process.arch} (libc: ${describeLibc()}, Node ${process.version}, ABI ${process.versions.modules})`;
}

function addonInFolderOrFile(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  if (statSync(path).isFile()) return path.endsWith('.node') ? path : undefined;
  return ADDON_FILE_NAMES.map((name) => join(path, name)).find((candidate) => existsSync(candidate));
}

export interface LocateOptions {
  /** The llama-dialog package folder (default: this package). */
  root?: string;
  /** Environment to read LLAMA_DIALOG_BINARY from (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Decides which addon file to load, without loading it.
 * @throws LlamaDialogError NativeBinaryMissing for a broken override, a platform package of another
 *   version, or no binary at all; the message names the platform and the fix.
 */
export function locateNativeBinary(options: LocateOptions = {}): NativeBinaryLocation {
  const root = options.root ?? packageRoot();
  const env = options.env ?? process.env;

  const override = env.LLAMA_DIALOG_BINARY;
  if (override !== undefined && override !== '') {
    const file = addonInFolderOrFile(override);
    if (file === undefined) {
      throw missing(
        `LLAMA_DIALOG_BINARY=${override} is not a llama-dialog addon: it must name a .node file, or a folder holding ` +
          `${ADDON_FILE_NAMES.slice(0, 2).join(' or ')}. Fix the path, or unset LLAMA_DIALOG_BINARY to use the installed binary.`,
      );
    }
    return { source: 'override', file };
  }

  const sourceBuild = join(root, 'build', 'Release', 'llama_dialog.node');
  if (existsSync(sourceBuild)) return { source: 'source-build', file: sourceBuild };

  const ourVersion = readVersion(root) ?? '0.0.0';
  const packageName = platformPackageName();
  const packageDir = installedPackageDir(root, packageName);
  if (packageDir !== undefined) {
    const theirVersion = readVersion(packageDir);
    if (theirVersion !== ourVersion) {
      throw missing(
        `${packageName} is version ${theirVersion ?? 'unknown'} but llama-dialog is ${ourVersion}; the two must match exactly. ` +
          `Install ${packageName}@${ourVersion} (npm install ${packageName}@${ourVersion}).`,
      );
    }
    const file = addonInFolderOrFile(packageDir);
    if (file === undefined) throw missing(`${packageName} at ${packageDir} holds no addon file; reinstall it (npm install ${packageName}@${ourVersion}).`);
    return { source: 'platform-package', file, packageName };
  }

  throw missing(
    `no llama-dialog native binary for ${platformLine()} under ${root}. ` +
      `The prebuilt one is the package ${packageName}@${ourVersion}, an optional dependency: install it with ` +
      `"npm install ${packageName}@${ourVersion}" (or reinstall llama-dialog without --omit=optional / --no-optional). ` +
      `Or build from source: ${SOURCE_BUILD_COMMAND}.`,
  );
}

function gpuDisabled(env: NodeJS.ProcessEnv): boolean {
  return env.LLAMA_DIALOG_GPU === 'cpu' || env.LLAMA_DIALOG_GPU === 'none';
}

// GPU modules first (as ggml's own load order does), each only when its runtime library can be loaded:
// a module whose libcudart/libvulkan is missing would fail inside dlopen with a less helpful message.
function loadGpuModules(addon: NativeAddon, root: string, env: NodeJS.ProcessEnv): Record<GpuBackendKind, string> {
  const status = {} as Record<GpuBackendKind, string>;
  const ourVersion = readVersion(root);
  for (const kind of GPU_BACKEND_KINDS) {
    const name = gpuPackageName(kind);
    const dir = installedPackageDir(root, name);
    if (dir === undefined) {
      status[kind] = `not installed (npm install ${name}@${ourVersion ?? ''} to use it)`;
      continue;
    }
    if (gpuDisabled(env)) {
      status[kind] = `skipped: LLAMA_DIALOG_GPU=${env.LLAMA_DIALOG_GPU}`;
      continue;
    }
    if (readVersion(dir) !== ourVersion) {
      status[kind] = `skipped: ${name} is version ${readVersion(dir)}, llama-dialog is ${ourVersion}`;
      continue;
    }
    let info: { module?: string; runtimeLibraries?: string[] };
    try {
      info = JSON.parse(readFileSync(join(dir, 'build-info.json'), 'utf8')) as typeof info;
    } catch {
      status[kind] = `failed: ${name} has no readable build-info.json`;
      continue;
    }
    const absent = (info.runtimeLibraries ?? []).map((lib) => [lib, addon.probeLibrary(lib)] as const).find(([, error]) => error !== null);
    if (absent) {
      status[kind] = `unavailable: ${absent[0]} not found (${absent[1]}); running on the CPU`;
      continue;
    }
    const loaded = addon.loadBackendFile(join(dir, info.module ?? `libggml-${kind}.so`));
    if (loaded.backend === null) {
      status[kind] = `failed: ${loaded.error}; running on the CPU`;
      continue;
    }
    // A module whose runtime loads can still find no device (no GPU, no driver/ICD): say so, not just "loaded".
    const devices = addon.listBackends().find((backend) => backend.name === loaded.backend)?.devices ?? [];
    status[kind] =
      devices.length > 0
        ? `loaded (${loaded.backend} from ${dir}: ${devices.map((device) => device.description).join(', ')})`
        : `loaded, but ${loaded.backend} found no device (no GPU or no driver); running on the CPU`;
  }
  return status;
}

function loadBackends(addon: NativeAddon, location: NativeBinaryLocation, root: string, env: NodeJS.ProcessEnv): BackendLoadReport {
  if (!addon.dynamicBackends) {
    // Static source build: its backends were linked in; nothing to load, and GPU packages do not apply.
    const compiled = new Set(addon.listBackends().map((b) => b.name.toLowerCase()));
    const gpu = {} as Record<GpuBackendKind, string>;
    for (const kind of GPU_BACKEND_KINDS) {
      gpu[kind] = compiled.has(kind) ? 'built into this source build' : `not in this source build (build-from-source --${kind} adds it)`;
    }
    return { dynamic: false, loaded: [], gpu };
  }
  // GPU modules come from their own packages and link the libggml-base the addon brought into the process;
  // then ggml scores the CPU variants in the addon's folder by CPUID and loads the best one.
  const gpu = loadGpuModules(addon, root, env);
  const cpu = addon.loadBackendsFrom(dirname(location.file));
  return { dynamic: true, loaded: cpu.loaded, gpu };
}

/**
 * Loads the addon (cached after the first success) and its backends.
 * @param root the llama-dialog package folder to look in (tests); default this package.
 * @throws LlamaDialogError NativeBinaryMissing naming platform, arch, libc, Node version, the package to install and the build command.
 */
export function loadNativeAddon(root?: string): NativeAddon {
  if (cached && root === undefined) return cached.addon;
  const from = root ?? packageRoot();
  const location = locateNativeBinary({ root: from });
  let addon: NativeAddon;
  try {
    addon = require(location.file) as NativeAddon;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw missing(
      `the llama-dialog addon at ${location.file} (${location.source}) cannot be loaded on ${platformLine()}: ${reason}. ` +
        (location.source === 'platform-package'
          ? `Reinstall ${location.packageName}, or build from source: ${SOURCE_BUILD_COMMAND}.`
          : `Rebuild it: ${SOURCE_BUILD_COMMAND}.`),
      error,
    );
  }
  const backends = loadBackends(addon, location, from, process.env);
  if (root === undefined) cached = { addon, location, backends };
  return addon;
}

/** Where the loaded addon came from and what its backends did (loads the addon if needed). */
export function nativeLoadReport(): { location: NativeBinaryLocation; backends: BackendLoadReport } {
  loadNativeAddon();
  if (!cached) throw new Error('llama-dialog: addon not loaded');
  return { location: cached.location, backends: cached.backends };
}
