// changeTempo: the length follows 1/speed exactly and the pitch stays (a 200 Hz tone keeps its zero-crossing rate).
import { describe, expect, it } from 'vitest';
import { changeTempo } from '../../../src/voice/time-stretch.js';

const RATE = 22050;

function tone(seconds: number, hz: number): Float32Array {
  const samples = new Float32Array(Math.round(seconds * RATE));
  for (let index = 0; index < samples.length; index++) samples[index] = 0.5 * Math.sin((2 * Math.PI * hz * index) / RATE);
  return samples;
}

/** Cycles per second, from upward zero crossings over the middle 80 % (the ends have half frames). */
function frequency(samples: Float32Array): number {
  const from = Math.floor(samples.length * 0.1);
  const to = Math.floor(samples.length * 0.9);
  let crossings = 0;
  for (let index = from + 1; index < to; index++) if (samples[index - 1]! < 0 && samples[index]! >= 0) crossings++;
  return crossings / ((to - from) / RATE);
}

describe('changeTempo', () => {
  it('speed 1 returns the input itself', () => {
    const input = tone(0.5, 200);
    expect(changeTempo(input, RATE, 1)).toBe(input);
  });

  it.each([0.1, 0.5, 1.5, 2, 3])('speed %s: length round(n / speed), pitch kept within 3 %%', (speed) => {
    const input = tone(1, 200);
    const output = changeTempo(input, RATE, speed);
    expect(output.length).toBe(Math.round(input.length / speed));
    expect(Math.abs(frequency(output) - 200) / 200).toBeLessThan(0.03);
    // No gain change: a steady tone keeps its peak.
    const peak = output.slice(Math.floor(output.length * 0.2), Math.floor(output.length * 0.8)).reduce((max, value) => Math.max(max, Math.abs(value)), 0);
    expect(peak).toBeGreaterThan(0.4);
    expect(peak).toBeLessThan(0.6);
  });

  it('empty input stays empty', () => {
    expect(changeTempo(new Float32Array(0), RATE, 2)).toHaveLength(0);
  });
});
