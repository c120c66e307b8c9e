// Tearing a JS environment down while a native call is in flight (issue 12 item 11): the process never
// aborts, and it does not wait for the whole generation. Each case runs in its own child process
// (test/model/children/teardown-child.cjs) whose generation asks for ~65k tokens, minutes of work on
// this model; the test's time limit is the bound, so finishing inside it means the work was aborted.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';

const childScript = fileURLToPath(new URL('./children/teardown-child.cjs', import.meta.url));
const CHILD_LIMIT_MS = 60_000;

interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runChild(mode: string, modelPath: string): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, mode, modelPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A child still running at the limit is killed, which the assertions below report as a failure.
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_LIMIT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('environment teardown with a generation in flight', () => {
  let modelPath: string;
  beforeAll(async () => {
    modelPath = await ensureTestModel('tiny');
  });

  it('process.exit() during a main-thread generation exits at once with its code', async () => {
    const outcome = await runChild('exit-main', modelPath);
    expect(outcome.stdout).toContain('EXITING');
    expect({ code: outcome.code, signal: outcome.signal, stderr: outcome.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  }, CHILD_LIMIT_MS + 10_000);

  it('worker.terminate() during a streaming generation neither aborts nor waits for it', async () => {
    const outcome = await runChild('terminate-stream', modelPath);
    expect(outcome.stdout).toMatch(/TERMINATED \d+/);
    expect({ code: outcome.code, signal: outcome.signal, stderr: outcome.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  }, CHILD_LIMIT_MS + 10_000);

  it('worker.terminate() during a non-streaming generation neither aborts nor waits for it', async () => {
    const outcome = await runChild('terminate-plain', modelPath);
    expect(outcome.stdout).toMatch(/TERMINATED \d+/);
    expect({ code: outcome.code, signal: outcome.signal, stderr: outcome.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  }, CHILD_LIMIT_MS + 10_000);

  it('worker.terminate() while four sequences of a shared context generate neither aborts nor waits for them', async () => {
    const outcome = await runChild('terminate-shared', modelPath);
    expect(outcome.stdout).toMatch(/TERMINATED \d+/);
    expect({ code: outcome.code, signal: outcome.signal, stderr: outcome.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  }, CHILD_LIMIT_MS + 10_000);

  it('a process whose shared context finished its work (never disposed) ends by itself', async () => {
    const outcome = await runChild('idle-shared', modelPath);
    expect(outcome.stdout).toContain('DONE 4');
    expect({ code: outcome.code, signal: outcome.signal, stderr: outcome.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  }, CHILD_LIMIT_MS + 10_000);

  it('process.exit() on the main thread while a worker generates exits at once with its code', async () => {
    const outcome = await runChild('exit-with-worker', modelPath);
    expect(outcome.stdout).toContain('EXITING');
    expect({ code: outcome.code, signal: outcome.signal, stderr: outcome.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  }, CHILD_LIMIT_MS + 10_000);
});
