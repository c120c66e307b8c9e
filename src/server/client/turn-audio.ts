import { LlamaDialogError } from '../../errors.js';
import type { TtsAudioFormatEvent } from '../../voice/speech-events.js';
import { writeWav } from '../../voice/wav-file.js';
import type { RemoteTtsAudioEvent, WireTurnEvent } from '../wire-events.js';

/** A turn's speech, collected: its format, every chunk in order, and all samples joined. */
export interface TurnAudio {
  /** The turn's `ttsAudioFormat`; undefined when the turn did not speak. */
  format: TtsAudioFormatEvent | undefined;
  chunks: RemoteTtsAudioEvent[];
  /** Every chunk's samples, in order (mono int16 at `format.sampleRate`). */
  pcm: Int16Array;
  /** The turn's last event. */
  complete: Extract<WireTurnEvent, { type: 'turnComplete' }>;
}

/**
 * Reads a turn to its end and collects its audio (a remote turn's events; an in-process turn's work too).
 * @throws LlamaDialogError MalformedMessage when the audio breaks the protocol's order (audio before its format, a seq
 *   out of place, a gap in the samples); the turn's refusal (AgentBusy, ...).
 */
export async function collectTurnAudio(turn: AsyncIterable<unknown>): Promise<TurnAudio> {
  let format: TtsAudioFormatEvent | undefined;
  const chunks: RemoteTtsAudioEvent[] = [];
  let samples = 0;
  for await (const item of turn) {
    const event = item as WireTurnEvent;
    if (event.type === 'ttsAudioFormat') {
      if (format) throw new LlamaDialogError('MalformedMessage', 'a second ttsAudioFormat in one turn');
      format = event;
    } else if (event.type === 'ttsAudio') {
      const chunk = event as RemoteTtsAudioEvent;
      if (!format) throw new LlamaDialogError('MalformedMessage', 'ttsAudio before the turn\'s ttsAudioFormat');
      // In-process events carry no seq; remote ones must follow on without gaps.
      if (chunk.seq !== undefined && (chunk.seq !== chunks.length || chunk.sampleOffset !== samples)) {
        throw new LlamaDialogError('MalformedMessage', `ttsAudio seq ${chunk.seq} at sample ${chunk.sampleOffset}; expected ${chunks.length} at ${samples}`);
      }
      chunks.push(chunk);
      samples += chunk.pcm.length;
    } else if (event.type === 'turnComplete') {
      const pcm = new Int16Array(samples);
      let at = 0;
      for (const chunk of chunks) {
        pcm.set(chunk.pcm, at);
        at += chunk.pcm.length;
      }
      return { format, chunks, pcm, complete: event };
    }
  }
  throw new LlamaDialogError('MalformedMessage', 'the turn ended without turnComplete');
}

/**
 * Reads a turn to its end and writes its audio to a WAV file (mono 16-bit at the turn's sample rate).
 * @returns the collected audio.
 * @throws LlamaDialogError InvalidArgument when the turn did not speak (no ttsAudioFormat); as collectTurnAudio; the write's error.
 */
export async function writeTurnWav(turn: AsyncIterable<unknown>, path: string): Promise<TurnAudio> {
  const audio = await collectTurnAudio(turn);
  if (!audio.format) throw new LlamaDialogError('InvalidArgument', `the turn ended (${audio.complete.status}) without speaking: no audio to write to ${path}`);
  await writeWav(path, audio.pcm, audio.format.sampleRate);
  return audio;
}
