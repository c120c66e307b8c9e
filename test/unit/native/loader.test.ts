// The loader's search order and its errors, on throw-away package folders (no binary is loaded).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import { locateNativeBinary } from '../../../src/native/loader.js';
import { platformPackageName } from '../../../src/native/platform-id.js';

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder that looks like an installed llama-dialog@`version`, with optional parts. */
function fakeInstall(version: string, parts: { sourceBuild?: boolean; platformVersion?: string; platformAddon?: boolean } = {}): string {
  const top = mkdtempSync(join(tmpdir(), 'llama-dialog-loader-'));
  folders.push(top);
  const root = join(top, 'node_modules', 'llama-dialog');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'llama-dialog', version }));
  if (parts.sourceBuild) {
    mkdirSync(join(root, 'build', 'Release'), { recursive: true });
    writeFileSync(join(root, 'build', 'Release', 'llama_dialog.node'), '');
  }
  if (parts.platformVersion !== undefined) {
    const dir = join(top, 'node_modules', ...platformPackageName().split('/'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: platformPackageName(), version: parts.platformVersion, exports: { './package.json': './package.json' } }),
    );
    if (parts.platformAddon !== false) writeFileSync(join(dir, 'llama-dialog.napi.node'), '');
  }
  return root;
}

function locateError(root: string, env: NodeJS.ProcessEnv = {}): LlamaDialogError {
  try {
    locateNativeBinary({ root, env });
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    return error as LlamaDialogError;
  }
  throw new Error('expected NativeBinaryMissing');
}

describe('native binary search order', () => {
  it('takes LLAMA_DIALOG_BINARY first, as a file or as a folder holding the addon', () => {
    const root = fakeInstall('1.2.3', { sourceBuild: true, platformVersion: '1.2.3' });
    const own = join(root, 'own');
    mkdirSync(own);
    writeFileSync(join(own, 'llama-dialog.napi.node'), '');
    expect(locateNativeBinary({ root, env: { LLAMA_DIALOG_BINARY: own } })).toEqual({ source: 'override', file: join(own, 'llama-dialog.napi.node') });
    expect(locateNativeBinary({ root, env: { LLAMA_DIALOG_BINARY: join(own, 'llama-dialog.napi.node') } }).source).toBe('override');
  });

  it('prefers a local source build over the platform package', () => {
    const root = fakeInstall('1.2.3', { sourceBuild: true, platformVersion: '1.2.3' });
    expect(locateNativeBinary({ root, env: {} })).toEqual({ source: 'source-build', file: join(root, 'build', 'Release', 'llama_dialog.node') });
  });

  it('then loads the platform package of exactly the same version', () => {
    const root = fakeInstall('1.2.3', { platformVersion: '1.2.3' });
    const location = locateNativeBinary({ root, env: {} });
    expect(location.source).toBe('platform-package');
    expect(location.packageName).toBe(platformPackageName());
    expect(location.file.endsWith('llama-dialog.napi.node')).toBe(true);
  });
});

describe('NativeBinaryMissing says what to fix', () => {
  it('a broken override path names the variable and the way back', () => {
    const root = fakeInstall('1.2.3', { sourceBuild: true });
    const error = locateError(root, { LLAMA_DIALOG_BINARY: '/nowhere/llama_dialog.node' });
    expect(error.errorName).toBe('NativeBinaryMissing');
    expect(error.message).toContain('LLAMA_DIALOG_BINARY=/nowhere/llama_dialog.node');
    expect(error.message).toContain('unset LLAMA_DIALOG_BINARY');
  });

  it('no binary at all names platform, libc, Node, the package to install and the source build', () => {
    const error = locateError(fakeInstall('1.2.3'));
    expect(error.errorName).toBe('NativeBinaryMissing');
    expect(error.message).toContain(`npm install ${platformPackageName()}@1.2.3`);
    expect(error.message).toContain(`${process.platform}-${process.arch}`);
    expect(error.message).toContain(process.version);
    expect(error.message).toContain('npx llama-dialog build-from-source');
    if (process.platform === 'linux') expect(error.message).toMatch(/libc: (glibc|musl)/);
  });

  it('a platform package of another version is refused, naming both versions', () => {
    const error = locateError(fakeInstall('1.2.3', { platformVersion: '1.2.4' }));
    expect(error.errorName).toBe('NativeBinaryMissing');
    expect(error.message).toContain('version 1.2.4 but llama-dialog is 1.2.3');
    expect(error.message).toContain(`${platformPackageName()}@1.2.3`);
  });

  it('a platform package without its addon file says to reinstall it', () => {
    const error = locateError(fakeInstall('1.2.3', { platformVersion: '1.2.3', platformAddon: false }));
    expect(error.message).toMatch(/holds no addon file; reinstall it/);
  });
});
