// The real voice (Piper en_US-joe-medium through sherpa-onnx): audible speech of plausible length at 22050 Hz, speed 2
// halving the duration, a CLI-written WAV that Python's wave module opens, a raw Piper model refused with a typed
// error (while sherpa itself, given that model, ends the process), and the per-voice queue: in order, one at a time,
// an abort mid-queue rejecting only its own job. No test asserts the audio itself or any timing.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, LlamaDialogError } from '../../src/errors.js';
import { appendOnnxMetadata, readOnnxMetadata } from '../../src/voice/onnx-metadata.js';
import type { ModuleResolver, SherpaModule, SherpaOfflineTts } from '../../src/voice/sherpa-loader.js';
import { createSherpaVoiceLoader, loadSherpaVoice } from '../../src/voice/sherpa-voice.js';
import type { TtsVoice } from '../../src/voice/tts-voice.js';
import { readVoiceFolder } from '../../src/voice/voice-folder.js';
import { runCapturedCli } from '../kits/captured-cli.js';
import { refusalCode } from '../kits/refusal.js';
import { PIPER_SHERPA_METADATA, fakeOnnxModel } from '../kits/voice-files.js';
import { realVoiceFolder } from './real-voice-kit.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'voice-joe-'));
const SENTENCE = 'Welcome to Harrowford, the finest smithy north of the river.';
let folder: string;
let voice: TtsVoice;

