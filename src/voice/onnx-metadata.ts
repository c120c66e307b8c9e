/*
 * ONNX `ModelProto.metadata_props` (field 14, repeated StringStringEntryProto{1: key, 2: value}) read and appended
 * without an ONNX library. sherpa-onnx ends the process (_Exit) when a key it needs is missing, so this reader is
 * what stands between a user's file and that exit: it must refuse anything malformed with a typed error, never crash.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { LlamaDialogError } from '../errors.js';

/** ModelProto field numbers this module looks at. */
const GRAPH_FIELD = 7;
const METADATA_FIELD = 14;

/** Random access to the bytes of one file or buffer, so a 60 MB graph is skipped, never read. */
interface ByteSource {
  readonly size: number;
  read(position: number, length: number): Uint8Array;
}

function bufferSource(bytes: Uint8Array): ByteSource {
  return { size: bytes.length, read: (position, length) => bytes.subarray(position, position + length) };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function invalid(where: string, why: string): LlamaDialogError {
  return new LlamaDialogError('InvalidVoice', `${where} is not a valid ONNX model: ${why}. Export the model again or re-import the voice (llama-dialog voice import).`);
}

/** A protobuf cursor over a byte source; every read checks the bounds it was given. */
class ProtoCursor {
  constructor(
    private readonly source: ByteSource,
    public position: number,
    private readonly end: number,
    private readonly where: string,
  ) {}

  get done(): boolean {
    return this.position >= this.end;
  }

  /** Varints up to 2^53 (lengths and field numbers), with arithmetic rather than 32-bit shifts. */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let index = 0; index < 10; index++) {
      if (this.position >= this.end) throw invalid(this.where, `truncated varint at byte ${this.position}`);
      const byte = this.source.read(this.position++, 1)[0]!;
      value += (byte & 0x7f) * scale;
      if (value > Number.MAX_SAFE_INTEGER) throw invalid(this.where, `a varint at byte ${this.position} is too large`);
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    throw invalid(this.where, `a varint at byte ${this.position} is longer than 10 bytes`);
  }

  /** Start and length of the length-delimited value that follows, checked to lie inside this message. */
  delimited(): { start: number; length: number } {
    const length = this.varint();
    const start = this.position;
    if (length > this.end - start) throw invalid(this.where, `a field at byte ${start} claims ${length} bytes but only ${this.end - start} remain`);
    this.position = start + length;
    return { start, length };
  }

  /** Skips one value of the given wire type. Groups (3, 4) are not used by ONNX and are refused. */
  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.advance(8);
        return;
      case 2:
        this.delimited();
        return;
      case 5:
        this.advance(4);
        return;
      default:
        throw invalid(this.where, `wire type ${wireType} at byte ${this.position}`);
    }
  }

  private advance(count: number): void {
    if (count > this.end - this.position) throw invalid(this.where, `truncated fixed-width field at byte ${this.position}`);
    this.position += count;
  }

  /** The next field's number and wire type. */
  tag(): { field: number; wireType: number } {
    const tag = this.varint();
    const field = Math.floor(tag / 8);
    if (field === 0) throw invalid(this.where, `field number 0 at byte ${this.position}`);
    return { field, wireType: tag % 8 };
  }

  text(start: number, length: number): string {
    try {
      return strictUtf8.decode(this.source.read(start, length));
    } catch {
      throw invalid(this.where, `a metadata string at byte ${start} is not UTF-8`);
    }
  }
}

function readEntry(cursor: ProtoCursor, where: string): [string, string] {
  let key = '';
  let value = '';
  while (!cursor.done) {
    const { field, wireType } = cursor.tag();
    if ((field === 1 || field === 2) && wireType === 2) {
      const { start, length } = cursor.delimited();
      if (field === 1) key = cursor.text(start, length);
      else value = cursor.text(start, length);
    } else {
      cursor.skip(wireType);
    }
  }
  if (key === '') throw invalid(where, 'a metadata entry has no key');
  return [key, value];
}

