/*
 * The TtsVoice users get: a voice folder spoken by sherpa-onnx (VITS/Piper). Each synthesis is one generateAsync
 * call, which runs on a libuv pool thread with `threads` ORT threads: off the JS thread and off llama.cpp's compute
 * threads. Jobs of one voice run one at a time, in call order (a promise chain), because sherpa's OfflineTts is not
 * safe to run twice at once and a voice shared by many agents must not take more than its one strand.
 */
import { createHash } from 'node:crypto';
import { LlamaDialogError } from '../errors.js';
import { holdCoresBesideDecoding } from '../engine/decode-thread-cap.js';
import { missingEspeakFiles } from './espeak-data.js';
import { loadSherpaModule, type ModuleResolver, type SherpaOfflineTts } from './sherpa-loader.js';
import { changeTempo } from './time-stretch.js';
import type { PcmFormat, SpeechRequest, TtsVoice, VoiceLoader } from './tts-voice.js';
import { readVoiceFolder, type CheckedVoiceFolder } from './voice-folder.js';

/** Speed range of SpeechRequest (the reference's GenerateAndSpeak `speed` bounds). */
export const MIN_SPEECH_SPEED = 0.1;
export const MAX_SPEECH_SPEED = 3.0;

/** Options of {@link createSherpaVoiceLoader}. */
export interface SherpaVoiceLoaderOptions {
  /** espeak-ng data dir for every voice (default: voice.json's, else the shared one of espeak-data.ts). */
  espeakData?: string;
  /** Module resolution; tests inject one to simulate an absent package. */
  resolver?: ModuleResolver;
}

/** Float samples in [-1, 1] as signed 16-bit PCM (clamped: VITS output overshoots slightly on plosives). */
export function floatToPcm16(samples: Float32Array): Int16Array {
  const pcm = new Int16Array(samples.length);
  for (let index = 0; index < samples.length; index++) {
    const value = Math.max(-1, Math.min(1, samples[index]!));
    pcm[index] = Math.round(value * 32767);
  }
  return pcm;
}

/** Checks a request's speed and speaker against a voice. @throws LlamaDialogError InvalidArgument. */
export function checkSpeechRequest(request: SpeechRequest, speakers: number): void {
  if (typeof request.text !== 'string') throw new LlamaDialogError('InvalidArgument', 'text must be a string');
  if (typeof request.speed !== 'number' || !Number.isFinite(request.speed) || request.speed < MIN_SPEECH_SPEED || request.speed > MAX_SPEECH_SPEED) {
    throw new LlamaDialogError('InvalidArgument', `speed must be a number in ${MIN_SPEECH_SPEED}–${MAX_SPEECH_SPEED}, got ${String(request.speed)}`);
  }
  if (!Number.isInteger(request.speakerId) || request.speakerId < 0 || request.speakerId >= speakers) {
    throw new LlamaDialogError('InvalidArgument', `speakerId must be an integer in 0–${speakers - 1} (this voice has ${speakers} speaker${speakers === 1 ? '' : 's'}), got ${String(request.speakerId)}`);
  }
}

const aborted = (): LlamaDialogError => new LlamaDialogError('Aborted', 'speech synthesis aborted');
// A function, not an inline test: the signal changes while we await, which control-flow narrowing cannot see.
const isAborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

/** A voice folder loaded into sherpa-onnx. Create it with {@link loadSherpaVoice}. */
class SherpaVoice implements TtsVoice {
  readonly id: string;
  readonly format: PcmFormat;
  readonly speakers: number;
  private engine: SherpaOfflineTts | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;

  constructor(
    engine: SherpaOfflineTts,
    voice: CheckedVoiceFolder,
    /** ORT threads of this voice: the cores a synthesis takes. */
    private readonly threads: number,
  ) {
    this.engine = engine;
    this.format = { sampleRate: engine.sampleRate, channels: 1, encoding: 's16le' };
    this.speakers = voice.manifest.speakers;
    const { sha256, inference } = voice.manifest;
    // The files and the scales we pass decide the audio: a re-imported or re-tuned voice gets a new id.
    this.id = createHash('sha256').update(`${sha256.model}\n${sha256.tokens}\n${inference.noiseScale}/${inference.lengthScale}/${inference.noiseW}`).digest('hex').slice(0, 32);
  }

