// The C++ client's example (clients/cpp/example.cpp) built with g++ and run against the real server on the
// tiny synthetic model: connect, create a session and an agent, send a line, answer the graph's pause,
// print the streamed reply. The client was written from SPEC §9 alone, so this is the check that SPEC is
// enough to implement a client from. A missing g++ fails this test with a message; it never skips.
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelRegistry, createServer, loadModel, type DialogServer } from '../../src/index.js';
import { ensureTestModel } from '../helpers/models.js';
import { buildCppClientProgram, runProgram } from '../helpers/cpp-client-build.js';
import { FakeSpeakingAgent, SpeakingSession, defaultSpeechScript } from '../kits/speaking-session.js';
import type { TtsAudioEvent } from '../../src/voice/speech-events.js';

let example: string;
let liveTest: string;
let server: DialogServer | undefined;
let registry: ModelRegistry;
let port: number;

beforeAll(async () => {
  const modelPath = await ensureTestModel('tiny');
  // One compiler at a time: the machines that run this suite may have two cores.
  example = await buildCppClientProgram('clients/cpp/example.cpp', 'example');
  liveTest = await buildCppClientProgram('test/e2e/cpp/client_live_test.cpp', 'client_live_test');
  // A registry of its own, so the test can see that the client's session let go of every model it used.
  registry = new ModelRegistry({ loader: (options) => loadModel(options), catalog: { tiny: { path: modelPath } } });
  server = createServer({ host: '127.0.0.1', port: 0, session: { registry } });
  port = (await server.listen()).port;
});

afterAll(async () => {
  await server?.close();
});

/** The example's "key: value" lines. */
function outputLines(stdout: string): Map<string, string> {
  const lines = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon > 0) lines.set(line.slice(0, colon), line.slice(colon + 2));
  }
  return lines;
}

describe('C++ client example against the real server', () => {
  it('streams a non-empty answer equal to the final one, resumes the pause, and exits 0', async () => {
    const closed = once(server!, 'connectionClosed');
    const result = await runProgram(example, ['127.0.0.1', String(port), 'tiny', 'Good morning, Brom!'], 100_000);
    const context = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
    expect(result.code, context).toBe(0);

    const lines = outputLines(result.stdout);
    expect(lines.get('connected'), context).toMatch(/^protocol 2, server "\d+\.\d+\.\d+/);
    expect(lines.get('session'), context).toMatch(/\S/);
    const agentId = lines.get('agent');
    expect(agentId, context).toMatch(/\S/);

    // The pause came from the graph's Pause node, and the example's resume() was accepted.
    expect(lines.get('paused'), context).toBe('node think, reason pauseNode');
    expect(lines.get('resumed'), context).toBe(agentId);
    expect(lines.get('pauses'), context).toBe('1');

    // Printed as JSON strings, so any bytes the random-weight model writes survive the trip through stdout.
    const streamed = JSON.parse(lines.get('streamed') ?? 'null') as unknown;
    const answer = JSON.parse(lines.get('answer') ?? 'null') as unknown;
    expect(typeof streamed, context).toBe('string');
    expect((streamed as string).length, context).toBeGreaterThan(0);
    expect(streamed, context).toBe(answer);

    const status = /^Success, tokens (\d+)$/.exec(lines.get('status') ?? '');
    expect(status, context).not.toBeNull();
    expect(Number(status![1])).toBeGreaterThan(0);
    expect(lines.get('destroyed'), context).toBe(agentId);

    // The example closed its connection on exit; the server closed that session and nothing holds the model.
    const [event] = await closed;
    expect(event.remoteAddress).toMatch(/127\.0\.0\.1/);
    expect(server!.connectionCount).toBe(0);
    expect(registry.status().reduce((holders, model) => holders + model.users, 0)).toBe(0);
  });

  it('with a voice, writes the turn\'s audio as a WAV holding exactly the samples the agent spoke (fake speaking agent)', async () => {
    const speakers: FakeSpeakingAgent[] = [];
    const speaking = createServer({
      host: '127.0.0.1',
      port: 0,
      session: { registry },
      createSession: (host) => new SpeakingSession(host, defaultSpeechScript, ['joe-medium'], (agent) => speakers.push(agent)),
    });
    const speakingPort = (await speaking.listen()).port;
    try {
      const wavPath = join(mkdtempSync(join(tmpdir(), 'llama-dialog-cpp-wav-')), 'brom.wav');
      const result = await runProgram(example, ['127.0.0.1', String(speakingPort), 'tiny', 'Speak up!', 'joe-medium', wavPath], 100_000);
      const context = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
      expect(result.code, context).toBe(0);
      const emitted = speakers[0]!.emitted.filter((event): event is TtsAudioEvent => event.type === 'ttsAudio');
      const samples = emitted.flatMap((event) => Array.from(event.pcm));
      const lines = outputLines(result.stdout);
      expect(lines.get('audio'), context).toBe(`${samples.length} samples at 22050 Hz in ${emitted.length} chunks, 1 format event(s)`);
      expect(lines.get('wav'), context).toBe(wavPath);
      expect(lines.get('status'), context).toMatch(/^Success/);

      const wav = readFileSync(wavPath);
      expect([wav.toString('ascii', 0, 4), wav.toString('ascii', 8, 16), wav.toString('ascii', 36, 40)]).toEqual(['RIFF', 'WAVEfmt ', 'data']);
      expect([wav.readUInt16LE(20), wav.readUInt16LE(22), wav.readUInt32LE(24), wav.readUInt16LE(34)]).toEqual([1, 1, 22_050, 16]);
      expect(wav.readUInt32LE(40)).toBe(samples.length * 2);
      expect(wav.length).toBe(44 + samples.length * 2);
      const written = Array.from({ length: samples.length }, (_, i) => wav.readInt16LE(44 + i * 2));
      expect(written).toEqual(samples);
    } finally {
      await speaking.close();
    }
  });

  it('covers every request method and the SPEC refusals over the wire (test/e2e/cpp/client_live_test.cpp)', async () => {
    const closed = once(server!, 'connectionClosed');
    const result = await runProgram(liveTest, ['127.0.0.1', String(port), 'tiny'], 100_000);
    const context = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
    expect(result.stdout.split('\n').filter((line) => line.startsWith('FAILED')), context).toEqual([]);
    const summary = /checks: (\d+), failed: (\d+)/.exec(result.stdout);
    expect(summary, context).not.toBeNull();
    // The program has this many checks today; fewer would mean a section stopped running.
    expect(Number(summary![1])).toBeGreaterThanOrEqual(27);
    expect(Number(summary![2])).toBe(0);
    expect(result.code, context).toBe(0);
    await closed;
    expect(registry.status().reduce((holders, model) => holders + model.users, 0)).toBe(0);
  });
});
