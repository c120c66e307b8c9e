// Beyond one machine (docs/SCALING.md): a session is one TCP connection, so HAProxy in TCP mode spreads sessions over
// `llama-dialog serve` processes. Two real servers (the CLI, SIGTERM and all) behind a real HAProxy: 20 sessions land
// on both; one server is stopped; its sessions move to the other through HAProxy, re-created from the snapshot they
// exported after their last turn, and their next turn sees exactly the prompt it would have seen without the move.
// HAProxy missing fails this test with the install command; it never skips (.ci/run installs it).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentOptions } from '../../src/agent/agent-options.js';
import type { TurnCompleteEvent, TurnEvent } from '../../src/agent/turn-events.js';
import type { DialogSnapshot } from '../../src/dialog/index.js';
import { connect, type RemoteAgent, type RemoteSession } from '../../src/server/client/index.js';
import { HaproxyProcess, freeLoopbackPort, loadBalancerConfig, requireHaproxy } from '../helpers/haproxy-process.js';
import { ensureTestModel } from '../helpers/models.js';
import { ServeProcess } from '../helpers/serve-process.js';

const SESSIONS = 20;
const SERVER_NAMES = ['serve1', 'serve2'] as const;
type ServerName = (typeof SERVER_NAMES)[number];
const STOPPED: ServerName = 'serve1';
const SURVIVOR: ServerName = 'serve2';

