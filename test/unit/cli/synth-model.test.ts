import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { readGgufFile } from '../../../src/gguf/gguf-reader.js';
import { listVocabNames, resolveVocabPath } from '../../../src/synthetic/synthetic-vocab.js';
import { runCapturedCli } from '../../kits/captured-cli.js';
import { llamaCppDir, vocabPath } from '../../helpers/llama-cpp.js';

const dir = mkdtempSync(join(tmpdir(), 'synthetic-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = runCapturedCli;

describe('llama-dialog command dispatch', () => {
  it('lists commands and exits 2 without a command; exits 0 for --help', async () => {
    const bare = await cli();
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/Usage: llama-dialog <command>/);
    expect(bare.stderr).toMatch(/synth-model/);
    const help = await cli('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/synth-model/);
  });

  it('rejects an unknown command with a clear message and exit code 2', async () => {
    const result = await cli('frobnicate', '--x');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown command "frobnicate"/);
    expect(result.stderr).toMatch(/Commands:\n\s+synth-model/);
  });
});

describe('llama-dialog synth-model', () => {
  it('prints its own help', async () => {
    const result = await cli('synth-model', '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/--vocab/);
    expect(result.stdout).toMatch(/--preset/);
    expect(result.stdout).toMatch(/--seed/);
  });

  it('exits 2 naming the flag for unknown flags, missing or invalid values', async () => {
    const out = join(dir, 'bad.gguf');
    const cases: Array<[string[], RegExp]> = [
      [['--vocab', 'llama-spm', '--out', out, '--colour', 'red'], /Unknown option '--colour'/],
      [['--vocab', 'llama-spm'], /--out/],
      [['--vocab', 'llama-spm', '--out', out, '--preset', 'huge'], /--preset.*"tiny"\|"small"/],
      [['--vocab', 'llama-spm', '--out', out, '--seed', '1.5'], /--seed/],
      [['--vocab', 'llama-spm', '--out', out, '--seed', 'abc'], /--seed/],
      [['--vocab', 'llama-spm', '--out', out, 'stray'], /positional/i],
      [['--vocab', 'no-such-vocab', '--out', out], /unknown vocabulary "no-such-vocab"; known names: .*llama-bpe/],
    ];
    for (const [args, message] of cases) {
      const result = await cli('synth-model', ...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
    expect(existsSync(out)).toBe(false);
  });

  it('exits 2 when the output folder does not exist, 1 when the output cannot be written', async () => {
    const missingFolder = await cli('synth-model', '--vocab', 'llama-spm', '--out', join(dir, 'nowhere', 'x.gguf'));
    expect(missingFolder.code).toBe(2);
    expect(missingFolder.stderr).toMatch(/folder .*nowhere does not exist/);
    const notAFolder = join(dir, 'plain-file');
    writeFileSync(notAFolder, 'x');
    const blocked = await cli('synth-model', '--vocab', 'llama-spm', '--out', join(notAFolder, 'x.gguf'));
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toMatch(/ENOTDIR/);
    expect(blocked.stderr).not.toMatch(/unexpected error/);
  });

  it('exits 1 when the vocabulary is not a GGUF file', async () => {
    const result = await cli('synth-model', '--vocab', join(llamaCppDir(), 'models', 'ggml-vocab-llama-spm.gguf.inp'), '--out', join(dir, 'x.gguf'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/not a valid GGUF file/);
  });

  it('writes a model from a vocabulary name, with progress on stderr and a summary on stdout', async () => {
    const out = join(dir, 'tiny.gguf');
    const result = await cli('synth-model', '--vocab', 'llama-spm', '--out', out, '--preset', 'tiny', '--seed', '9');
    expect(result.stderr).toBe(result.stderr.split('\n').filter((line) => line === '' || line.startsWith('synth-model: ')).join('\n'));
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/synth-model: +0% /);
    expect(result.stderr).toMatch(/synth-model: 100% /);
    expect(result.stdout).toContain(out);
    expect(result.stdout).toMatch(/preset tiny, seed 9, vocabulary 32000 tokens/);
    expect(result.stdout).toMatch(/chat template: plain/);
    const file = await readGgufFile(out);
    expect(file.metadata.get('llama.block_count')?.value).toBe(2);
    expect(file.metadata.get('general.description')?.value).toMatch(/seed 9/);
  });
});

describe('vocabulary resolution', () => {
  it('maps a bare name into <llama.cpp>/models and passes paths through', () => {
    expect(resolveVocabPath('llama-bpe', llamaCppDir())).toBe(vocabPath('llama-bpe'));
    expect(resolveVocabPath('./some/file.gguf', llamaCppDir())).toBe('./some/file.gguf');
    expect(resolveVocabPath('custom.gguf', llamaCppDir())).toBe('custom.gguf');
    expect(listVocabNames(llamaCppDir())).toEqual(expect.arrayContaining(['llama-bpe', 'llama-spm', 'qwen2']));
  });

  it('explains where it looked when the llama.cpp folder has no vocabularies', () => {
    let caught: unknown;
    try {
      resolveVocabPath('llama-bpe', join(dir, 'no-llama'));
    } catch (error) {
      caught = error;
    }
    expect(isLlamaDialogError(caught, 'InvalidArgument')).toBe(true);
    expect((caught as Error).message).toMatch(/fetch:llama.*LLAMA_CPP_DIR/);
  });
});
