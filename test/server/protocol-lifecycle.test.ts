// Lifecycle over the wire: a client killed mid-turn, server shutdown with and without the grace period, the limits,
// and the CLI's SIGTERM exit with nothing leaked.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/server/client/index.js';
import { repoRoot } from '../helpers/llama-cpp.js';
import { ensureTestModel } from '../helpers/models.js';
import { nextConnectionClosed, startTestServer } from './server-kit.js';
import { WireClient, checkTurnEvents, pauseThenGenerateGraph, shortGenerateGraph } from './wire-client.js';

const longGraph = shortGenerateGraph(400);

describe('protocol lifecycle', () => {
  it('a client killed mid-turn: its agents are destroyed at once, the other connection finishes normally', async () => {
    const kit = await startTestServer();
    try {
      const victim = await WireClient.ready(kit.port);
      const survivor = await WireClient.ready(kit.port);
      const victimAgent = await victim.sessionWithAgent(longGraph);
      const survivorAgent = await survivor.sessionWithAgent(shortGenerateGraph(8));
      const holdersWithBoth = kit.modelHolders();

      const victimTurn = await victim.startTurn(victimAgent, 'Tell me a long story');
      const survivorTurn = await survivor.startTurn(survivorAgent, 'Short one, please');
      await victim.waitFor((message) => message.type === 'AnswerText' && message.requestId === victimTurn);
      const closed = nextConnectionClosed(kit.server);
      const killedAt = performance.now();
      victim.socket.destroy();
      const event = await closed;
      const ms = performance.now() - killedAt;
      expect(event.reason).toMatch(/closed the connection|socket error/);
      // Generous bound (SPEC: within a second): the turn stops at its next token, the agent is then destroyed.
      expect(ms).toBeLessThan(1000);
      expect(kit.modelHolders()).toBe(holdersWithBoth - 1);
      expect(victim.received.some((message) => message.type === 'TurnComplete')).toBe(false);
      expect(checkTurnEvents(await survivor.turnEvents(survivorTurn)).status).toBe('Success');
      await survivor.close();
    } finally {
      await kit.server.close();
    }
    expect(kit.modelHolders()).toBe(0);
  });

  it('shutdown: new requests get 2001, a running turn finishes within the grace period, a paused one is cancelled after it', async () => {
    const kit = await startTestServer({ graceMs: 1500 });
    const streaming = await WireClient.ready(kit.port);
    const waiting = await WireClient.ready(kit.port);
    const streamingAgent = await streaming.sessionWithAgent(shortGenerateGraph(24));
    const waitingAgent = await waiting.sessionWithAgent(pauseThenGenerateGraph());
    const paused = await waiting.startTurn(waitingAgent, 'Wait for me');
    await waiting.waitFor((message) => message.type === 'Paused' && message.requestId === paused);
    const running = await streaming.startTurn(streamingAgent, 'Finish your sentence');
    await streaming.waitFor((message) => message.type === 'AnswerText' && message.requestId === running);

    const stopped = kit.server.close();
    expect(await streaming.request({ type: 'ListModels' })).toMatchObject({ code: 2001, name: 'ServerShuttingDown' });
    expect(await waiting.request({ type: 'SendMessage', agentId: waitingAgent, text: 'x' })).toMatchObject({ code: 2001 });
    await stopped;

    expect(checkTurnEvents(await streaming.turnEvents(running)).status).toBe('Success');
    expect(checkTurnEvents(await waiting.turnEvents(paused)).status).toBe('Cancelled');
    await Promise.all([streaming.closed, waiting.closed]);
    expect(kit.modelHolders()).toBe(0);
    await expect(WireClient.connect(kit.port)).rejects.toThrow();
  });

  it('the TypeScript client after its server shut down: agents refuse with ConnectionClosed (5010), a snapshot moves them to another server', async () => {
    const stopping = await startTestServer();
    const other = await startTestServer({}, stopping.harness);
    try {
      const session = await (await connect('127.0.0.1', stopping.port)).create({ gameName: 'failover' });
      const agentOptions = { graph: shortGenerateGraph(), defaultModel: 'tiny', engine: { threads: 1 } };
      const agent = await session.createAgent(agentOptions);
      const destroyedByHand = await session.createAgent(agentOptions);
      await destroyedByHand.destroy();
      expect((await agent.sendMessage('First line')).status).toBe('Success');
      const snapshot = await agent.exportDialog();

      await stopping.server.close();
      expect(await session.closed).toBe('the connection closed');
      expect(session.active).toBe(false);
      expect(agent.state).toBe('Destroyed');
      // Gone with the connection: the code says "reconnect", unlike an agent the program destroyed itself.
      await expect(agent.sendMessage('Second line')).rejects.toMatchObject({ errorName: 'ConnectionClosed', code: 5010 });
      await expect(agent.sendMessage('Second line')).rejects.toThrow(/reconnect and re-create it/);
      await expect(destroyedByHand.sendMessage('Second line')).rejects.toMatchObject({ errorName: 'AgentAlreadyDestroyed' });
      await expect(agent.exportDialog()).rejects.toMatchObject({ errorName: 'ConnectionClosed' });

      const moved = await (await connect('127.0.0.1', other.port)).create({ gameName: 'failover' });
      const again = await moved.createAgent(agentOptions);
      await again.importDialog(snapshot);
      expect((await again.sendMessage('Second line')).status).toBe('Success');
      expect((await again.exportDialog()).interactions.map((interaction) => interaction.userLine)).toEqual(['First line', 'Second line']);
      await moved.close();
    } finally {
      await Promise.all([stopping.server.close(), other.server.close()]);
    }
    expect(other.modelHolders()).toBe(0);
  });

  it('limits: connections (5007, closed), agents per session (5008), queued frames of a client that stops reading (5009)', async () => {
    const kit = await startTestServer({ maxConnections: 2, maxAgentsPerSession: 1, maxQueuedFrames: 8 });
    try {
      const first = await WireClient.ready(kit.port);
      const slow = await WireClient.ready(kit.port);
      const third = await WireClient.connect(kit.port);
      expect(await third.waitFor(() => true)).toMatchObject({ type: 'ErrorResponse', code: 5007, name: 'ConnectionLimitReached' });
      await third.closed;
      await expect(connect('127.0.0.1', kit.port)).rejects.toMatchObject({ code: 5007 });

      const agentId = await first.sessionWithAgent();
      expect(await first.request({ type: 'CreateAgent', graph: shortGenerateGraph(), defaultModel: 'tiny' })).toMatchObject({ code: 5008, name: 'AgentLimitReached' });

      // A client that stops reading while asking for big answers: once 8 frames wait, it is disconnected.
      const slowAgent = await slow.sessionWithAgent();
      const bigReply = 'x'.repeat(60_000);
      const turns = Array.from({ length: 12 }, (_, turn) => ({ userLine: `line ${turn}`, replies: [{ node: 'answer', text: bigReply }] }));
      await slow.ok({ type: 'SeedHistory', agentId: slowAgent, turns });
      slow.socket.pause();
      const closed = nextConnectionClosed(kit.server);
      for (let request = 0; request < 64; request += 1) slow.send({ type: 'ExportDialog', requestId: request, agentId: slowAgent });
      expect((await closed).reason).toMatch(/OutgoingQueueFull/);
      // Reading again, the slow client finds the answers that were queued, then the reason, then the end.
      slow.socket.resume();
      await slow.closed;
      expect(slow.received.at(-1)).toMatchObject({ type: 'ErrorResponse', code: 5009, name: 'OutgoingQueueFull' });
      expect(slow.received.filter((message) => message.type === 'Dialog').length).toBeLessThan(64);
      // The other connection never noticed: it still runs a turn.
      expect(checkTurnEvents(await first.turnEvents(await first.startTurn(agentId, 'Busy day?'))).status).toBe('Success');
      await first.close();
    } finally {
      await kit.server.close();
    }
  });

  it('`llama-dialog serve` exits 0 on SIGTERM after a running turn finished, with no model holder left', async () => {
    const modelPath = await ensureTestModel('tiny');
    const dir = mkdtempSync(join(tmpdir(), 'llama-dialog-serve-'));
    writeFileSync(join(dir, 'catalog.json'), JSON.stringify({ tiny: { path: modelPath } }));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'serve', '--port', '0', '--models', join(dir, 'catalog.json'), '--grace-ms', '20000'],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LLAMA_DIALOG_TOKEN: '' } },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /listening on 127\.0\.0\.1:(\d+)/.exec(stdout);
        if (match) resolve(Number(match[1]));
      });
      void exited.then(() => reject(new Error(`serve exited early: ${stderr}`)));
    });
    const client = await WireClient.ready(port);
    const agentId = await client.sessionWithAgent(shortGenerateGraph(16));
    const turn = await client.startTurn(agentId, 'Before closing time');
    await client.waitFor((message) => message.type === 'AnswerText' && message.requestId === turn);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(checkTurnEvents(await client.turnEvents(turn)).status).toBe('Success');
    expect(stdout).toMatch(/stopped; models loaded: \d+ \(pinned: 0\), holders: 0/);
    expect(stderr).toContain('SIGTERM: shutting down');
  });
});
