// native/text_stream.cpp through binding._internal, without a model: stop strings, held-back text, UTF-8 tails.
import { describe, expect, it } from 'vitest';
import { loadNativeAddon } from '../../src/native/loader.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (text: string) => encoder.encode(text);
const text = (array: Uint8Array) => decoder.decode(array);

function run(stops: string[], pieces: (string | Uint8Array)[]) {
  const result = loadNativeAddon()._internal.textStream(stops, pieces.map((p) => (typeof p === 'string' ? bytes(p) : p)));
  return {
    released: result.released.map(text),
    stopped: result.stopped,
    keptTokens: result.keptTokens,
    flushed: text(result.flushed),
    text: text(result.text),
  };
}

describe('TextStream (native/text_stream.cpp)', () => {
  it('releases every piece at once when there is no stop string', () => {
    expect(run([], ['Hel', 'lo', ' world'])).toEqual({
      released: ['Hel', 'lo', ' world'],
      stopped: false,
      keptTokens: 3,
      flushed: '',
      text: 'Hello world',
    });
  });

  it('cuts the text right before a stop string and keeps only the tokens that end before it', () => {
    const result = run(['</s>'], ['Hi', ' there', '</', 's>', 'never appended']);
    expect(result.stopped).toBe(true);
    expect(result.text).toBe('Hi there');
    expect(result.keptTokens).toBe(2);
    // '</' might have started the stop string: held back, never released
    expect(result.released).toEqual(['Hi', ' there', '', '']);
    expect(result.flushed).toBe('');
  });

  it('finds a stop string that starts inside an earlier piece', () => {
    const result = run(['STOP'], ['abcST', 'OPdef']);
    expect(result).toMatchObject({ stopped: true, text: 'abc', keptTokens: 0 });
    expect(result.released).toEqual(['abc', '']);
  });

  it('releases held-back text once it can no longer start a stop string', () => {
    const result = run(['<end>'], ['a<', 'x']);
    expect(result.released).toEqual(['a', '<x']);
    expect(result.stopped).toBe(false);
  });

  it('holds back half a UTF-8 character until the rest arrives', () => {
    const euro = bytes('€'); // 3 bytes
    const result = run([], [bytes('price '), euro.subarray(0, 2), euro.subarray(2)]);
    expect(result.released).toEqual(['price ', '', '€']);
    expect(result.text).toBe('price €');
  });

  it('flushes what is held back at the end of generation', () => {
    const result = run(['###'], ['answer#', '#']);
    expect(result.stopped).toBe(false);
    expect(result.released).toEqual(['answer', '']);
    expect(result.flushed).toBe('##');
  });

  it('stops at the earliest of several stop strings', () => {
    const result = run(['world', 'lo w'], ['hello world']);
    expect(result).toMatchObject({ stopped: true, text: 'hel', keptTokens: 0 });
  });
});
