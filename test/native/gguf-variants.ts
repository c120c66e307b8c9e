// Variants of existing GGUF files for tests of the native boundary: the same tensors (or none) with
// edited metadata, or with layer 0 repeated to make a deeper model. Written with the package's own
// GGUF writer, so the files are as valid as the synthetic test models.
import { readFile } from 'node:fs/promises';
import { readGgufFile } from '../../src/gguf/gguf-reader.js';
import type { GgufMetadataValue } from '../../src/gguf/gguf-types.js';
import { GgufWriter } from '../../src/gguf/gguf-writer.js';

export interface GgufEdit {
  /** Changes the metadata in place (keys keep their order; new keys go last). */
  metadata?: (metadata: Map<string, GgufMetadataValue>) => void;
  /** Repeats the tensors of block 0 for this many blocks (and sets `<arch>.block_count`). */
  layers?: number;
}

/** Writes `outPath`: `srcPath` with `edit` applied. */
export async function writeGgufVariant(srcPath: string, outPath: string, edit: GgufEdit): Promise<void> {
  const file = await readGgufFile(srcPath);
  const bytes = await readFile(srcPath);
  const metadata = new Map(file.metadata);
  const arch = metadata.get('general.architecture');
  if (edit.layers !== undefined && arch?.type === 'string') {
    metadata.set(`${arch.value}.block_count`, { type: 'uint32', value: edit.layers });
  }
  edit.metadata?.(metadata);

  const writer = new GgufWriter({ alignment: file.alignment });
  for (const [key, value] of metadata) {
    if (key !== 'general.alignment') writer.setMetadata(key, value);
  }
  const dataOf = (offset: number, size: number) =>
    new Uint8Array(bytes.buffer, bytes.byteOffset + file.dataOffset + offset, size);
  for (const tensor of file.tensors) {
    const block = /^blk\.(\d+)\.(.*)$/.exec(tensor.name);
    if (block !== null && edit.layers !== undefined) {
      if (block[1] !== '0') continue;
      for (let layer = 0; layer < edit.layers; layer++) {
        writer.addTensor({ name: `blk.${layer}.${block[2]}`, dims: tensor.dims, type: tensor.type, data: dataOf(tensor.offset, tensor.byteSize) });
      }
      continue;
    }
    writer.addTensor({ name: tensor.name, dims: tensor.dims, type: tensor.type, data: dataOf(tensor.offset, tensor.byteSize) });
  }
  await writer.write(outPath);
}
