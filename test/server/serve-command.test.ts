// `llama-dialog serve` as a command line: every limit is named in --help, and a non-loopback bind without a token
// is a usage error (the server never starts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';

function collector(): { io: Parameters<typeof runCli>[1]; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    io: { stdout: (text) => (out += text), stderr: (text) => (err += text), stderrIsTty: false },
    out: () => out,
    err: () => err,
  };
}

describe('llama-dialog serve', () => {
  it('names every limit, the token and the grace period in --help, and is listed in the command list', async () => {
    const help = collector();
    expect(await runCli(['serve', '--help'], help.io)).toBe(0);
    for (const flag of ['--host', '--port', '--models', '--token', 'LLAMA_DIALOG_TOKEN', '--grace-ms', '--max-connections', '--max-agents', '--max-queued-frames', '--max-queued-bytes', '--storage-root']) {
      expect(help.out()).toContain(flag);
    }
    for (const code of ['5007', '5008', '5009']) expect(help.out()).toContain(code);
    const general = collector();
    await runCli(['--help'], general.io);
    expect(general.out()).toMatch(/serve\s+run agents for game engines/);
  });

  it('refuses a non-loopback host without a token, and bad limits, as usage errors', async () => {
    const saved = process.env.LLAMA_DIALOG_TOKEN;
    delete process.env.LLAMA_DIALOG_TOKEN;
    try {
      const open = collector();
      expect(await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], open.io)).toBe(2);
      expect(open.err()).toContain('needs a shared secret');
      const bad = collector();
      expect(await runCli(['serve', '--max-connections', '0'], bad.io)).toBe(2);
      expect(bad.err()).toContain('--max-connections');
    } finally {
      if (saved !== undefined) process.env.LLAMA_DIALOG_TOKEN = saved;
    }
  });

  it('refuses a catalog entry with neither a path nor a url, or a bad sha256, before listening', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'llama-dialog-catalog-'));
    try {
      const catalog = join(folder, 'catalog.json');
      writeFileSync(catalog, JSON.stringify({ npc: { pinned: true } }));
      const neither = collector();
      expect(await runCli(['serve', '--port', '0', '--models', catalog], neither.io)).toBe(2);
      expect(neither.err()).toContain('npc: give a path (a GGUF file) or a url to download it from');
      writeFileSync(catalog, JSON.stringify({ npc: { url: 'hf:owner/repo/npc.gguf', sha256: 'abc' } }));
      const badHash = collector();
      expect(await runCli(['serve', '--port', '0', '--models', catalog], badHash.io)).toBe(2);
      expect(badHash.err()).toContain('npc.sha256: must be 64 hex digits');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