function walkModel(source: ByteSource, where: string): Map<string, string> {
  if (source.size === 0) throw invalid(where, 'the file is empty');
  const cursor = new ProtoCursor(source, 0, source.size, where);
  const metadata = new Map<string, string>();
  let hasGraph = false;
  while (!cursor.done) {
    const { field, wireType } = cursor.tag();
    if (field === METADATA_FIELD) {
      if (wireType !== 2) throw invalid(where, `metadata_props with wire type ${wireType}`);
      const { start, length } = cursor.delimited();
      const [key, value] = readEntry(new ProtoCursor(source, start, start + length, where), where);
      // ONNX keeps the first of duplicate keys in practice (onnxruntime builds a map by insertion); so do we.
      if (!metadata.has(key)) metadata.set(key, value);
    } else {
      if (field === GRAPH_FIELD && wireType === 2) hasGraph = true;
      cursor.skip(wireType);
    }
  }
  // Random bytes can parse as protobuf by chance; a ModelProto without a graph is no model sherpa can run.
  if (!hasGraph) throw invalid(where, 'it has no graph (ModelProto field 7)');
  return metadata;
}

/**
 * The `metadata_props` of an ONNX model in memory, as a map (first value of a repeated key).
 * @throws LlamaDialogError InvalidVoice when the bytes are not a well-formed ModelProto (truncated, garbage, no graph).
 */
export function readOnnxMetadata(bytes: Uint8Array, where = 'the ONNX model'): Map<string, string> {
  return walkModel(bufferSource(bytes), where);
}

/**
 * The `metadata_props` of an ONNX file, reading only tags and metadata (the graph's bytes are skipped by offset).
 * @throws LlamaDialogError InvalidVoice when the file is missing, unreadable or not a well-formed ModelProto.
 */
export function readOnnxMetadataFile(path: string): Map<string, string> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new LlamaDialogError('InvalidVoice', `cannot open ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}); check the path`, { cause: error });
  }
  try {
    const size = fstatSync(fd).size;
    const scratch = Buffer.alloc(64 * 1024);
    const source: ByteSource = {
      size,
      read(position, length) {
        const out = length <= scratch.length ? scratch.subarray(0, length) : Buffer.alloc(length);
        let done = 0;
        while (done < length) {
          const got = readSync(fd, out, done, length - done, position + done);
          if (got === 0) throw invalid(path, `the file ends at byte ${position + done}`);
          done += got;
        }
        return out;
      },
    };
    return walkModel(source, path);
  } finally {
    closeSync(fd);
  }
}

function encodeVarint(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  while (rest > 127) {
    out.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

function encodeString(field: number, text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...encodeVarint(bytes.length)]), bytes]);
}

/** One metadata_props entry as it sits at the top level of a ModelProto. */
function encodeEntry(key: string, value: string): Buffer {
  const inner = Buffer.concat([encodeString(1, key), encodeString(2, value)]);
  return Buffer.concat([Buffer.from([(METADATA_FIELD << 3) | 2, ...encodeVarint(inner.length)]), inner]);
}

/**
 * The model with `entries` appended to its `metadata_props`. Protobuf concatenates repeated fields, so appending
 * top-level field-14 records is a valid edit that leaves every other byte as it was.
 * @throws LlamaDialogError InvalidVoice when the bytes are not a model, or a key is already present (a second value
 * would be ignored by readers that keep the first).
 */
export function appendOnnxMetadata(bytes: Uint8Array, entries: ReadonlyMap<string, string> | Readonly<Record<string, string>>, where = 'the ONNX model'): Buffer {
  const existing = readOnnxMetadata(bytes, where);
  const pairs = entries instanceof Map ? [...entries] : Object.entries(entries);
  const present = pairs.filter(([key]) => existing.has(key)).map(([key]) => key);
  if (present.length > 0) {
    throw new LlamaDialogError('InvalidVoice', `${where} already has metadata ${present.join(', ')}; refusing to add a second value`);
  }
  for (const [key] of pairs) {
    if (key === '') throw new LlamaDialogError('InvalidArgument', 'an ONNX metadata key must not be empty');
  }
  return Buffer.concat([bytes, ...pairs.map(([key, value]) => encodeEntry(key, value))]);
}
