import { open } from 'node:fs/promises';
import { LlamaDialogError } from '../errors.js';

/**
 * Reads a whole file as strict UTF-8 (a leading BOM is dropped). The size is checked on the open handle before a
 * byte is read, so an oversized file costs no memory; a file that grows after that check is still cut off by the
 * same limit.
 * @throws LlamaDialogError InvalidKnowledgeBase (8003): a missing or unreadable file, one over `maxBytes`, bytes
 *   that are not UTF-8.
 */
export async function readUtf8File(path: string, maxBytes: number): Promise<string> {
  let bytes: Buffer;
  try {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      if (size > maxBytes) throw tooLarge(path, size, maxBytes);
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof LlamaDialogError) throw error;
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new LlamaDialogError('InvalidKnowledgeBase', `${path}: cannot read the file: ${reason}`, { cause: error });
  }
  if (bytes.length > maxBytes) throw tooLarge(path, bytes.length, maxBytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new LlamaDialogError('InvalidKnowledgeBase', `${path}: the file is not valid UTF-8 text`, { cause: error });
  }
}

/**
 * Reads a strict UTF-8 JSON file ({@link readUtf8File}).
 * @throws LlamaDialogError InvalidKnowledgeBase (8003), also when the text is not JSON.
 */
export async function readJsonFile(path: string, maxBytes: number): Promise<unknown> {
  const text = await readUtf8File(path, maxBytes);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new LlamaDialogError('InvalidKnowledgeBase', `${path}: not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

function tooLarge(path: string, size: number, maxBytes: number): LlamaDialogError {
  return new LlamaDialogError('InvalidKnowledgeBase', `${path}: the file has ${size} bytes; at most ${maxBytes} are read`);
}