  synthesize(request: SpeechRequest): Promise<Int16Array> {
    if (this.disposed) return Promise.reject(new LlamaDialogError('ObjectDisposed', 'this voice was disposed'));
    try {
      checkSpeechRequest(request, this.speakers);
    } catch (error) {
      return Promise.reject(error);
    }
    const { signal } = request;
    if (signal?.aborted === true) return Promise.reject(aborted());
    let started = false;
    const job = this.queue.then(() => {
      started = true;
      return this.run(request);
    });
    this.queue = job.catch(() => undefined);
    if (signal === undefined) return job;
    // A job still waiting in the queue rejects at once when aborted (cancel must not wait for the sentences ahead of
    // it); it is skipped when its turn comes. A running job cannot be stopped mid-sentence: it rejects when it ends.
    return new Promise<Int16Array>((resolve, reject) => {
      const onAbort = (): void => {
        if (!started) reject(aborted());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      job.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private async run(request: SpeechRequest): Promise<Int16Array> {
    const { signal } = request;
    if (signal?.aborted === true) throw aborted();
    const engine = this.engine;
    if (engine === undefined) throw new LlamaDialogError('ObjectDisposed', 'this voice was disposed');
    // sherpa says "Failed to convert" and returns no samples for text with nothing to speak; skip the round trip.
    if (request.text.trim() === '') return new Int16Array(0);
    let result: { samples: Float32Array; sampleRate: number };
    // The synthesis takes this voice's threads of the machine: decodes use the cores left meanwhile.
    const releaseCores = holdCoresBesideDecoding(this.threads);
    try {
      // speed 1: the voice's own pace (its lengthScale, set at load). Tempo is changed afterwards, see time-stretch.ts.
      result = await engine.generateAsync({ text: request.text, sid: request.speakerId, speed: 1, onProgress: () => (isAborted(signal) ? 0 : 1) });
    } catch (error) {
      throw new LlamaDialogError('SpeechSynthesisFailed', `sherpa-onnx could not synthesize "${request.text.slice(0, 60)}": ${(error as Error).message}`, { cause: error });
    } finally {
      releaseCores();
    }
    if (isAborted(signal)) throw aborted();
    if (!(result?.samples instanceof Float32Array)) throw new LlamaDialogError('SpeechSynthesisFailed', 'sherpa-onnx returned no samples');
    return floatToPcm16(changeTempo(result.samples, this.format.sampleRate, request.speed));
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.queue;
    // The wrapper has no free(): dropping the last reference lets its finalizer free the model.
    this.engine = undefined;
  }
}

// sherpa-onnx initialises espeak-ng once per process, with the first voice's dataDir, and silently ignores the dir of
// every later voice. So the first dir is the process's, and a later voice is checked against it, not its own.
let espeakDataDirOfProcess: string | undefined;

function processEspeakDataDir(voice: CheckedVoiceFolder): string {
  if (espeakDataDirOfProcess === undefined) return voice.espeakDataDir;
  if (espeakDataDirOfProcess !== voice.espeakDataDir) {
    const missing = missingEspeakFiles(espeakDataDirOfProcess, voice.manifest.espeakVoice);
    if (missing.length > 0) {
      throw new LlamaDialogError(
        'InvalidVoice',
        `${voice.folder}: sherpa-onnx uses one espeak-ng data dir per process, ${espeakDataDirOfProcess} (the first voice's), which lacks ${missing.join(', ')} for this voice; give every voice the same complete data dir`,
      );
    }
  }
  return espeakDataDirOfProcess;
}

/**
 * A {@link VoiceLoader} for sherpa-onnx with fixed options. The folder is checked completely (readVoiceFolder) before
 * sherpa sees it, because sherpa exits the process on a bad model.
 */
export function createSherpaVoiceLoader(options: SherpaVoiceLoaderOptions = {}): VoiceLoader {
  return async (folder, { threads }) => {
    if (!Number.isInteger(threads) || threads < 1) throw new LlamaDialogError('InvalidArgument', `threads must be a positive integer, got ${String(threads)}`);
    const sherpa = loadSherpaModule(options.resolver);
    const voice = readVoiceFolder(folder, options.espeakData === undefined ? {} : { espeakData: options.espeakData });
    const dataDir = processEspeakDataDir(voice);
    const { inference } = voice.manifest;
    let engine: SherpaOfflineTts;
    try {
      engine = await sherpa.OfflineTts.createAsync({
        model: {
          vits: { model: voice.modelPath, tokens: voice.tokensPath, dataDir, noiseScale: inference.noiseScale, noiseScaleW: inference.noiseW, lengthScale: inference.lengthScale },
          numThreads: threads,
          debug: false,
          provider: 'cpu',
        },
        // One sentence per ORT run: our segmenter already hands over one sentence at a time.
        maxNumSentences: 1,
      });
    } catch (error) {
      throw new LlamaDialogError('InvalidVoice', `sherpa-onnx could not load ${voice.modelPath}: ${(error as Error).message}`, { cause: error });
    }
    // Recorded once sherpa has loaded a voice: that is when it initialised espeak-ng with this dir.
    espeakDataDirOfProcess ??= dataDir;
    if (engine.sampleRate !== voice.manifest.sampleRate) {
      throw new LlamaDialogError('InvalidVoice', `${voice.modelPath}: sherpa-onnx reports ${engine.sampleRate} Hz, voice.json says ${voice.manifest.sampleRate}; re-import the voice`);
    }
    return new SherpaVoice(engine, voice, threads);
  };
}

/**
 * Loads the voice folder `voice import` wrote into sherpa-onnx, with `threads` ORT threads (1 on small machines).
 * @throws LlamaDialogError InvalidVoice (any file wrong, before sherpa sees it), TtsEngineUnavailable (sherpa-onnx-node
 * not installed or its native library does not load; no espeak-ng data), InvalidArgument (threads).
 */
export const loadSherpaVoice: VoiceLoader = createSherpaVoiceLoader();
