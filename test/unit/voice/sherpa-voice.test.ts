// The sherpa-onnx loader and voice with the module replaced through the injectable resolver: an absent package or
// binary gives TtsEngineUnavailable naming sherpa-onnx-node, the dlopen error is passed on, and requests are checked
// (speed 0.1–3.0, speaker) before any engine work. The real engine is test/real/voice-joe.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import { loadSherpaModule, sherpaPlatformPackage, type ModuleResolver, type SherpaModule, type SherpaOfflineTtsConfig } from '../../../src/voice/sherpa-loader.js';
import { checkSpeechRequest, createSherpaVoiceLoader, floatToPcm16 } from '../../../src/voice/sherpa-voice.js';
import { refusal, refusalCode } from '../../kits/refusal.js';
import { PIPER_SHERPA_METADATA, writeFakeEspeakData, writeFakeVoiceFolder } from '../../kits/voice-files.js';
import { ErrorCode } from '../../../src/errors.js';
import { deferred } from '../../kits/deferred.js';

const dir = mkdtempSync(join(tmpdir(), 'sherpa-voice-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const espeakData = writeFakeEspeakData(join(dir, 'espeak-ng-data'));
const voiceFolder = join(dir, 'voice');
writeFakeVoiceFolder(voiceFolder, { espeakData });

const notFound = (request: string): Error => Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' });

/** A resolver whose sherpa-onnx-node is `module` (no native code); `missing` names requests that do not resolve. */
function fakeResolver(module: SherpaModule, options: { missing?: string[]; dlopenError?: string } = {}): ModuleResolver {
  return {
    resolve(request) {
      if (options.missing?.some((prefix) => request.startsWith(prefix))) throw notFound(request);
      return `/fake/${request}`;
    },
    load(path) {
      if (path.endsWith('.node')) {
        if (options.dlopenError !== undefined) throw new Error(options.dlopenError);
        return {};
      }
      return module;
    },
  };
}

/** A fake engine: 100 samples of 0.5 per character, recording its configs. */
function fakeSherpa(configs: SherpaOfflineTtsConfig[] = []): SherpaModule {
  return {
    OfflineTts: {
      createAsync: async (config) => {
        configs.push(config);
        return { sampleRate: 22050, numSpeakers: 1, generateAsync: async ({ text }) => ({ samples: new Float32Array(text.length * 100).fill(0.5), sampleRate: 22050 }) };
      },
    },
  };
}

describe('sherpa-onnx loader', () => {
  it('an absent sherpa-onnx-node is TtsEngineUnavailable naming the package and how to install it', () => {
    const resolver = fakeResolver(fakeSherpa(), { missing: ['sherpa-onnx-node'] });
    expect(() => loadSherpaModule(resolver)).toThrow(/sherpa-onnx-node is not installed; install sherpa-onnx-node \(optional peer dependency\)/);
    expect(refusal(() => loadSherpaModule(resolver))).toBe('TtsEngineUnavailable');
  });

  it('an absent platform binary package is named', () => {
    const resolver = fakeResolver(fakeSherpa(), { missing: [sherpaPlatformPackage()] });
    expect(() => loadSherpaModule(resolver)).toThrow(new RegExp(`binary package ${sherpaPlatformPackage()} is not`));
  });

  it('the real dlopen error of the native library is passed on', () => {
    const resolver = fakeResolver(fakeSherpa(), { dlopenError: 'libonnxruntime.so: cannot open shared object file' });
    expect(() => loadSherpaModule(resolver)).toThrow(/does not load: libonnxruntime\.so: cannot open shared object file/);
  });

  it('the loader refuses before loading the voice when the engine is absent', async () => {
    const load = createSherpaVoiceLoader({ resolver: fakeResolver(fakeSherpa(), { missing: ['sherpa-onnx-node'] }) });
    expect(await refusalCode(load(voiceFolder, { threads: 1 }))).toBe(ErrorCode.TtsEngineUnavailable);
  });

  it('names platform packages the way sherpa does', () => {
    expect(sherpaPlatformPackage('win32', 'x64')).toBe('sherpa-onnx-win-x64');
    expect(sherpaPlatformPackage('linux', 'arm64')).toBe('sherpa-onnx-linux-arm64');
  });
});

describe('sherpa voice (fake engine)', () => {
  it('passes the folder\'s files, the voice\'s scales and the thread count to sherpa', async () => {
    const configs: SherpaOfflineTtsConfig[] = [];
    const voice = await createSherpaVoiceLoader({ resolver: fakeResolver(fakeSherpa(configs)) })(voiceFolder, { threads: 2 });
    expect(configs[0]).toMatchObject({ model: { vits: { model: join(voiceFolder, 'model.onnx'), tokens: join(voiceFolder, 'tokens.txt'), dataDir: espeakData, noiseScale: 0.667, noiseScaleW: 0.8, lengthScale: 1 }, numThreads: 2, provider: 'cpu' }, maxNumSentences: 1 });
    expect(voice.format).toEqual({ sampleRate: 22050, channels: 1, encoding: 's16le' });
    expect(voice.id).toMatch(/^[0-9a-f]{32}$/);
    const pcm = await voice.synthesize({ text: 'Hello.', speakerId: 0, speed: 2 });
    expect(pcm.length).toBe(300);
    expect(pcm[10]).toBe(Math.round(0.5 * 32767));
    await voice.dispose();
    expect(await refusalCode(voice.synthesize({ text: 'x', speakerId: 0, speed: 1 }))).toBe(ErrorCode.ObjectDisposed);
  });

  it.each([0, 0.09, 3.01, -1, Number.NaN, Number.POSITIVE_INFINITY])('speed %s is InvalidArgument', async (speed) => {
    expect(refusal(() => checkSpeechRequest({ text: 'a', speakerId: 0, speed }, 1))).toBe('InvalidArgument');
    const voice = await createSherpaVoiceLoader({ resolver: fakeResolver(fakeSherpa()) })(voiceFolder, { threads: 1 });
    expect(await refusalCode(voice.synthesize({ text: 'a', speakerId: 0, speed }))).toBe(ErrorCode.InvalidArgument);
  });

  it('speeds 0.1 and 3.0 are accepted; a speaker beyond the voice\'s is InvalidArgument', () => {
    expect(() => checkSpeechRequest({ text: 'a', speakerId: 0, speed: 0.1 }, 1)).not.toThrow();
    expect(() => checkSpeechRequest({ text: 'a', speakerId: 0, speed: 3 }, 1)).not.toThrow();
    expect(() => checkSpeechRequest({ text: 'a', speakerId: 1, speed: 1 }, 1)).toThrow(/speakerId must be an integer in 0–0/);
    expect(refusal(() => checkSpeechRequest({ text: 'a', speakerId: 0.5, speed: 1 }, 4))).toBe('InvalidArgument');
  });

  it('an aborted signal rejects Aborted without engine work', async () => {
    const voice = await createSherpaVoiceLoader({ resolver: fakeResolver(fakeSherpa()) })(voiceFolder, { threads: 1 });
    expect(await refusalCode(voice.synthesize({ text: 'a', speakerId: 0, speed: 1, signal: AbortSignal.abort() }))).toBe(ErrorCode.Aborted);
  });

  it('an engine failure is SpeechSynthesisFailed, and the queue goes on', async () => {
    let calls = 0;
    const failing: SherpaModule = {
      OfflineTts: {
        createAsync: async () => ({
          sampleRate: 22050,
          numSpeakers: 1,
          generateAsync: async () => {
            if (calls++ === 0) throw new Error('ORT failed');
            return { samples: new Float32Array(10), sampleRate: 22050 };
          },
        }),
      },
    };
    const voice = await createSherpaVoiceLoader({ resolver: fakeResolver(failing) })(voiceFolder, { threads: 1 });
    const first = voice.synthesize({ text: 'a', speakerId: 0, speed: 1 });
    const second = voice.synthesize({ text: 'b', speakerId: 0, speed: 1 });
    expect(await refusalCode(first)).toBe(ErrorCode.SpeechSynthesisFailed);
    expect((await second).length).toBe(10);
  });

  it('a job aborted while queued rejects at once and never reaches the engine; the running one completes', async () => {
    const gate = deferred<void>();
    const texts: string[] = [];
    const gated: SherpaModule = {
      OfflineTts: {
        createAsync: async () => ({
          sampleRate: 22050,
          numSpeakers: 1,
          generateAsync: async ({ text }) => {
            texts.push(text);
            if (text === 'first') await gate.promise;
            return { samples: new Float32Array(4), sampleRate: 22050 };
          },
        }),
      },
    };
    const voice = await createSherpaVoiceLoader({ resolver: fakeResolver(gated) })(voiceFolder, { threads: 1 });
    const controller = new AbortController();
    const first = voice.synthesize({ text: 'first', speakerId: 0, speed: 1 });
    const second = voice.synthesize({ text: 'second', speakerId: 0, speed: 1, signal: controller.signal });
    const third = voice.synthesize({ text: 'third', speakerId: 0, speed: 1 });
    controller.abort();
    // Rejected while 'first' still holds the engine (the gate is closed).
    expect(await refusalCode(second)).toBe(ErrorCode.Aborted);
    gate.resolve();
    expect((await first).length).toBe(4);
    expect((await third).length).toBe(4);
    expect(texts).toEqual(['first', 'third']);
  });

  it('every voice of a process gets the first voice\'s espeak-ng data dir (sherpa initialises espeak once)', async () => {
    const configs: SherpaOfflineTtsConfig[] = [];
    const load = createSherpaVoiceLoader({ resolver: fakeResolver(fakeSherpa(configs)) });
    await load(voiceFolder, { threads: 1 });
    const otherData = writeFakeEspeakData(join(dir, 'other-espeak'));
    const otherFolder = join(dir, 'other-voice');
    writeFakeVoiceFolder(otherFolder, { espeakData: otherData });
    await load(otherFolder, { threads: 1 });
    expect(configs.map((config) => config.model.vits.dataDir)).toEqual([espeakData, espeakData]);
    const germanFolder = join(dir, 'german-voice');
    writeFakeVoiceFolder(germanFolder, { espeakData: writeFakeEspeakData(join(dir, 'german-espeak'), ['de_dict']), manifest: { espeakVoice: 'de' }, metadata: { ...PIPER_SHERPA_METADATA, voice: 'de' } });
    await expect(load(germanFolder, { threads: 1 })).rejects.toThrow(/one espeak-ng data dir per process.*lacks de_dict/);
  });

  it('Float32 → Int16 clamps', () => {
    expect([...floatToPcm16(Float32Array.from([-2, -1, 0, 0.5, 1, 2]))]).toEqual([-32767, -32767, 0, 16384, 32767, 32767]);
  });

  it('threads must be a positive integer', async () => {
    const load = createSherpaVoiceLoader({ resolver: fakeResolver(fakeSherpa()) });
    await expect(load(voiceFolder, { threads: 0 })).rejects.toBeInstanceOf(LlamaDialogError);
  });
});
