/*
 * Pitch-preserving tempo change (WSOLA: waveform-similarity overlap-add) of synthesized speech.
 *
 * Why not the model's own length scale: a Piper/VITS model gives every input token a whole number of 256-sample
 * frames, at least one (ceil of the predicted duration), and Piper puts a pad token between every two phonemes. So
 * about half the tokens already sit at the one-frame floor and do not shrink: on joe-medium, speed 2 gave 0.63× the
 * speed-1 duration on a 60-character sentence, and no speed goes below ~0.48× (the floor, reached by speed 10). The
 * voice is therefore synthesized at its own pace and the tempo is changed here, exactly by `speed`.
 */

/** Frame of about 25 ms, overlap 50 %: the usual WSOLA choice for speech (pitch periods are 2–12 ms). */
const FRAME_SECONDS = 0.025;
/** Correlation on every 4th sample: a 4× cheaper search with no audible difference at speech rates. */
const CORRELATION_STEP = 4;

/**
 * `samples` played `speed` times faster (2 = half the duration), pitch kept. Output length is
 * `round(samples.length / speed)`. speed 1 returns the input unchanged.
 */
export function changeTempo(samples: Float32Array, sampleRate: number, speed: number): Float32Array {
  if (speed === 1 || samples.length === 0) return samples;
  const outputLength = Math.round(samples.length / speed);
  const frame = Math.max(16, Math.round(sampleRate * FRAME_SECONDS) & ~1);
  const synthesisHop = frame / 2;
  const analysisHop = synthesisHop * speed;
  const tolerance = Math.floor(synthesisHop / 2);
  const window = new Float32Array(frame);
  for (let index = 0; index < frame; index++) window[index] = 0.5 - 0.5 * Math.cos((2 * Math.PI * index) / frame);

  const output = new Float32Array(outputLength + frame);
  const weight = new Float32Array(outputLength + frame);
  // The input with silence around it, so the inner loops index without bounds checks (they are the whole cost).
  const margin = frame + tolerance + 2;
  const padded = new Float32Array(samples.length + 2 * margin + Math.ceil(analysisHop) + frame);
  padded.set(samples, margin);
  const lastStart = samples.length + margin;

  let previous = margin; // padded start of the frame placed last
  for (let outputStart = 0, index = 0; outputStart < outputLength; outputStart += synthesisHop, index++) {
    let start = Math.min(margin + Math.round(index * analysisHop), lastStart);
    if (index > 0) {
      // The frame that would naturally follow the last one placed; pick the candidate near `start` most like it,
      // so overlapping frames add in phase instead of cancelling. Coarse search on every 2nd offset, then the two
      // neighbours of the best: half the work of a full search.
      const natural = Math.min(previous + synthesisHop, lastStart);
      const similarity = (candidate: number): number => {
        let score = 0;
        // Only the half that will overlap the frame already placed decides whether they add in phase.
        for (let k = 0; k < synthesisHop; k += CORRELATION_STEP) score += padded[candidate + k]! * padded[natural + k]!;
        return score;
      };
      let best = start;
      let bestScore = -Infinity;
      for (let offset = -tolerance; offset <= tolerance; offset += 2) {
        const score = similarity(start + offset);
        if (score > bestScore) {
          bestScore = score;
          best = start + offset;
        }
      }
      for (const candidate of [best - 1, best + 1]) {
        const score = similarity(candidate);
        if (score > bestScore) {
          bestScore = score;
          best = candidate;
        }
      }
      start = best;
    }
    for (let k = 0; k < frame; k++) {
      output[outputStart + k]! += padded[start + k]! * window[k]!;
      weight[outputStart + k]! += window[k]!;
    }
    previous = start;
  }
  const result = new Float32Array(outputLength);
  for (let index = 0; index < outputLength; index++) {
    const w = weight[index]!;
    result[index] = w > 1e-3 ? output[index]! / w : output[index]!;
  }
  return result;
}
