/** Control of llama.cpp's own log output (silent by default). */
import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { loadNativeAddon } from './loader.js';

export type LlamaLogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const levelNumbers: Record<LlamaLogLevel, number> = { debug: 1, info: 2, warn: 3, error: 4, silent: 5 };
const levelNames: Record<number, LlamaLogLevel> = { 1: 'debug', 2: 'info', 3: 'warn', 4: 'error' };
const levelSchema = z.enum(['debug', 'info', 'warn', 'error', 'silent']);

/**
 * Lets llama.cpp / ggml messages at `level` or above through, to `sink` or else to stderr.
 * Process-wide. Default: 'silent'.
 * @throws LlamaDialogError InvalidArgument for an unknown level.
 */
export function setLlamaLogLevel(level: LlamaLogLevel, sink?: (level: LlamaLogLevel, text: string) => void): void {
  const parsed = levelSchema.safeParse(level);
  if (!parsed.success) throw new LlamaDialogError('InvalidArgument', `unknown log level ${String(level)}`, { cause: parsed.error });
  const addon = loadNativeAddon();
  addon.setLogCallback(sink ? (n, text) => sink(levelNames[n] ?? 'info', text) : null);
  addon.setLogLevel(levelNumbers[parsed.data]);
}
