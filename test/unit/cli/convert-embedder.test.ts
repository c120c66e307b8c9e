// `llama-dialog convert-embedder` on a tiny BERT folder written here: a progress line, a summary, a GGUF; wrong
// command lines exit 2, inputs the converter refuses exit 1 with the reason.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCapturedCli } from '../../kits/captured-cli.js';
import { readGgufFile } from '../../../src/gguf/gguf-reader.js';
import { writeTinyBertFolder } from '../../kits/tiny-bert.js';

const dir = mkdtempSync(join(tmpdir(), 'convert-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = runCapturedCli;

describe('llama-dialog convert-embedder', () => {
  it('is listed, and prints its own help', async () => {
    expect((await cli('--help')).stdout).toMatch(/convert-embedder/);
    const help = await cli('convert-embedder', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--out <file>/);
    expect(help.stdout).toMatch(/--type <t>/);
  });

  it('converts a folder: progress on stderr, the path and a summary on stdout, an f16 GGUF when asked', async () => {
    const folder = join(dir, 'tiny');
    writeTinyBertFolder(folder);
    const out = join(dir, 'tiny.gguf');
    const result = await cli('convert-embedder', folder, '--out', out, '--type', 'f16', '--name', 'tiny');
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/convert-embedder .*MB/);
    expect(result.stdout).toMatch(new RegExp(`^${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`));
    expect(result.stdout).toMatch(/bert "tiny": 2 layers, 8 dims, 16 tokens, mean pooling, 37 tensors \(f16\)/);
    expect((await readGgufFile(out)).metadata.get('general.file_type')?.value).toBe(1);
  });

  it('a wrong command line exits 2; an input the converter refuses exits 1 with the reason and writes nothing', async () => {
    const noOut = await cli('convert-embedder', dir);
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toMatch(/out/);
    expect((await cli('convert-embedder', dir, '--out', join(dir, 'x.gguf'), '--type', 'q4')).code).toBe(2);
    expect((await cli('convert-embedder', '--out', join(dir, 'x.gguf'))).stderr).toMatch(/exactly one model folder, wheel or zip/);
    const refused = await cli('convert-embedder', join(dir, 'missing'), '--out', join(dir, 'x.gguf'));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/convert-embedder: .*missing does not exist/);
    expect(existsSync(join(dir, 'x.gguf'))).toBe(false);
  });
});
