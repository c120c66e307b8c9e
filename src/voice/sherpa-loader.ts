/*
 * Lazy loading of sherpa-onnx-node, an optional peer dependency: without it voices are unavailable, everything else
 * works. sherpa's own loader swallows the dlopen error of its native addon behind "set LD_LIBRARY_PATH"; we load the
 * platform package's .node ourselves first so the user sees the real reason (a missing libc, a wrong arch).
 */
import { createRequire } from 'node:module';
import { LlamaDialogError } from '../errors.js';

/** The npm package of the speech engine. */
export const SHERPA_PACKAGE = 'sherpa-onnx-node';

/** The parts of sherpa-onnx-node's OfflineTts config we use (the package ships JSDoc, no .d.ts). */
export interface SherpaOfflineTtsConfig {
  model: {
    vits: { model: string; tokens: string; dataDir: string; noiseScale: number; noiseScaleW: number; lengthScale: number; lexicon?: string };
    numThreads: number;
    debug: boolean;
    provider: 'cpu';
  };
  maxNumSentences: number;
  silenceScale?: number;
}

/** One generateAsync call. `onProgress` returning 0 asks the engine to stop before its next chunk. */
export interface SherpaGenerateRequest {
  text: string;
  sid: number;
  speed: number;
  onProgress?: (info: { samples: Float32Array; progress: number }) => number;
}

/** A loaded sherpa OfflineTts (freed by the GC when unreferenced: the wrapper has no free()). */
export interface SherpaOfflineTts {
  readonly sampleRate: number;
  readonly numSpeakers: number;
  generateAsync(request: SherpaGenerateRequest): Promise<{ samples: Float32Array; sampleRate: number }>;
}

/** The module surface we use. */
export interface SherpaModule {
  OfflineTts: { createAsync(config: SherpaOfflineTtsConfig): Promise<SherpaOfflineTts> };
}

/** How the loader finds and loads modules; tests inject one that simulates an absent package. */
export interface ModuleResolver {
  resolve(request: string): string;
  load(path: string): unknown;
}

const packageRequire = createRequire(import.meta.url);
const defaultResolver: ModuleResolver = { resolve: (request) => packageRequire.resolve(request), load: (path) => packageRequire(path) };

/** sherpa's name for this platform's binary package: `sherpa-onnx-linux-x64`, `sherpa-onnx-win-x64`, … */
export function sherpaPlatformPackage(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  return `sherpa-onnx-${platform === 'win32' ? 'win' : platform}-${arch}`;
}

const INSTALL_HINT = `install ${SHERPA_PACKAGE} (optional peer dependency) to use voices: npm install ${SHERPA_PACKAGE}`;

function isModuleNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND';
}

/**
 * sherpa-onnx-node, loaded now (synchronously, once per resolver).
 * @throws LlamaDialogError TtsEngineUnavailable naming the package when it is not installed, when no binary exists for
 * this platform, or with the real dlopen error when its native library does not load.
 */
export function loadSherpaModule(resolver: ModuleResolver = defaultResolver): SherpaModule {
  if (resolver === defaultResolver && cached !== undefined) return cached;
  try {
    resolver.resolve(SHERPA_PACKAGE);
  } catch (error) {
    throw new LlamaDialogError('TtsEngineUnavailable', `${SHERPA_PACKAGE} is not installed; ${INSTALL_HINT}`, { cause: error });
  }
  const platformPackage = sherpaPlatformPackage();
  let binary: string;
  try {
    binary = resolver.resolve(`${platformPackage}/sherpa-onnx.node`);
  } catch (error) {
    throw new LlamaDialogError(
      'TtsEngineUnavailable',
      isModuleNotFound(error)
        ? `${SHERPA_PACKAGE} is installed but its binary package ${platformPackage} is not (npm skipped the optional dependency, or sherpa ships none for ${process.platform}-${process.arch}); reinstall ${SHERPA_PACKAGE} without --no-optional`
        : `cannot resolve ${platformPackage}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  try {
    resolver.load(binary);
  } catch (error) {
    throw new LlamaDialogError('TtsEngineUnavailable', `the native library of ${SHERPA_PACKAGE} (${binary}) does not load: ${(error as Error).message}`, { cause: error });
  }
  let loaded: SherpaModule;
  try {
    loaded = resolver.load(resolver.resolve(SHERPA_PACKAGE)) as SherpaModule;
  } catch (error) {
    throw new LlamaDialogError('TtsEngineUnavailable', `${SHERPA_PACKAGE} does not load: ${(error as Error).message}`, { cause: error });
  }
  if (typeof loaded?.OfflineTts?.createAsync !== 'function') {
    throw new LlamaDialogError('TtsEngineUnavailable', `${SHERPA_PACKAGE} has no OfflineTts.createAsync; install ${SHERPA_PACKAGE} >= 1.13.4`);
  }
  if (resolver === defaultResolver) cached = loaded;
  return loaded;
}

let cached: SherpaModule | undefined;
