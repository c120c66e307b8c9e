import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A stand-in llama-bench for tests: a shell script with `body` (which prints what llama-bench -o json would) in a
 * fresh temporary folder, returned with that folder for any files the script writes.
 */
export function writeFakeLlamaBench(body: string): { binary: string; folder: string } {
  const folder = mkdtempSync(join(tmpdir(), 'fake-llama-bench-'));
  const binary = join(folder, 'llama-bench');
  writeFileSync(binary, `#!/bin/sh\n${body}\n`);
  chmodSync(binary, 0o755);
  return { binary, folder };
}
