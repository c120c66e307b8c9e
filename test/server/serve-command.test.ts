// `llama-dialog serve` as a command line: every limit is named in --help, and a non-loopback bind without a token
// is a usage error (the server never starts).
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
    for (const flag of ['--host', '--port', '--models', '--token', 'LLAMA_DIALOG_TOKEN', '--grace-ms', '--max-connections', '--max-agents', '--max-queued-frames']) {
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
});
