// The C++ client's own checks, no server needed: frame encoding and decoding against literal bytes, request
// messages against SPEC §9's field names, and the Client against a scripted fake server (see
// test/e2e/cpp/client_self_test.cpp). A missing g++ fails this test with a message; it never skips.
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCppClientProgram, runProgram } from '../helpers/cpp-client-build.js';

let selfTest: string;

beforeAll(async () => {
  selfTest = await buildCppClientProgram('test/e2e/cpp/client_self_test.cpp', 'client_self_test', ['-pthread']);
});

describe('C++ client (llama_dialog_client.hpp) without a server', () => {
  it('passes every framing, message and scripted-server check', async () => {
    const result = await runProgram(selfTest, [], 60_000);
    const summary = /checks: (\d+), failed: (\d+)/.exec(result.stdout);
    expect(summary, `no summary line; stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).not.toBeNull();
    expect(result.stdout.split('\n').filter((line) => line.startsWith('FAILED'))).toEqual([]);
    expect(Number(summary![2])).toBe(0);
    // The program has this many checks today; fewer would mean a section stopped running.
    expect(Number(summary![1])).toBeGreaterThanOrEqual(138);
    expect(result.code).toBe(0);
  });
});
