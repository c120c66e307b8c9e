// Download addresses: the hf: shorthand, plain URLs, and the file name each one is stored under in the cache.
import { describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { isModelUrl, parseModelUrl } from '../../../src/models/model-url.js';

function refusal(reference: string): string {
  try {
    parseModelUrl(reference);
  } catch (error) {
    expect(isLlamaDialogError(error, 'InvalidArgument'), String(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`"${reference}" was accepted`);
}

describe('parseModelUrl', () => {
  it('expands hf:<owner>/<repo>/<file> to the resolve/main address', () => {
    expect(parseModelUrl('hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/smollm2-135m-instruct-q8_0.gguf')).toEqual({
      url: 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/resolve/main/smollm2-135m-instruct-q8_0.gguf',
      fileName: 'smollm2-135m-instruct-q8_0.gguf',
    });
  });

  it('takes a revision after the repository; one with slashes is given percent-encoded and stays so', () => {
    expect(parseModelUrl('hf:owner/repo@v1.2/model.gguf').url).toBe('https://huggingface.co/owner/repo/resolve/v1.2/model.gguf');
    expect(parseModelUrl('hf:owner/repo@refs%2Fpr%2F3/model.gguf')).toMatchObject({
      url: 'https://huggingface.co/owner/repo/resolve/refs%2Fpr%2F3/model.gguf',
    });
  });

  it('keeps folders of the repository in the address and names the file by its last segment', () => {
    expect(parseModelUrl('hf:owner/repo/Q4_K_M/model part 1.gguf')).toEqual({
      url: 'https://huggingface.co/owner/repo/resolve/main/Q4_K_M/model%20part%201.gguf',
      fileName: 'model part 1.gguf',
    });
  });

  it('takes http and https URLs as they are, the file name decoded and the query ignored', () => {
    expect(parseModelUrl('http://127.0.0.1:8080/files/my%20model.gguf?download=1')).toEqual({
      url: 'http://127.0.0.1:8080/files/my%20model.gguf?download=1',
      fileName: 'my model.gguf',
    });
  });

  it('refuses incomplete shorthands, other schemes, and addresses without a safe file name', () => {
    expect(refusal('hf:owner/repo')).toContain('hf:<owner>/<repo>/<file>');
    expect(refusal('hf:owner/repo/')).toContain('hf:<owner>/<repo>/<file>');
    expect(refusal('hf:owner/repo/../../etc/passwd')).toContain('hf:<owner>/<repo>/<file>');
    expect(refusal('ftp://example.com/model.gguf')).toContain('ftp:');
    expect(refusal('not a url')).toContain('is not a URL');
    expect(refusal('https://example.com/models/')).toContain('file name');
    expect(refusal('https://example.com/models/%2e%2e')).toContain('file name');
    expect(refusal('https://example.com/a%2Fb')).toContain('file name');
    expect(refusal('https://example.com/.hidden')).toContain('file name');
  });
});

describe('isModelUrl', () => {
  it('tells addresses from catalog names and paths', () => {
    expect(isModelUrl('hf:o/r/f.gguf')).toBe(true);
    expect(isModelUrl('HTTPS://example.com/f.gguf')).toBe(true);
    expect(isModelUrl('smollm2')).toBe(false);
    expect(isModelUrl('./models/f.gguf')).toBe(false);
  });
});
