import type { TokenizeOptions, Tokenizer } from '../../../src/engine/types.js';

/** Special tokens the fake vocabulary knows (ids 1..n in this order). */
export const FAKE_SPECIALS: readonly string[] = [
  '<s>',
  '</s>',
  '<|im_start|>',
  '<|im_end|>',
  '<|begin_of_text|>',
  '<|start_header_id|>',
  '<|end_header_id|>',
  '<|eot_id|>',
  '<start_of_turn>',
  '<end_of_turn>',
  '<|assistant|>',
  '<|end|>',
  '<|user|>',
  '<|system|>',
  '<bos>',
  '[INST]',
  '[/INST]',
  '<|turn>',
  '<turn|>',
  '<|channel>',
  '<channel|>',
  '<|START_OF_TURN_TOKEN|>',
  '<|END_OF_TURN_TOKEN|>',
  '<|SYSTEM_TOKEN|>',
  '<|USER_TOKEN|>',
  '<|CHATBOT_TOKEN|>',
];

/**
 * A deterministic tokenizer for tests and benchmarks. Text splits into whitespace runs and words; words longer than
 * four characters split into four-character pieces (roughly a real BPE's 4 characters per token). Special tokens are
 * recognised only with `parseSpecial`. Work is proportional to the text length, like a real tokenizer's.
 * The vocabulary grows as new pieces are seen, so detokenize is exact.
 */
export class FakeTokenizer implements Tokenizer {
  readonly bos: number;
  readonly eos: number;
  private readonly ids = new Map<string, number>();
  private readonly pieces: string[] = [''];
  private readonly specialPattern: RegExp;
  private readonly specialCount: number;
  calls = 0;

  constructor(private readonly options: { addBos?: boolean; specials?: readonly string[] } = {}) {
    const specials = options.specials ?? FAKE_SPECIALS;
    for (const special of specials) this.idOf(special);
    this.specialCount = specials.length;
    this.bos = this.ids.get('<s>') ?? -1;
    this.eos = this.ids.get('</s>') ?? -1;
    this.specialPattern = new RegExp(`(${specials.map((item) => item.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`);
  }

  get vocabSize(): number {
    return this.pieces.length;
  }

  tokenize(text: string, options: TokenizeOptions = {}): Int32Array {
    this.calls++;
    const out: number[] = [];
    if (options.addSpecial === true && this.options.addBos === true) out.push(this.bos);
    const chunks = options.parseSpecial === true ? text.split(this.specialPattern) : [text];
    chunks.forEach((chunk, index) => {
      if (options.parseSpecial === true && index % 2 === 1) {
        out.push(this.ids.get(chunk)!);
        return;
      }
      for (const match of chunk.matchAll(/\s+|[^\s]+/g)) {
        const word = match[0];
        for (let offset = 0; offset < word.length; offset += 4) out.push(this.idOf(word.slice(offset, offset + 4), true));
      }
    });
    return Int32Array.from(out);
  }

  detokenize(tokens: Int32Array, options: { renderSpecial?: boolean } = {}): string {
    let text = '';
    for (const token of tokens) {
      const piece = this.pieces[token];
      if (piece === undefined) throw new Error(`unknown token ${token}`);
      if (token <= this.specialCount && options.renderSpecial !== true) continue;
      text += piece;
    }
    return text;
  }

  private idOf(piece: string, plain = false): number {
    const key = plain ? `t:${piece}` : piece;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.pieces.length;
      this.pieces.push(piece);
      this.ids.set(key, id);
    }
    return id;
  }
}