beforeAll(async () => {
  folder = await realVoiceFolder('joe-medium');
  voice = await loadSherpaVoice(folder, { threads: 1 });
});
afterAll(async () => {
  await voice?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function rms(pcm: Int16Array): number {
  let sum = 0;
  for (const sample of pcm) sum += (sample / 32768) ** 2;
  return Math.sqrt(sum / Math.max(1, pcm.length));
}

/** Share of 20 ms windows louder than -40 dBFS RMS: speech has most windows voiced or fricative, silence none. */
function activeShare(pcm: Int16Array, rate: number): number {
  const window = Math.round(rate * 0.02);
  let active = 0;
  let total = 0;
  for (let start = 0; start + window <= pcm.length; start += window, total++) if (rms(pcm.subarray(start, start + window)) > 0.01) active++;
  return active / Math.max(1, total);
}

function run(command: string, args: string[]): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(command, args, { cwd: root, timeout: 120_000 }, (error, stdout, stderr) => {
      done({ code: child.exitCode, signal: child.signalCode ?? (error as { signal?: string } | null)?.signal ?? null, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

describe('joe-medium through sherpa-onnx', () => {
  it('a sentence is audible speech at 22050 Hz, of plausible length per character', async () => {
    expect(voice.format).toEqual({ sampleRate: 22050, channels: 1, encoding: 's16le' });
    expect(voice.speakers).toBe(1);
    const pcm = await voice.synthesize({ text: SENTENCE, speakerId: 0, speed: 1 });
    const seconds = pcm.length / voice.format.sampleRate;
    // Read English runs at ~12–16 characters per second (60–85 ms each); Piper voices speak a little faster (this one
    // ~46 ms). 25–150 ms per character admits any natural pace and refuses silence, truncation and babbling loops.
    const msPerCharacter = (seconds * 1000) / SENTENCE.length;
    expect(msPerCharacter).toBeGreaterThan(25);
    expect(msPerCharacter).toBeLessThan(150);
    // Speech level: VITS output sits around -25 dBFS RMS; -40 dBFS (0.01) is a floor only silence or noise misses.
    expect(rms(pcm)).toBeGreaterThan(0.01);
    expect(activeShare(pcm, voice.format.sampleRate)).toBeGreaterThan(0.5);
  });

  it('speed 2 halves the duration (±20 %), speed 0.5 doubles it', async () => {
    const duration = async (speed: number): Promise<number> => {
      // The model's durations are stochastic (noise_w): two syntheses per speed average out most of it.
      let samples = 0;
      for (let index = 0; index < 2; index++) samples += (await voice.synthesize({ text: SENTENCE, speakerId: 0, speed })).length;
      return samples / 2;
    };
    const normal = await duration(1);
    const fast = (await duration(2)) / normal;
    expect(fast).toBeGreaterThan(0.4);
    expect(fast).toBeLessThan(0.6);
    const slow = (await duration(0.5)) / normal;
    expect(slow).toBeGreaterThan(1.6);
    expect(slow).toBeLessThan(2.4);
  });

  it('voice say writes a WAV that an independent reader (Python\'s wave module) opens', async () => {
    // soxi is not installed here (and not fetched in CI); python3 is, because the fetch script needs pip.
    const out = join(dir, 'say.wav');
    const result = await runCapturedCli('voice', 'say', folder, 'Mind the anvil, it is still hot.', '--out', out);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/duration \d+\.\d\d s, synthesis \d+ ms, RTF \d+\.\d{3}, 22050 Hz/);
    const read = await run('python3', ['-c', 'import json, sys, wave\nw = wave.open(sys.argv[1])\nprint(json.dumps([w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()]))', out]);
    expect(read.code).toBe(0);
    const [channels, width, rate, frames] = JSON.parse(read.stdout) as number[];
    expect([channels, width, rate]).toEqual([1, 2, 22050]);
    const printed = Number(/duration (\d+\.\d\d) s/.exec(result.stdout)![1]);
    expect(Math.abs(frames! / rate! - printed)).toBeLessThan(0.01);
  });

  describe('a raw Piper model (no sherpa metadata)', () => {
    let rawFolder: string;
    beforeAll(() => {
      // The imported model minus the metadata records import appended (same entries, same order): the raw Piper graph.
      const imported = readFileSync(join(folder, 'model.onnx'));
      const tail = appendOnnxMetadata(fakeOnnxModel(0), PIPER_SHERPA_METADATA).length - fakeOnnxModel(0).length;
      const raw = imported.subarray(0, imported.length - tail);
      expect(readOnnxMetadata(raw).has('comment')).toBe(false);
      rawFolder = join(dir, 'raw');
      mkdirSync(rawFolder);
      writeFileSync(join(rawFolder, 'model.onnx'), raw);
      copyFileSync(join(folder, 'tokens.txt'), join(rawFolder, 'tokens.txt'));
      copyFileSync(join(folder, 'voice.json'), join(rawFolder, 'voice.json'));
    });

    it('is InvalidVoice from the loader, and this process lives on', async () => {
      expect(await refusalCode(loadSherpaVoice(rawFolder, { threads: 1 }))).toBe(ErrorCode.InvalidVoice);
      expect((await voice.synthesize({ text: 'Still here.', speakerId: 0, speed: 1 })).length).toBeGreaterThan(0);
    });

    it('in a child process: our loader refuses it and the child exits normally; sherpa given it directly ends the process', async () => {
      const ours = join(dir, 'ours.mts');
      writeFileSync(
        ours,
        `import { loadSherpaVoice } from ${JSON.stringify(join(root, 'src/voice/sherpa-voice.ts'))};\n` +
          `try { await loadSherpaVoice(${JSON.stringify(rawFolder)}, { threads: 1 }); console.log('loaded'); } catch (error) { console.log(JSON.stringify({ code: error.code })); }\n` +
          `console.log('survived');\n`,
      );
      const child = await run(process.execPath, ['--import', 'tsx', ours]);
      expect(child.code).toBe(0);
      expect(child.stdout).toContain(JSON.stringify({ code: ErrorCode.InvalidVoice }));
      expect(child.stdout).toContain('survived');

      // Why the check exists: sherpa-onnx reads the missing metadata and exits the process (no JS error to catch).
      const checked = readVoiceFolder(folder);
      const direct = join(dir, 'direct.cjs');
      writeFileSync(
        direct,
        `const sherpa = require(${JSON.stringify(createRequire(import.meta.url).resolve('sherpa-onnx-node'))});\n` +
          `sherpa.OfflineTts.createAsync({ model: { vits: { model: ${JSON.stringify(join(rawFolder, 'model.onnx'))}, tokens: ${JSON.stringify(checked.tokensPath)}, dataDir: ${JSON.stringify(checked.espeakDataDir)} }, numThreads: 1, debug: false, provider: 'cpu' }, maxNumSentences: 1 })\n` +
          `  .then(() => console.log('survived'), (error) => console.log('threw ' + error.message));\n`,
      );
      const killed = await run(process.execPath, [direct]);
      expect(killed.stdout).not.toContain('survived');
      expect(killed.stdout).not.toContain('threw');
      expect(killed.code).not.toBe(0); // 255 with sherpa-onnx-node 1.13.8
      expect(killed.stderr).toMatch(/does not exist in the metadata/);
    });
  });

  describe('the per-voice queue', () => {
    /** The real sherpa module, its engines wrapped to log each generateAsync's start and end. */
    function recordingResolver(events: string[], onStart: (text: string) => void = () => {}): ModuleResolver {
      const real = createRequire(import.meta.url);
      return {
        resolve: (request) => real.resolve(request),
        load: (path) => {
          const module = real(path) as SherpaModule;
          if (path.endsWith('.node')) return module;
          return {
            OfflineTts: {
              createAsync: async (config) => {
                const engine = await module.OfflineTts.createAsync(config);
                const wrapped: SherpaOfflineTts = {
                  sampleRate: engine.sampleRate,
                  numSpeakers: engine.numSpeakers,
                  generateAsync: async (request) => {
                    events.push(`start ${request.text}`);
                    onStart(request.text);
                    try {
                      return await engine.generateAsync(request);
                    } finally {
                      events.push(`end ${request.text}`);
                    }
                  },
                };
                return wrapped;
              },
            },
          } satisfies SherpaModule;
        },
      };
    }

    it('4 syntheses queued at once run one at a time and complete in call order', async () => {
      const events: string[] = [];
      const queued = await createSherpaVoiceLoader({ resolver: recordingResolver(events) })(folder, { threads: 1 });
      try {
        const texts = ['One.', 'Two.', 'Three.', 'Four.'];
        const done: string[] = [];
        await Promise.all(texts.map((text) => queued.synthesize({ text, speakerId: 0, speed: 1 }).then(() => done.push(text))));
        expect(done).toEqual(texts);
        expect(events).toEqual(texts.flatMap((text) => [`start ${text}`, `end ${text}`]));
      } finally {
        await queued.dispose();
      }
    });

    it('aborting a queued job rejects it with Aborted; the jobs around it complete', async () => {
      const events: string[] = [];
      const controller = new AbortController();
      const queued = await createSherpaVoiceLoader({ resolver: recordingResolver(events, (text) => text === 'First.' && controller.abort()) })(folder, { threads: 1 });
      try {
        const first = queued.synthesize({ text: 'First.', speakerId: 0, speed: 1 });
        const second = queued.synthesize({ text: 'Second.', speakerId: 0, speed: 1, signal: controller.signal });
        // Its rejection comes while 'First.' runs: take it now, so it is never an unhandled rejection.
        const secondOutcome = second.then(() => 'resolved', (error: unknown) => error);
        const third = queued.synthesize({ text: 'Third.', speakerId: 0, speed: 1 });
        expect((await first).length).toBeGreaterThan(0);
        const outcome = await secondOutcome;
        expect(outcome).toBeInstanceOf(LlamaDialogError);
        expect((outcome as LlamaDialogError).errorName).toBe('Aborted');
        expect((await third).length).toBeGreaterThan(0);
        expect(events).toEqual(['start First.', 'end First.', 'start Third.', 'end Third.']);
      } finally {
        await queued.dispose();
      }
    });
  });
});
