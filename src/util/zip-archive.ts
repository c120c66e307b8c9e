import { readFile } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';
import { LlamaDialogError } from '../errors.js';

/** One member of a zip archive (a Python wheel is one). */
export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated; the only two methods wheels use. */
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;

/**
 * A zip archive held in memory: lists members and inflates one at a time. Enough for wheels (no zip64,
 * no encryption); anything else is refused with a clear error rather than misread.
 */
export class ZipArchive {
  private constructor(
    private readonly bytes: Buffer,
    private readonly label: string,
    readonly entries: readonly ZipEntry[],
  ) {}

  /** @throws LlamaDialogError `MalformedModelFile` when the file cannot be read or is not a zip archive this reader handles. */
  static async open(path: string): Promise<ZipArchive> {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      throw new LlamaDialogError('MalformedModelFile', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
    }
    return ZipArchive.fromBytes(bytes, path);
  }

  /** @throws LlamaDialogError `MalformedModelFile` for bytes that are not a zip archive this reader handles. */
  static fromBytes(bytes: Buffer, label = 'zip data'): ZipArchive {
    const fail = (problem: string): never => {
      throw new LlamaDialogError('MalformedModelFile', `${label} is not a readable zip archive: ${problem}`);
    };
    // The end record is 22 bytes plus a comment of up to 64 KiB: search backwards from the end.
    let end = -1;
    for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 0xffff); at--) {
      if (bytes.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) {
        end = at;
        break;
      }
    }
    if (end < 0) fail('no end-of-central-directory record (truncated, or not a zip)');
    const count = bytes.readUInt16LE(end + 10);
    const directoryOffset = bytes.readUInt32LE(end + 16);
    if (count === 0xffff || directoryOffset === 0xffffffff) fail('zip64 archives are not supported');
    const entries: ZipEntry[] = [];
    let at = directoryOffset;
    for (let i = 0; i < count; i++) {
      if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== CENTRAL_DIRECTORY_ENTRY) fail(`central directory entry ${i} is damaged`);
      const nameLength = bytes.readUInt16LE(at + 28);
      const extraLength = bytes.readUInt16LE(at + 30);
      const commentLength = bytes.readUInt16LE(at + 32);
      entries.push({
        name: bytes.toString('utf8', at + 46, at + 46 + nameLength),
        method: bytes.readUInt16LE(at + 10),
        compressedSize: bytes.readUInt32LE(at + 20),
        size: bytes.readUInt32LE(at + 24),
        localHeaderOffset: bytes.readUInt32LE(at + 42),
      });
      at += 46 + nameLength + extraLength + commentLength;
    }
    return new ZipArchive(bytes, label, entries);
  }

  /**
   * The uncompressed bytes of member `name`.
   * @throws LlamaDialogError `MalformedModelFile` when there is no such member or its data is damaged.
   */
  read(name: string): Buffer {
    const entry = this.entries.find((candidate) => candidate.name === name);
    const fail = (problem: string): never => {
      throw new LlamaDialogError('MalformedModelFile', `${this.label}: ${problem}`);
    };
    if (entry === undefined) return fail(`no member "${name}"`);
    const at = entry.localHeaderOffset;
    if (at + 30 > this.bytes.length || this.bytes.readUInt32LE(at) !== LOCAL_FILE_HEADER) fail(`the local header of "${name}" is damaged`);
    const start = at + 30 + this.bytes.readUInt16LE(at + 26) + this.bytes.readUInt16LE(at + 28);
    if (start + entry.compressedSize > this.bytes.length) fail(`"${name}" runs past the end of the archive (truncated?)`);
    const stored = this.bytes.subarray(start, start + entry.compressedSize);
    let data: Buffer;
    if (entry.method === 0) data = stored;
    else if (entry.method === 8) {
      try {
        data = inflateRawSync(stored);
      } catch (error) {
        return fail(`"${name}" does not inflate (${(error as Error).message})`);
      }
    } else return fail(`"${name}" uses compression method ${entry.method}; only stored and deflate are supported`);
    if (data.length !== entry.size) fail(`"${name}" inflated to ${data.length} bytes, the directory says ${entry.size}`);
    return data;
  }
}
