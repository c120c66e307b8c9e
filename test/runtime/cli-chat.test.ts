// `llama-dialog chat --graph` with a pausing graph, driven by scripted stdin on the real engine (issue 12, item 10).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { chatCommand } from '../../src/cli/commands/chat.js';
import { ExitCode } from '../../src/cli/command.js';
import { ensureTestModel } from '../kits/models.js';

let modelPath: string;
let graphPath: string;

beforeAll(async () => {
  modelPath = await ensureTestModel('tiny');
  graphPath = join(mkdtempSync(join(tmpdir(), 'llama-dialog-chat-')), 'graph.json');
  writeFileSync(
    graphPath,
    JSON.stringify({
      start: 'wait',
      nodes: [
        // pauseTimeoutMs 0 = wait forever: before the fix, chat never answered the pause and hung here.
        { name: 'wait', type: 'Pause', params: { pauseTimeoutMs: 0 }, exits: { default: 'answer' } },
        { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', contextSize: 256, maxTokens: 6, temperature: 0 } },
      ],
    }),
  );
});

async function chat(lines: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await chatCommand.run(
    { model: modelPath, graph: graphPath, threads: 1, diagnostics: false },
    { stdout: (text) => (stdout += text), stderr: () => undefined, stderrIsTty: false, stdin: Readable.from(lines) },
  );
  return { code, stdout };
}

describe('llama-dialog chat --graph with a pausing graph', () => {
  it('asks at each pause, resumes on Enter, and answers every line', async () => {
    const { code, stdout } = await chat(['Hello\n', '\n', 'Goodbye\n', '\n']);
    expect(code).toBe(ExitCode.Ok);
    expect(stdout.match(/\[paused at node wait: press Enter to continue\]/g)).toHaveLength(2);
    expect(stdout).toContain('[turn 2]');
    expect(stdout).not.toContain('[turn ended');
  });

  it('never hangs: the input ending during a pause cancels that turn and leaves', async () => {
    const { code, stdout } = await chat(['Hello\n']);
    expect(code).toBe(ExitCode.Ok);
    expect(stdout).toContain('[input ended while paused: cancelling the turn]');
    expect(stdout).toContain('[turn ended Cancelled]');
  });
});
