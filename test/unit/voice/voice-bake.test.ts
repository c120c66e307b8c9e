import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AudioCache } from '../../../src/voice/audio-cache.js';
import { bakeLines, decodeVoiceBake, encodeVoiceBake, loadBakedLines, readVoiceBake, writeVoiceBake } from '../../../src/voice/voice-bake.js';
import { runVoiceBake } from '../../../src/cli/commands/voice-bake.js';
import type { CliIo } from '../../../src/cli/command.js';
import { ToneVoice, toneVoiceLoader } from '../../kits/tone-voice.js';

const LINES = ['Halt! Who goes there, stranger?', 'Move along, citizen.', 'Move along, citizen. The gate closes at dusk.'];

function capturedIo(): { io: CliIo; out: () => string; err: () => string } {
  let stdout = '';
  let stderr = '';
  return {
    io: { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), stderrIsTty: false },
    out: () => stdout,
    err: () => stderr,
  };
}

describe('.voicebake', () => {
  it('bakes each line sentence by sentence (once per distinct sentence) and reads back the same audio', async () => {
    const voice = new ToneVoice({ id: 'guard-v1', sampleRate: 22_050 });
    const bake = await bakeLines(voice, LINES, { speed: 1.25 });
    expect(bake.clips.map((clip) => clip.text)).toEqual(['Halt! Who goes there, stranger?', 'Move along, citizen.', 'The gate closes at dusk.']);
    expect(voice.calls).toHaveLength(3);
    const path = join(mkdtempSync(join(tmpdir(), 'voicebake-')), 'guard.voicebake');
    await writeVoiceBake(path, bake);
    const read = await readVoiceBake(path);
    expect(read).toEqual(bake);
    expect(read.clips[1]?.pcm).toEqual(voice.toneFor('Move along, citizen.', 0, 1.25));
    const cache = new AudioCache();
    expect(await loadBakedLines(path, cache, voice)).toBe(3);
    expect(cache.get({ voiceId: 'guard-v1', speakerId: 0, speed: 1.25, text: 'The gate closes at dusk.' })).toEqual(voice.toneFor('The gate closes at dusk.', 0, 1.25));
  });

  it('refuses a bake made with another voice, another sample rate, another version, and damaged files', async () => {
    const voice = new ToneVoice({ id: 'guard-v1' });
    const bake = await bakeLines(voice, ['Move along, citizen.']);
    const dir = mkdtempSync(join(tmpdir(), 'voicebake-'));
    const path = join(dir, 'guard.voicebake');
    await writeVoiceBake(path, bake);
    const cache = new AudioCache();
    await expect(loadBakedLines(path, cache, new ToneVoice({ id: 'other-v1' }))).rejects.toMatchObject({
      errorName: 'InvalidVoice',
      message: expect.stringContaining('another voice'),
    });
    await expect(loadBakedLines(path, cache, new ToneVoice({ id: 'guard-v1', sampleRate: 44_100 }))).rejects.toMatchObject({ errorName: 'InvalidVoice' });
    expect(cache.stats().entries).toBe(0);

    const bytes = readFileSync(path);
    const damaged = (mutate: (copy: Buffer) => Buffer): unknown => {
      try {
        return decodeVoiceBake(mutate(Buffer.from(bytes)));
      } catch (error) {
        return error;
      }
    };
    expect(damaged((copy) => copy.subarray(0, copy.length - 2))).toMatchObject({ errorName: 'InvalidVoice', message: expect.stringContaining('truncated') });
    expect(damaged((copy) => Buffer.concat([copy, Buffer.from([0, 0])]))).toMatchObject({ errorName: 'InvalidVoice' });
    expect(damaged((copy) => Buffer.from('RIFF....WAVEfmt '))).toMatchObject({ errorName: 'InvalidVoice', message: expect.stringContaining('magic') });
    const newer = encodeVoiceBake(bake).toString('latin1').replace('"version":1', '"version":9');
    expect(damaged(() => Buffer.from(newer, 'latin1'))).toMatchObject({ errorName: 'InvalidVoice', message: expect.stringContaining('version 9') });
  });

  it('llama-dialog voice bake writes a bake from a lines file with the voice loader', async () => {
    const voice = new ToneVoice({ id: 'guard-v1' });
    const { loadVoice, loads } = toneVoiceLoader({ [join('/voices', 'guard')]: voice });
    const dir = mkdtempSync(join(tmpdir(), 'voicebake-cli-'));
    writeFileSync(join(dir, 'lines.txt'), `${LINES[0]}\n\n${LINES[1]}\n`);
    writeFileSync(join(dir, 'lines.json'), JSON.stringify([LINES[1]]));
    const out = join(dir, 'guard.voicebake');
    const run = capturedIo();
    expect(await runVoiceBake(['/voices/guard', join(dir, 'lines.txt'), '--out', out, '--speed', '1.5'], run.io, loadVoice)).toBe(0);
    expect(run.out()).toContain('2 lines, 2 sentences');
    expect(loads).toEqual(['/voices/guard']);
    expect(voice.disposed).toBe(true);
    const bake = await readVoiceBake(out);
    expect(bake.clips.map((clip) => [clip.text, clip.speed])).toEqual([[LINES[0], 1.5], [LINES[1], 1.5]]);

    const json = capturedIo();
    expect(await runVoiceBake(['/voices/guard', join(dir, 'lines.json'), '--out', out], json.io, loadVoice)).toBe(0);
    expect((await readVoiceBake(out)).clips.map((clip) => clip.text)).toEqual([LINES[1]]);

    const badSpeed = capturedIo();
    expect(await runVoiceBake(['/voices/guard', join(dir, 'lines.txt'), '--out', out, '--speed', '4'], badSpeed.io, loadVoice)).toBe(2);
    const badVoice = capturedIo();
    expect(await runVoiceBake(['/voices/nope', join(dir, 'lines.txt'), '--out', out], badVoice.io, loadVoice)).toBe(1);
    expect(badVoice.err()).toContain('not a voice folder');
  });
});