/** One Generate node, greedy, short replies: a turn costs a few milliseconds of the tiny model on one thread. */
const agentOptions: AgentOptions = {
  graph: {
    start: 'answer',
    nodes: [{ name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom, the blacksmith.', contextSize: 256, maxTokens: 6, temperature: 0 } }],
  },
  defaultModel: 'tiny',
  enableDiagnostics: true,
  engine: { threads: 1 },
};

/** Keeps the stopped server in its grace period: a paused turn counts as running until Resume. */
const holdOptions: AgentOptions = {
  graph: {
    start: 'wait',
    nodes: [
      { name: 'wait', type: 'Pause', params: {}, exits: { default: 'answer' } },
      { name: 'answer', type: 'Generate', params: { contextSize: 256, maxTokens: 2, temperature: 0 } },
    ],
  },
  defaultModel: 'tiny',
  engine: { threads: 1 },
};

/** Each session says its own lines, so a snapshot restored into the wrong session would change the prompt. */
function playerLines(session: number): string[] {
  return [`I am traveller ${session}. Good morning!`, `Traveller ${session} again: any swords for sale?`, `How much for two, traveller ${session} asks.`];
}

interface FinishedTurn {
  events: TurnEvent[];
  complete: TurnCompleteEvent;
  finalText: string;
}

/** One player's conversation: its session and agent now, the snapshot after each turn, and every finished turn. */
interface Conversation {
  index: number;
  session: RemoteSession;
  agent: RemoteAgent;
  server: ServerName;
  snapshots: DialogSnapshot[];
  turns: FinishedTurn[];
}

let folder: string;
const servers = new Map<ServerName, ServeProcess>();
/** Each server's copy of the model file, so the path ListModels reports names the server a session is on. */
const modelPathOf = new Map<string, ServerName>();
let haproxy: HaproxyProcess | undefined;
let balancerPort: number;
const openSessions: RemoteSession[] = [];

beforeAll(async () => {
  const model = await ensureTestModel('tiny');
  folder = mkdtempSync(join(tmpdir(), 'llama-dialog-balancer-'));
  await Promise.all(
    SERVER_NAMES.map(async (name) => {
      const dir = join(folder, name);
      mkdirSync(dir);
      copyFileSync(model, join(dir, 'tiny.gguf'));
      modelPathOf.set(join(dir, 'tiny.gguf'), name);
      writeFileSync(join(dir, 'catalog.json'), JSON.stringify({ tiny: { path: 'tiny.gguf' } }));
      servers.set(name, await ServeProcess.start({ catalogPath: join(dir, 'catalog.json'), graceMs: 30_000 }));
    }),
  );
});

afterAll(async () => {
  await Promise.allSettled(openSessions.map((session) => session.close()));
  await haproxy?.stop();
  // Every session is closed by now, so SIGTERM ends each server at once; a hung one fails the hook's timeout.
  await Promise.all([...servers.values()].map((server) => server.stop('SIGTERM')));
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** HAProxy in front of both servers, with its health checks passing on each. */
async function startBalancer(): Promise<HaproxyProcess> {
  balancerPort = await freeLoopbackPort();
  const statsSocket = join(folder, 'haproxy.sock');
  const config = loadBalancerConfig({
    listen: `127.0.0.1:${balancerPort}`,
    servers: Object.fromEntries(SERVER_NAMES.map((name) => [name, `127.0.0.1:${serverProcess(name).port}`])),
    statsSocket,
    // Fast checks so the stopped server is marked down within a fraction of a second (docs: 2s in production).
    checkInterval: '200ms',
  });
  const balancer = await HaproxyProcess.start({ folder, config, port: balancerPort, statsSocket });
  for (const name of SERVER_NAMES) await balancer.waitForServerStatus(name, 'UP');
  return balancer;
}

function serverProcess(name: ServerName): ServeProcess {
  const server = servers.get(name);
  if (!server) throw new Error(`${name} did not start`);
  return server;
}

async function openSession(port: number, gameName: string): Promise<RemoteSession> {
  const session = await connect('127.0.0.1', port);
  openSessions.push(session);
  return session.create({ gameName });
}

/**
 * Which server the session is on, asked of the server itself: ListModels reports the path of the loaded model, and
 * each server loads its own copy. (HAProxy's logs would name the server, but not which of our sessions it was.)
 */
async function serverOf(session: RemoteSession): Promise<ServerName> {
  const paths = (await session.listModels()).map((model) => model.path);
  const names = [...new Set(paths.map((path) => modelPathOf.get(path)))];
  if (names.length !== 1 || names[0] === undefined) throw new Error(`cannot tell the server from the loaded models ${JSON.stringify(paths)}`);
  return names[0];
}

/** Runs one turn to its end and checks the shape every turn has: one turnComplete, last, right after one final answer. */
async function runTurn(agent: RemoteAgent, text: string): Promise<FinishedTurn> {
  const events: TurnEvent[] = [];
  for await (const event of agent.sendMessage(text)) events.push(event);
  const completes = events.filter((event) => event.type === 'turnComplete');
  const finals = events.filter((event) => event.type === 'answerText' && event.isFinal);
  expect(completes, `turnComplete events of "${text}"`).toHaveLength(1);
  expect(events.at(-1)?.type).toBe('turnComplete');
  expect(finals, `final answers of "${text}"`).toHaveLength(1);
  expect(events.at(-2)).toBe(finals[0]);
  const complete = completes[0] as TurnCompleteEvent;
  expect(complete.status, `status of "${text}": ${complete.error?.message ?? ''}`).toBe('Success');
  const finalText = finals[0]?.type === 'answerText' ? finals[0].text : '';
  const deltas = events.flatMap((event) => (event.type === 'answerText' && event.isDelta ? [event.text] : []));
  expect(deltas.join('')).toBe(finalText);
  return { events, complete, finalText };
}

/** Runs the next of the player's lines and exports the dialog right after it, as the failover recipe does. */
async function nextTurn(conversation: Conversation): Promise<FinishedTurn> {
  const turn = await runTurn(conversation.agent, playerLines(conversation.index)[conversation.turns.length] as string);
  conversation.turns.push(turn);
  conversation.snapshots.push(await conversation.agent.exportDialog());
  return turn;
}

/** The parts of a dialog that reach a prompt (timestamps left out). */
function dialogContent(snapshot: DialogSnapshot): unknown {
  return snapshot.interactions.map((interaction) => ({
    userLine: interaction.userLine,
    replies: interaction.replies.map((reply) => ({ node: reply.node, text: reply.text, tokens: reply.tokens })),
  }));
}

/** The one Generate node's diagnostics of a turn. */
function answerNode(turn: FinishedTurn): NonNullable<TurnCompleteEvent['diagnostics']>['nodes'][number] {
  const node = turn.complete.diagnostics?.nodes.find((candidate) => candidate.name === 'answer');
  if (!node?.input || !node.cache) throw new Error(`no diagnostics for the answer node: ${JSON.stringify(turn.complete.diagnostics)}`);
  return node;
}

describe('sessions behind HAProxy (TCP mode) over two `llama-dialog serve` processes', () => {
  it('spreads 20 sessions over both; the sessions of a server stopped with SIGTERM move through HAProxy and continue with the same prompt', async () => {
    // In the test, not in beforeAll: a missing HAProxy must fail this test by name, not mark it skipped.
    requireHaproxy();
    haproxy = await startBalancer();

    // 1. Twenty players connect through HAProxy; each creates an agent and plays two turns, exporting after each.
    const conversations: Conversation[] = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, index) => {
        const session = await openSession(balancerPort, `player ${index}`);
        const agent = await session.createAgent(agentOptions);
        return { index, session, agent, server: await serverOf(session), snapshots: [], turns: [] };
      }),
    );
    await Promise.all(
      conversations.map(async (conversation) => {
        await nextTurn(conversation);
        await nextTurn(conversation);
      }),
    );
    const on = (name: ServerName): Conversation[] => conversations.filter((conversation) => conversation.server === name);
    for (const name of SERVER_NAMES) expect(on(name).length, `sessions on ${name}`).toBeGreaterThan(0);
    // HAProxy's own count of open sessions per server agrees with what the servers said (health checks are not sessions).
    const stats = await haproxy!.serverStats();
    for (const name of SERVER_NAMES) expect(stats.get(name)?.sessionsNow, `HAProxy's open sessions to ${name}`).toBe(on(name).length);

    const moving = on(STOPPED);
    const staying = on(SURVIVOR);
    // 2. The control: for each player that will move, the same conversation played live on the survivor, connected
    // to it directly. Its third turn is the one the player would have had if its server had never stopped.
    const controls: Conversation[] = await Promise.all(
      moving.map(async (player) => {
        const session = await openSession(serverProcess(SURVIVOR).port, `control of player ${player.index}`);
        const control: Conversation = { index: player.index, session, agent: await session.createAgent(agentOptions), server: SURVIVOR, snapshots: [], turns: [] };
        await nextTurn(control);
        await nextTurn(control);
        // Greedy decoding of the same model file: the control's dialog is the player's, reply tokens included.
        expect(dialogContent(control.snapshots[1]!), `control of player ${player.index}`).toEqual(dialogContent(player.snapshots[1]!));
        return control;
      }),
    );

    // 3. A turn paused on the stopped server (connected to it directly) keeps that server in its grace period, so the
    // moving players' next request meets ServerShuttingDown deterministically, before the connection closes.
    const holdSession = await openSession(serverProcess(STOPPED).port, 'hold');
    const holdAgent = await holdSession.createAgent(holdOptions);
    const held = holdAgent.sendMessage('Wait for me');
    for await (const event of held) if (event.type === 'paused') break;

    const stopped = serverProcess(STOPPED);
    const exitCode = stopped.stop('SIGTERM');
    await stopped.waitForLog(/shutting down: \d+ connection\(s\)/);
    await Promise.all(
      moving.map(async (player) => {
        const refused = player.agent.sendMessage(playerLines(player.index)[2] as string);
        await expect(refused).rejects.toMatchObject({ errorName: 'ServerShuttingDown', code: 2001 });
        // Refused before it started: no event at all, so nothing of that attempt can be counted twice.
        expect(refused.snapshot()).toEqual([]);
      }),
    );
    await holdAgent.resume();
    expect((await held).status).toBe('Success');
    // The grace period is over once no turn runs: the server closes every connection and exits 0.
    const closeReasons = await Promise.all(moving.map((player) => player.session.closed));
    for (const reason of closeReasons) expect(reason).toBe('the connection closed');
    expect(await exitCode).toBe(0);
    expect(stopped.stdout).toMatch(/stopped; models loaded: \d+ \(pinned: 0\), holders: 0/);
    // The agent went with its connection: using it again says so, which is what tells the client to move.
    await expect(moving[0]!.agent.sendMessage('still there?')).rejects.toMatchObject({ errorName: 'ConnectionClosed', code: 5010 });

    // 4. HAProxy's health check takes the stopped server out of rotation; then every moving player reconnects through
    // HAProxy, re-creates its agent from the snapshot it exported after turn 2, and plays turn 3.
    await haproxy!.waitForServerStatus(STOPPED, 'DOWN');
    await Promise.all(
      moving.map(async (player) => {
        player.session = await openSession(balancerPort, `player ${player.index}`);
        player.agent = await player.session.createAgent(agentOptions);
        await player.agent.importDialog(player.snapshots[1]);
        player.server = await serverOf(player.session);
        await nextTurn(player);
      }),
    );
    await Promise.all([...staying, ...controls].map((conversation) => nextTurn(conversation)));

    for (const player of moving) {
      expect(player.server, `player ${player.index} after the move`).toBe(SURVIVOR);
      const control = controls.find((candidate) => candidate.index === player.index)!;
      const moved = answerNode(player.turns[2]!);
      const live = answerNode(control.turns[2]!);
      // The prompt the survivor evaluated for the moved player is the one it evaluated for the live conversation:
      // every message, its text and its token count, in order.
      expect(moved.input!.prompt, `turn 3 prompt of player ${player.index}`).toEqual(live.input!.prompt);
      expect(moved.input!.promptTokens).toBe(live.input!.promptTokens);
      expect(player.turns[2]!.complete.diagnostics?.turn).toBe(2);
      expect(control.turns[2]!.complete.diagnostics?.turn).toBe(2);
      // Same prompt, greedy: same reply.
      expect(dialogContent(player.snapshots[2]!)).toEqual(dialogContent(control.snapshots[2]!));
      // No KV cache crosses servers: the moved prompt starts a new cache, which at most copies a prefix that another
      // agent on the survivor holds (the default shared context's spawn, named in sharedFrom); the live one reused its cache.
      expect(moved.cache!.causes).toEqual(['firstTurn']);
      expect(moved.cache!.reused).toBe(moved.cache!.sharedFrom?.tokens ?? 0);
      expect(moved.cache!.evaluated).toBe(moved.input!.promptTokens - moved.cache!.reused);
      expect(moved.cache!.reused).toBeLessThan(moved.input!.promptTokens);
      expect(live.cache!.reused).toBeGreaterThan(0);
    }
    // Every player has exactly three turns: none lost, none doubled, in the order they were said.
    for (const conversation of conversations) {
      expect(conversation.turns, `turns of player ${conversation.index}`).toHaveLength(3);
      expect(conversation.snapshots[2]!.interactions.map((interaction) => interaction.userLine)).toEqual(playerLines(conversation.index));
      expect(conversation.snapshots[2]!.interactions.map((interaction) => interaction.replies.length)).toEqual([1, 1, 1]);
    }
    for (const player of staying) expect(answerNode(player.turns[2]!).cache!.reused).toBeGreaterThan(0);
  });

});
