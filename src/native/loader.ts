/**
 * Finds and loads the addon binary with node-gyp-build (prebuilds/<platform>-<arch>/ or
 * build/Release/). A missing binary becomes a NativeBinaryMissing error that says what to build.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LlamaDialogError } from '../errors.js';
import type { NativeAddon } from './binding.js';

const require = createRequire(import.meta.url);

let cached: NativeAddon | undefined;

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

/** glibc or musl on Linux (what prebuilt binaries are split by); the platform name elsewhere. */
export function describeLibc(): string {
  if (process.platform !== 'linux') return 'n/a';
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime ? `glibc ${report.header.glibcVersionRuntime}` : 'musl';
}

/**
 * Loads the addon binary from `root` (default: this package). Cached after the first success.
 * @throws LlamaDialogError NativeBinaryMissing naming platform, arch, libc, Node version and the build command.
 */
export function loadNativeAddon(root?: string): NativeAddon {
  if (cached && root === undefined) return cached;
  const from = root ?? packageRoot();
  const nodeGypBuild = require('node-gyp-build') as (dir: string) => unknown;
  let addon: NativeAddon;
  try {
    addon = nodeGypBuild(from) as NativeAddon;
  } catch (error) {
    throw new LlamaDialogError(
      'NativeBinaryMissing',
      `no llama-dialog native binary for ${process.platform}-${process.arch} (libc: ${describeLibc()}, ` +
        `Node ${process.version}, ABI ${process.versions.modules}) under ${from}. ` +
        'Build it from source with "npm run build:native" (needs cmake and a C++ compiler).',
      { cause: error },
    );
  }
  if (root === undefined) cached = addon;
  return addon;
}
