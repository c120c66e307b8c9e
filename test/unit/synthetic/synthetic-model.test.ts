import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { readGgufFile, type GgufFile } from '../../../src/gguf/gguf-reader.js';
import { elementCount, GgmlType, type GgufMetadataValue } from '../../../src/gguf/gguf-types.js';
import { GgufWriter } from '../../../src/gguf/gguf-writer.js';
import {
  chatTemplateForVocabulary,
  CHATML_CHAT_TEMPLATE,
  LLAMA3_CHAT_TEMPLATE,
  PLAIN_CHAT_TEMPLATE,
} from '../../../src/synthetic/synthetic-chat-template.js';
import { SYNTHETIC_PRESETS, writeSyntheticModel, type SyntheticModelInfo } from '../../../src/synthetic/synthetic-model.js';
import { fromFloat16Bits } from '../../../src/synthetic/synthetic-weights.js';
import { vocabPath } from '../../helpers/llama-cpp.js';
import { ensureTestModel } from '../../helpers/models.js';

const dir = mkdtempSync(join(tmpdir(), 'synthetic-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const conversation = [
  { role: 'system', content: 'You are a guard.' },
  { role: 'user', content: ' Hello ' },
  { role: 'assistant', content: 'Halt!' },
  { role: 'user', content: 'Why?' },
];

function render(template: string, extra: Record<string, unknown> = {}): string {
  return new Template(template).render({ messages: conversation, bos_token: '<BOS>', eos_token: '</s>', ...extra });
}

/**
 * Exact equality of two metadata values, fast for vocabulary-sized arrays (deep equality over 10^5
 * strings takes seconds): string arrays compare joined with NUL, typed arrays by their bytes.
 */
function expectSameValue(actual: GgufMetadataValue | undefined, expected: GgufMetadataValue, label: string): void {
  expect(actual?.type, label).toBe(expected.type);
  if (actual?.type !== 'array' || expected.type !== 'array') {
    expect(actual, label).toEqual(expected);
    return;
  }
  expect(actual.itemType, label).toBe(expected.itemType);
  expect(actual.value.length, label).toBe(expected.value.length);
  if (Array.isArray(actual.value) && Array.isArray(expected.value)) {
    expect(actual.value.join('\0'), label).toBe(expected.value.join('\0'));
  } else if (ArrayBuffer.isView(actual.value) && ArrayBuffer.isView(expected.value)) {
    const bytes = (view: ArrayBufferView) => Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    expect(bytes(actual.value).equals(bytes(expected.value)), label).toBe(true);
  } else {
    expect(actual, label).toEqual(expected);
  }
}

function tensorBytes(file: GgufFile, raw: Buffer, name: string): Buffer {
  const tensor = file.tensors.find((candidate) => candidate.name === name);
  if (tensor === undefined) throw new Error(`no tensor ${name}`);
  const start = file.dataOffset + tensor.offset;
  return raw.subarray(start, start + tensor.byteSize);
}

describe('chat templates for synthetic models', () => {
  it('Llama 3: BOS, header tokens, trimmed content, <|eot_id|>, generation prompt', () => {
    expect(render(LLAMA3_CHAT_TEMPLATE, { add_generation_prompt: true })).toBe(
      '<BOS><|start_header_id|>system<|end_header_id|>\n\nYou are a guard.<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\nHalt!<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nWhy?<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n',
    );
    expect(render(LLAMA3_CHAT_TEMPLATE, { add_generation_prompt: false })).toMatch(/Why\?<\|eot_id\|>$/);
  });

  it('ChatML renders what llama.cpp\'s built-in chatml formatter renders', () => {
    expect(render(CHATML_CHAT_TEMPLATE, { add_generation_prompt: true })).toBe(
      '<|im_start|>system\nYou are a guard.<|im_end|>\n<|im_start|>user\n Hello <|im_end|>\n' +
        '<|im_start|>assistant\nHalt!<|im_end|>\n<|im_start|>user\nWhy?<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('plain text renders what llama.cpp\'s built-in vicuna-orca formatter renders (EOS </s>)', () => {
    expect(render(PLAIN_CHAT_TEMPLATE, { add_generation_prompt: true })).toBe(
      'SYSTEM: You are a guard.\nUSER:  Hello \nASSISTANT: Halt!</s>\nUSER: Why?\nASSISTANT:',
    );
    const withTool = new Template(PLAIN_CHAT_TEMPLATE).render({
      messages: [{ role: 'tool', content: '42' }],
      eos_token: '</s>',
      add_generation_prompt: false,
    });
    expect(withTool).toBe('TOOL: 42\n');
  });

  it('carry the markers llama.cpp\'s llm_chat_detect_template keys on, and no earlier-matching ones', () => {
    // Detection order in llama-chat.cpp: <|im_start|> first, then [INST], ..., USER:/ASSISTANT: (vicuna),
    // ..., <|start_header_id|> + <|end_header_id|> (llama3).
    expect(CHATML_CHAT_TEMPLATE).toContain('<|im_start|>');
    expect(LLAMA3_CHAT_TEMPLATE).toContain('<|start_header_id|>');
    expect(LLAMA3_CHAT_TEMPLATE).toContain('<|end_header_id|>');
    expect(PLAIN_CHAT_TEMPLATE).toContain('SYSTEM: ');
    for (const template of [LLAMA3_CHAT_TEMPLATE, PLAIN_CHAT_TEMPLATE]) {
      for (const earlier of ['<|im_start|>', '[INST]', '<|assistant|>', "bos_token + message['role']", '<start_of_turn>']) {
        expect(template).not.toContain(earlier);
      }
    }
    expect(LLAMA3_CHAT_TEMPLATE).not.toMatch(/USER: |ASSISTANT: /);
  });

  it('picks the template from the vocabulary\'s special tokens', () => {
    expect(chatTemplateForVocabulary(['a', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>']).kind).toBe('llama3');
    expect(chatTemplateForVocabulary(['a', '<|im_start|>', '<|im_end|>']).kind).toBe('chatml');
    expect(chatTemplateForVocabulary(['<s>', '</s>', 'a']).kind).toBe('plain');
    expect(chatTemplateForVocabulary(['<|start_header_id|>', '<|im_start|>', '<|im_end|>']).kind).toBe('chatml');
  });
});

describe('writeSyntheticModel (tiny, llama-spm vocabulary)', () => {
  let info: SyntheticModelInfo;
  let file: GgufFile;
  let vocab: GgufFile;
  let raw: Buffer;

  beforeAll(async () => {
    info = await writeSyntheticModel({ vocabPath: vocabPath('llama-spm'), preset: 'tiny', outPath: join(dir, 'spm.gguf'), seed: 3 });
    file = await readGgufFile(info.path);
    vocab = await readGgufFile(vocabPath('llama-spm'));
    raw = readFileSync(info.path);
  });

  it('writes the llama hyperparameters under their llama.cpp key names', () => {
    const shape = SYNTHETIC_PRESETS.tiny;
    const value = (key: string) => file.metadata.get(key);
    expect(value('general.architecture')).toEqual({ type: 'string', value: 'llama' });
    expect(value('general.file_type')).toEqual({ type: 'uint32', value: 1 });
    expect(value('general.name')?.type).toBe('string');
    expect(value('llama.block_count')).toEqual({ type: 'uint32', value: shape.layers });
    expect(value('llama.context_length')).toEqual({ type: 'uint32', value: shape.contextLength });
    expect(value('llama.embedding_length')).toEqual({ type: 'uint32', value: shape.embeddingSize });
    expect(value('llama.feed_forward_length')).toEqual({ type: 'uint32', value: shape.feedForwardSize });
    expect(value('llama.attention.head_count')).toEqual({ type: 'uint32', value: shape.heads });
    expect(value('llama.attention.head_count_kv')).toEqual({ type: 'uint32', value: shape.kvHeads });
    expect(value('llama.rope.dimension_count')).toEqual({ type: 'uint32', value: shape.embeddingSize / shape.heads });
    expect(value('llama.rope.freq_base')).toEqual({ type: 'float32', value: shape.ropeFreqBase });
    expect(value('llama.attention.layer_norm_rms_epsilon')).toEqual({ type: 'float32', value: Math.fround(shape.rmsNormEpsilon) });
    expect(value('llama.vocab_size')).toEqual({ type: 'uint32', value: 32000 });
  });

  it('has exactly the tensors LLM_ARCH_LLAMA needs, in ggml dims order, with tied output', () => {
    const { embeddingSize: e, feedForwardSize: f, layers } = SYNTHETIC_PRESETS.tiny;
    const kv = (e / SYNTHETIC_PRESETS.tiny.heads) * SYNTHETIC_PRESETS.tiny.kvHeads;
    const expected: Array<[string, number[], number]> = [['token_embd.weight', [e, 32000], GgmlType.F16]];
    for (let i = 0; i < layers; i++) {
      expected.push(
        [`blk.${i}.attn_norm.weight`, [e], GgmlType.F32],
        [`blk.${i}.attn_q.weight`, [e, e], GgmlType.F16],
        [`blk.${i}.attn_k.weight`, [e, kv], GgmlType.F16],
        [`blk.${i}.attn_v.weight`, [e, kv], GgmlType.F16],
        [`blk.${i}.attn_output.weight`, [e, e], GgmlType.F16],
        [`blk.${i}.ffn_norm.weight`, [e], GgmlType.F32],
        [`blk.${i}.ffn_gate.weight`, [e, f], GgmlType.F16],
        [`blk.${i}.ffn_up.weight`, [e, f], GgmlType.F16],
        [`blk.${i}.ffn_down.weight`, [f, e], GgmlType.F16],
      );
    }
    expected.push(['output_norm.weight', [e], GgmlType.F32]);
    expect(file.tensors.map((tensor) => [tensor.name, tensor.dims, tensor.type])).toEqual(expected);
    expect(info.parameterCount).toBe(file.tensors.reduce((sum, tensor) => sum + elementCount(tensor.dims), 0));
    expect(info.fileSize).toBe(raw.byteLength);
    expect(info.vocabSize).toBe(32000);
  });

  it('copies every tokenizer key of the vocabulary unchanged and adds a plain chat template', () => {
    const copied = [...vocab.metadata].filter(([key]) => key.startsWith('tokenizer.'));
    expect(copied.length).toBeGreaterThan(4);
    for (const [key, value] of copied) expectSameValue(file.metadata.get(key), value, key);
    expect(info.bos).toBe(vocab.metadata.get('tokenizer.ggml.bos_token_id')?.value);
    expect(info.eos).toBe(vocab.metadata.get('tokenizer.ggml.eos_token_id')?.value);
    expect(info.chatTemplateKind).toBe('plain');
    expect(file.metadata.get('tokenizer.chat_template')).toEqual({ type: 'string', value: PLAIN_CHAT_TEMPLATE });
    expect(file.metadata.has('tokenizer.ggml.eot_token_id')).toBe(false);
  });

  it('sets norms to exactly 1 and draws matrices with unit-preserving spread', () => {
    const norm = tensorBytes(file, raw, 'blk.0.attn_norm.weight');
    expect([...new Float32Array(norm.buffer.slice(norm.byteOffset, norm.byteOffset + norm.byteLength))]).toEqual(
      new Array(SYNTHETIC_PRESETS.tiny.embeddingSize).fill(1),
    );
    const rms = (name: string): number => {
      const bytes = tensorBytes(file, raw, name);
      let sum = 0;
      for (let i = 0; i < bytes.byteLength; i += 2) sum += fromFloat16Bits(bytes.readUInt16LE(i)) ** 2;
      return Math.sqrt(sum / (bytes.byteLength / 2));
    };
    const e = SYNTHETIC_PRESETS.tiny.embeddingSize;
    expect(rms('token_embd.weight')).toBeCloseTo(1 / Math.sqrt(e), 2);
    expect(rms('blk.1.attn_q.weight')).toBeCloseTo(1 / Math.sqrt(e), 2);
    expect(rms('blk.1.ffn_down.weight')).toBeLessThan(rms('blk.1.ffn_up.weight'));
  });

  it('is deterministic for a seed and differs between seeds', async () => {
    const same = await writeSyntheticModel({ vocabPath: vocabPath('llama-spm'), preset: 'tiny', outPath: join(dir, 'spm-same.gguf'), seed: 3 });
    expect(readFileSync(same.path).equals(raw)).toBe(true);
    const other = await writeSyntheticModel({ vocabPath: vocabPath('llama-spm'), preset: 'tiny', outPath: join(dir, 'spm-other.gguf'), seed: 4 });
    const otherFile = await readGgufFile(other.path);
    const otherRaw = readFileSync(other.path);
    expect(tensorBytes(otherFile, otherRaw, 'token_embd.weight').equals(tensorBytes(file, raw, 'token_embd.weight'))).toBe(false);
    // Different tensors draw from different streams.
    expect(tensorBytes(file, raw, 'blk.0.attn_q.weight').equals(tensorBytes(file, raw, 'blk.1.attn_q.weight'))).toBe(false);
  });
});

describe('writeSyntheticModel with other vocabularies', () => {
  it('copies the Llama 3 tokenizer (llama-bpe) and adds a Llama 3 template with its end-of-turn id', async () => {
    const [model, vocab] = await Promise.all([ensureTestModel('tiny', 'llama-bpe').then(readGgufFile), readGgufFile(vocabPath('llama-bpe'))]);
    for (const [key, value] of vocab.metadata) {
      if (key.startsWith('tokenizer.')) expectSameValue(model.metadata.get(key), value, key);
    }
    const tokens = model.metadata.get('tokenizer.ggml.tokens');
    expect(tokens?.type === 'array' ? tokens.value.length : -1).toBe(128256);
    expect(model.metadata.get('tokenizer.ggml.bos_token_id')?.value).toBe(128000);
    expect(model.metadata.get('tokenizer.ggml.eos_token_id')?.value).toBe(128001);
    expect(model.metadata.get('tokenizer.ggml.eot_token_id')).toEqual({ type: 'uint32', value: 128009 });
    expect(model.metadata.get('tokenizer.chat_template')).toEqual({ type: 'string', value: LLAMA3_CHAT_TEMPLATE });
    expect(model.tensors.some((tensor) => tensor.name === 'output.weight')).toBe(false);
  });

  it('keeps a chat template the vocabulary already has (qwen2)', async () => {
    const vocab = await readGgufFile(vocabPath('qwen2'));
    const info = await writeSyntheticModel({ vocabPath: vocabPath('qwen2'), preset: 'tiny', outPath: join(dir, 'qwen2.gguf') });
    expect(info.chatTemplateKind).toBe('vocab');
    expect(info.chatTemplate).toBe(vocab.metadata.get('tokenizer.chat_template')?.value);
    expect(info.vocabSize).toBe(151936);
  });
});

describe('writeSyntheticModel output file', () => {
  it('lets concurrent writers of the same path both succeed and leaves one complete, valid file', async () => {
    const outPath = join(dir, 'shared.gguf');
    const options = { vocabPath: vocabPath('llama-spm'), preset: 'tiny' as const, outPath, seed: 5 };
    const [first, second] = await Promise.all([writeSyntheticModel(options), writeSyntheticModel(options)]);
    expect(first.fileSize).toBe(second.fileSize);
    const file = await readGgufFile(outPath);
    expect(file.fileSize).toBe(first.fileSize);
    expect(readdirSync(dir).filter((name) => name.startsWith('shared.gguf.'))).toEqual([]); // no temporary files left
  });
});

describe('writeSyntheticModel input errors', () => {
  it('rejects an unknown preset or a fractional seed with InvalidArgument and writes nothing', async () => {
    const outPath = join(dir, 'never.gguf');
    await expect(
      writeSyntheticModel({ vocabPath: vocabPath('llama-spm'), preset: 'huge' as 'tiny', outPath }),
    ).rejects.toSatisfy((error) => isLlamaDialogError(error, 'InvalidArgument') && /huge/.test((error as Error).message));
    await expect(
      writeSyntheticModel({ vocabPath: vocabPath('llama-spm'), preset: 'tiny', outPath, seed: 0.5 }),
    ).rejects.toSatisfy((error) => isLlamaDialogError(error, 'InvalidArgument'));
    expect(existsSync(outPath)).toBe(false);
  });

  it('rejects a missing vocabulary file (ModelLoadFailed) and a GGUF without tokens (InvalidArgument)', async () => {
    await expect(
      writeSyntheticModel({ vocabPath: join(dir, 'missing.gguf'), preset: 'tiny', outPath: join(dir, 'x.gguf') }),
    ).rejects.toSatisfy((error) => isLlamaDialogError(error, 'ModelLoadFailed'));
    const noTokens = join(dir, 'no-tokens.gguf');
    await new GgufWriter().setMetadata('general.architecture', { type: 'string', value: 'llama' }).write(noTokens);
    await expect(
      writeSyntheticModel({ vocabPath: noTokens, preset: 'tiny', outPath: join(dir, 'y.gguf') }),
    ).rejects.toSatisfy((error) => isLlamaDialogError(error, 'InvalidArgument') && /tokenizer\.ggml\.tokens/.test((error as Error).message));
  });
});
