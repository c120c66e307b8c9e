/*
 * Cores held by work beside the models (a speech synthesis thread), and the cap that puts on every decode.
 *
 * Why: llama.cpp's threads meet at a barrier after every op, so when a synthesis thread takes one of the cores they
 * fill, each step waits for the thread that lost its core. Measured on 2 cores with SmolLM2-135M: 2 decode threads
 * fell from ~100 to ~38 tokens/s beside a synthesis, while 1 thread kept ~85. While cores are held, decodes use the
 * cores left (at least one, never more than their own thread count; native/decode_thread_cap.h applies it per step).
 */
import { availableParallelism } from 'node:os';
import type { NativeAddon } from '../native/binding.js';
import { loadNativeAddon } from '../native/loader.js';

let held = 0;

/** Decode threads allowed while `heldCores` are held on a machine of `cores`: 0 = no cap. */
export function decodeThreadCap(heldCores: number, cores: number): number {
  return heldCores > 0 ? Math.max(1, cores - heldCores) : 0;
}

/**
 * Holds `cores` for work beside the models until the returned release is called (idempotent): meanwhile every
 * decode of the process uses at most the cores left. Holds add up; the cap follows the total.
 */
export function holdCoresBesideDecoding(cores: number): () => void {
  held += cores;
  applyCap();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held -= cores;
    applyCap();
  };
}

/** The addon, or null when it does not load here: then nothing decodes and there is nothing to cap. */
let addon: NativeAddon | null | undefined;

function applyCap(): void {
  if (addon === undefined) {
    try {
      addon = loadNativeAddon();
    } catch {
      addon = null;
    }
  }
  addon?.setDecodeThreadCap(decodeThreadCap(held, availableParallelism()));
}
