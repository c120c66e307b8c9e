// `llama-dialog voice`: listed with its subcommands; a missing or unknown subcommand and a bad command line exit 2;
// `voice import` on a stand-in Piper voice writes the folder and prints its summary. `voice say` needs the real
// engine: test/real/voice-joe.test.ts.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCapturedCli as cli } from '../../kits/captured-cli.js';
import { fakeOnnxModel, fakePiperConfig, writeFakeEspeakData } from '../../kits/voice-files.js';

const dir = mkdtempSync(join(tmpdir(), 'voice-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('llama-dialog voice', () => {
  it('is listed, and its subcommands print their help', async () => {
    expect((await cli('--help')).stdout).toMatch(/voice/);
    expect((await cli('voice', 'import', '--help')).stdout).toMatch(/--espeak-data <dir>/);
    expect((await cli('voice', 'say', '--help')).stdout).toMatch(/--speed <s>/);
  });

  it('a missing or unknown subcommand, or a bad command line, exits 2', async () => {
    const missing = await cli('voice');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing subcommand/);
    const unknown = await cli('voice', 'sing');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown subcommand "sing"/);
    expect((await cli('voice', 'say', 'folder', 'text')).code).toBe(2); // no --out
    expect((await cli('voice', 'say', 'folder', 'text', '--out', 'a.wav', '--speed', 'fast')).code).toBe(2);
    expect((await cli('voice', 'import')).code).toBe(2);
  });

  it('voice import writes a voice folder; a missing model exits 1 with the reason', async () => {
    const piper = join(dir, 'piper');
    mkdirSync(piper);
    writeFileSync(join(piper, 'en_US-test-medium.onnx'), fakeOnnxModel());
    writeFileSync(join(piper, 'en_US-test-medium.onnx.json'), JSON.stringify(fakePiperConfig()));
    const espeak = writeFakeEspeakData(join(dir, 'espeak-ng-data'));
    const out = join(dir, 'voice');
    const result = await cli('voice', 'import', join(piper, 'en_US-test-medium.onnx'), '--out', out, '--espeak-data', espeak);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/en_US-test-medium: 22050 Hz, 1 speaker\(s\), English \(espeak en-us\)/);
    expect(result.stderr).toMatch(/voice import: metadata: appended/);
    expect(existsSync(join(out, 'voice.json'))).toBe(true);
    const failed = await cli('voice', 'import', join(piper, 'absent.onnx'), '--out', join(dir, 'v2'), '--espeak-data', espeak);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/absent\.onnx\.json: the Piper config not found/);
  });
});
