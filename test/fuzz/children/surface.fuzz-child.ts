// The pure-TypeScript public surface under hostile input: Dialog mutators (a refused one leaves the dialog as it
// was), dialog snapshots with flipped bits and hostile fields, compileGraph with random graph JSON, and the CLI's
// command lines (runCli for unknown commands, parseCommandLine for every command). No model is needed, but it runs
// as a child like the rest of the tier, so that one harness reports every surface.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { Dialog } from '../../../src/dialog/dialog.js';
import { compileGraph } from '../../../src/graph/compile-graph.js';
import { nodeCatalog } from '../../../src/graph/node-catalog.js';
import { commands } from '../../../src/cli/commands/index.js';
import { parseCommandLine, runCli } from '../../../src/cli/run.js';
import { ExitCode } from '../../../src/cli/command.js';
import { FrameDecoder, decodeFramePayload, encodeFrame } from '../../../src/server/frame-codec.js';
import { FuzzRecorder, deepObject, hostileNumber, hostileString, hostileValue, runFuzzChild } from '../fuzz-kit.js';

/** A dialog with some of everything: two finished turns (reply, tool call, knowledge, instruction, summary). */
function filledDialog(): Dialog {
  let now = 1_000;
  const dialog = new Dialog({ clock: () => (now += 1) });
  for (const line of ['Hello there.', 'What do you sell? 🙂']) {
    dialog.beginTurn(line, { slots: { mood: 'calm' } });
    dialog.addKnowledge({ text: 'The forge is hot.', source: 'lore' });
    dialog.addInstruction({ name: 'tone', text: 'Be brief.' });
    const call = dialog.addToolCall({ node: 'tools', name: 'inventory', arguments: '{"item":"sword"}', disposition: 'Replay' });
    dialog.completeToolCall(call.id, '{"count":2}');
    dialog.addReply({ node: 'answer', text: 'Swords and shields.', tokens: [1, 2, 3], model: 'tiny' });
    dialog.addSummary({ node: 'summary', text: 'They talked about swords.', coversThroughTurn: dialog.length - 1 });
    dialog.endTurn();
  }
  return dialog;
}

/** What a refused mutation must leave unchanged (timestamps included, so an injected clock keeps them stable). */
function observeDialog(dialog: Dialog): unknown {
  return { interactions: structuredClone(dialog.interactions), revision: dialog.revision, epoch: dialog.epoch, length: dialog.length };
}

const turnIndex = fc.oneof(fc.integer({ min: -2, max: 4 }), hostileNumber, hostileValue);
const text = fc.oneof({ weight: 5, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue }, { weight: 1, arbitrary: fc.constant('y'.repeat(70_000)) });
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof(arbitrary, hostileValue);

const dialogOperation = fc.oneof(
  fc.record({ op: fc.constant('beginTurn' as const), line: text, options: maybe(fc.record({ slots: maybe(fc.dictionary(hostileString, maybe(hostileString), { maxKeys: 3 })) }, { requiredKeys: [] })) }),
  fc.record({ op: fc.constant('endTurn' as const) }),
  fc.record({ op: fc.constant('setSlot' as const), name: text, value: text }),
  fc.record({ op: fc.constant('addReply' as const), input: maybe(fc.record({ node: text, text, tokens: maybe(fc.array(hostileNumber, { maxLength: 5 })), historyRole: maybe(fc.constantFrom('Assistant', 'None', 'User')), model: maybe(fc.constant(null)) }, { requiredKeys: [] })) }),
  fc.record({ op: fc.constant('addToolCall' as const), input: maybe(fc.record({ id: text, node: text, name: text, arguments: text, disposition: maybe(fc.constantFrom('Omit', 'Replay', 'Pause', 'PauseAndAcknowledge', 'AwaitResult', 'Later')) }, { requiredKeys: [] })) }),
  fc.record({ op: fc.constant('completeToolCall' as const), id: fc.oneof(fc.constantFrom('call_1', 'call_2', 'call_3'), text), result: maybe(fc.oneof(hostileString, fc.constant(null))), status: maybe(fc.constantFrom('Completed', 'Failed', 'TimedOut', 'Cancelled', 'Pending')) }),
  fc.record({ op: fc.constant('addKnowledge' as const), item: maybe(fc.record({ text, source: maybe(hostileString), score: maybe(hostileNumber), node: maybe(hostileString) }, { requiredKeys: [] })) }),
  fc.record({ op: fc.constant('addInstruction' as const), item: maybe(fc.record({ name: text, text, node: maybe(hostileString) }, { requiredKeys: [] })) }),
  fc.record({ op: fc.constant('addSummary' as const), input: maybe(fc.record({ node: text, text, coversThroughTurn: turnIndex }, { requiredKeys: [] })) }),
  fc.record({ op: fc.constant('editUserLine' as const), turn: turnIndex, line: text }),
  fc.record({ op: fc.constant('editReplyText' as const), turn: turnIndex, reply: turnIndex, text }),
  fc.record({ op: fc.constant('truncate' as const), from: turnIndex }),
  fc.record({ op: fc.constant('seed' as const), interactions: fc.oneof(hostileValue, fc.array(fc.record({ userLine: text, turn: turnIndex, replies: maybe(fc.array(fc.record({ node: text, text }), { maxLength: 2 })) }, { requiredKeys: [] }), { maxLength: 3 }), deepObject) }),
);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- hostile values are passed on as they come
function applyDialogOperation(dialog: Dialog, operation: { op: string }): unknown {
  const o = operation as Record<string, any>;
  switch (o.op) {
    case 'beginTurn': return dialog.beginTurn(o.line, o.options);
    case 'endTurn': return dialog.endTurn();
    case 'setSlot': return dialog.setSlot(o.name, o.value);
    case 'addReply': return dialog.addReply(o.input);
    case 'addToolCall': return dialog.addToolCall(o.input);
    case 'completeToolCall': return dialog.completeToolCall(o.id, o.result, o.status);
    case 'addKnowledge': return dialog.addKnowledge(o.item);
    case 'addInstruction': return dialog.addInstruction(o.item);
    case 'addSummary': return dialog.addSummary(o.input);
    case 'editUserLine': return dialog.editUserLine(o.turn, o.line);
    case 'editReplyText': return dialog.editReplyText(o.turn, o.reply, o.text);
    case 'truncate': return dialog.truncate(o.from);
    case 'seed': return dialog.seed(o.interactions);
  }
  throw new Error(`unknown operation ${o.op}`);
}

/** Sets `value` at a path chosen by `steps` inside a JSON-like tree (a copy); the path walks existing keys. */
function mutateAt(root: unknown, steps: readonly number[], value: unknown): unknown {
  const copy = structuredClone(root) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  for (const [i, step] of steps.entries()) {
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    const key = keys[step % keys.length]!;
    const child = node[key];
    if (i === steps.length - 1 || child === null || typeof child !== 'object') {
      node[key] = value;
      break;
    }
    node = child as Record<string, unknown>;
  }
  return copy;
}

await runFuzzChild(async (recorder: FuzzRecorder) => {
  // Dialog: random operation sequences on a filled dialog, with a turn open or not.
  await recorder.check(
    'Dialog operation sequences',
    [fc.boolean(), fc.array(dialogOperation, { minLength: 1, maxLength: 8 })],
    async (openTurn, operations) => {
      const dialog = filledDialog();
      if (openTurn) dialog.beginTurn('And armour?');
      for (const operation of operations) {
        await recorder.call(`Dialog.${operation.op}`, () => applyDialogOperation(dialog, operation), () => observeDialog(dialog));
      }
      // Whatever happened, the dialog still exports a snapshot that imports back to the same interactions.
      if (dialog.current !== undefined && dialog.current.completedAt === null) dialog.endTurn();
      const snapshot = JSON.parse(JSON.stringify(dialog.toSnapshot({ gold: 3 })));
      const { dialog: copy, variables } = Dialog.fromSnapshot(snapshot);
      if (!isDeepStrictEqual(JSON.parse(JSON.stringify(copy.toSnapshot(variables))), snapshot)) {
        throw new Error('a snapshot did not import back to the same dialog');
      }
    },
    1.5,
  );

  await recorder.check(
    'Dialog options',
    [maybe(fc.record({ limits: maybe(fc.record({ maxUserLineChars: hostileNumber, maxSlotChars: hostileNumber, maxItemChars: hostileNumber, maxItemsPerTurn: hostileNumber }, { requiredKeys: [] })), clock: maybe(fc.constant(() => 5)) }, { requiredKeys: [] })), text],
    async (options, line) => {
      let dialog: Dialog | undefined;
      const refused = await recorder.call('new Dialog', () => {
        dialog = new Dialog(options as never);
      });
      if (refused === undefined && dialog !== undefined) {
        await recorder.call('Dialog.beginTurn (odd limits)', () => dialog!.beginTurn(line as string), () => observeDialog(dialog!));
      }
    },
    0.5,
  );

  // Snapshots: the JSON text with flipped bits or cut short, and the parsed tree with a hostile value anywhere.
  const source = filledDialog();
  const snapshotText = JSON.stringify(source.toSnapshot({ gold: 3, name: 'Brom' }));
  const snapshotTree = JSON.parse(snapshotText) as unknown;
  const importInto = async (label: string, snapshot: unknown) => {
    await recorder.call(`${label} Dialog.fromSnapshot`, () => Dialog.fromSnapshot(snapshot));
    const target = filledDialog();
    await recorder.call(`${label} Dialog.restoreSnapshot`, () => target.restoreSnapshot(snapshot), () => observeDialog(target));
  };
  await recorder.check(
    'dialog snapshot text with flipped bits or cut short',
    [fc.array(fc.record({ at: fc.nat(), bit: fc.integer({ min: 0, max: 6 }) }), { minLength: 1, maxLength: 4 }), fc.option(fc.nat(), { nil: undefined, freq: 4 })],
    async (flips, cut) => {
      const bytes = Buffer.from(snapshotText, 'utf8');
      for (const { at, bit } of flips) bytes[at % bytes.length]! ^= 1 << bit;
      const damaged = bytes.toString('utf8', 0, cut === undefined ? bytes.length : cut % bytes.length);
      let parsed: unknown;
      try {
        parsed = JSON.parse(damaged);
      } catch {
        return; // Not JSON any more: the caller's JSON.parse refuses it before the package sees it.
      }
      await importInto('flipped', parsed);
    },
    1.5,
  );
  await recorder.check(
    'dialog snapshot tree with a hostile value anywhere',
    [fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), fc.oneof(hostileValue, deepObject, fc.constant('z'.repeat(300_000)), fc.constant(Array.from({ length: 2000 }, () => ({ userLine: 'x' }))))],
    async (path, value) => {
      await importInto('mutated', mutateAt(snapshotTree, path, value));
    },
    1.5,
  );

  // compileGraph: random JSON, random shapes of graphs, and graphs of real node types with hostile params.
  const typeNames = [...nodeCatalog.keys()];
  const paramNames = [...new Set([...nodeCatalog.values()].flatMap((definition) => {
    const shape = (definition.paramsSchema as { shape?: Record<string, unknown> }).shape;
    return shape ? Object.keys(shape) : [];
  }))];
  const nodeName = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c', 'answer') }, { weight: 1, arbitrary: hostileString });
  const plausibleValue = fc.oneof(
    fc.integer({ min: -2, max: 4096 }),
    fc.double({ min: -1, max: 2, noNaN: true }),
    fc.boolean(),
    hostileString,
    fc.array(hostileString, { maxLength: 3 }),
    fc.constantFrom('tiny', '/nowhere/model.gguf', 'Assistant', 'None', 'User', 'roundRobin', 'random', 'first', 'Omit', 'Replay', 'AwaitResult'),
    fc.array(fc.record({ name: hostileString, description: hostileString, parameters: maybe(fc.constant({ type: 'object', properties: { x: { type: 'string' } } })), disposition: maybe(fc.constantFrom('Omit', 'Replay', 'AwaitResult')) }, { requiredKeys: [] }), { maxLength: 2 }),
    fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
    hostileValue,
  );
  const graphNode = fc.record(
    {
      name: nodeName,
      type: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...typeNames) }, { weight: 1, arbitrary: hostileString }),
      params: fc.oneof({ weight: 6, arbitrary: fc.dictionary(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...paramNames) }, { weight: 1, arbitrary: hostileString }), plausibleValue, { maxKeys: 6 }) }, { weight: 1, arbitrary: hostileValue }),
      exits: fc.oneof({ weight: 6, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom('default', 'yes', 'no', 'timeout', 'blocked', 'noTool', 'A'), hostileString), fc.oneof(nodeName, fc.constant(null)), { maxKeys: 3 }) }, { weight: 1, arbitrary: hostileValue }),
      extra: hostileValue,
    },
    { requiredKeys: ['name', 'type'] },
  );
  // Mostly-valid graphs: unique names, start at the first node, each type's required params, then random ones.
  const requiredParams: Record<string, Record<string, unknown>> = {
    CannedResponse: { strings: ['Hello.'] },
    ClassifyAttributesLLM: { attributes: { mood: ['calm', 'angry'] } },
    ClassifyIntentLLM: { intents: [{ id: 'buy', description: 'wants to buy' }, { id: 'sell', description: 'wants to sell' }] },
    Guardrail: { patterns: ['forbidden'] },
    Instruction: { name: 'tone', text: 'Be brief.' },
    ToolCall: { tools: [{ name: 'inventory', description: 'what is in stock', parameters: { type: 'object', properties: { item: { type: 'string' } } } }] },
  };
  const sensibleNode = (name: string) =>
    fc.constantFrom(...typeNames).chain((type) => {
      const shape = (nodeCatalog.get(type)!.paramsSchema as { shape?: Record<string, unknown> }).shape ?? {};
      const keys = Object.keys(shape);
      return fc.record({
        name: fc.constant(name),
        type: fc.constant(type),
        params: fc
          .oneof(
            { weight: 3, arbitrary: fc.constant({}) },
            { weight: 2, arbitrary: keys.length === 0 ? fc.constant({}) : fc.dictionary(fc.constantFrom(...keys), plausibleValue, { maxKeys: 2 }) },
          )
          .map((extra) => ({ ...requiredParams[type], ...extra })),
        exits: fc.oneof(fc.constant({}), fc.constant({ default: null }), fc.dictionary(fc.constantFrom('default', 'default', 'timeout', 'blocked', 'buy', 'A'), fc.oneof(fc.constantFrom('n0', 'n1', 'n2', 'n3'), fc.constant(null)), { maxKeys: 2 })),
      });
    });
  const sensibleGraph = fc.integer({ min: 1, max: 4 }).chain((count) =>
    fc.tuple(...Array.from({ length: count }, (_, i) => sensibleNode(`n${i}`))).map((nodes) => ({ start: 'n0', nodes })),
  );
  const graphJson = fc.oneof(
    { weight: 6, arbitrary: sensibleGraph },
    { weight: 1, arbitrary: hostileValue },
    { weight: 1, arbitrary: deepObject },
    { weight: 6, arbitrary: fc.record({ start: fc.oneof(nodeName, hostileValue), nodes: fc.oneof({ weight: 8, arbitrary: fc.array(graphNode, { maxLength: 5 }) }, { weight: 1, arbitrary: hostileValue }) }, { requiredKeys: ['start', 'nodes'] }) },
  );
  const graphProblem = (reference: string) => (reference === 'tiny' ? undefined : `no model "${reference}"`);
  await recorder.check(
    'compileGraph with random graph JSON',
    [graphJson, fc.oneof({ weight: 4, arbitrary: fc.constant('tiny') }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: hostileString })],
    async (graph, defaultModel) => {
      const error = await recorder.call('compileGraph', () => compileGraph(graph, { catalog: nodeCatalog, defaultModel, checkModel: graphProblem }));
      if (error !== undefined && error.errorName !== 'GraphCompilationFailed' && error.errorName !== 'InvalidExitTarget') {
        throw new Error(`compileGraph refused with ${error.errorName}, not a graph error: ${error.message}`);
      }
    },
    4,
  );

  // Server frames: any byte stream cut anywhere decodes to payloads or FrameTooLarge; any payload to JSON or
  // MalformedMessage; any value encodes to a frame (or a typed refusal) that decodes back to the same JSON.
  const splitPoints = fc.array(fc.nat(), { maxLength: 6 });
  const cut = (bytes: Uint8Array, points: readonly number[]): Uint8Array[] => {
    const offsets = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
    const pieces: Uint8Array[] = [];
    let from = 0;
    for (const offset of [...offsets, bytes.length]) {
      pieces.push(bytes.subarray(from, offset));
      from = offset;
    }
    return pieces;
  };
  await recorder.check(
    'FrameDecoder and decodeFramePayload on random streams',
    [fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), hostileString), { maxLength: 3 }).map((texts) => Buffer.concat(texts.map((t) => encodeFrame(t))))), splitPoints, fc.array(fc.record({ at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }), { maxLength: 3 }), fc.option(fc.integer({ min: 0, max: 64 }), { nil: undefined })],
    async (source, points, flips, maxBytes) => {
      const bytes = Uint8Array.from(source);
      for (const { at, bit } of flips) if (bytes.length > 0) bytes[at % bytes.length]! ^= 1 << bit;
      const decoder = new FrameDecoder(maxBytes);
      for (const piece of cut(bytes, points)) {
        let payloads: Buffer[] = [];
        const refused = await recorder.call('FrameDecoder.push', () => {
          payloads = decoder.push(piece);
        });
        if (refused !== undefined) break;
        for (const payload of payloads) await recorder.call('decodeFramePayload', () => decodeFramePayload(payload));
      }
    },
    1,
  );
  await recorder.check(
    'encodeFrame round trip',
    [fc.oneof(fc.jsonValue(), hostileValue), splitPoints],
    async (message, points) => {
      let frame: Buffer | undefined;
      const refused = await recorder.call('encodeFrame', () => {
        frame = encodeFrame(message);
      });
      if (refused !== undefined || frame === undefined) return;
      const decoder = new FrameDecoder();
      const payloads = cut(frame, points).flatMap((piece) => decoder.push(piece));
      if (payloads.length !== 1) throw new Error(`one frame decoded into ${payloads.length} payloads`);
      if (JSON.stringify(decodeFramePayload(payloads[0]!)) !== JSON.stringify(message)) throw new Error('a frame did not decode to the JSON it encoded');
    },
    1,
  );

  // CLI: unknown commands never throw; every command's flags parse to options or InvalidArgument.
  const io = { stdout: () => undefined, stderr: () => undefined, stderrIsTty: false };
  await recorder.check(
    'runCli with unknown commands',
    [hostileString.filter((name) => !commands.some((command) => command.name === name) && !['--help', '-h', 'help'].includes(name)), fc.array(hostileString, { maxLength: 4 })],
    async (name, rest) => {
      await recorder.call('runCli', async () => {
        const code = await runCli([name, ...rest], io);
        if (code !== ExitCode.Usage) throw new Error(`unknown command ${JSON.stringify(name)} exited ${code}, not ${ExitCode.Usage}`);
      });
    },
    0.5,
  );
  const flagNames = [...new Set(commands.flatMap((command) => Object.keys(command.flags)))];
  const argument = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...flagNames).map((flag) => `--${flag}`) },
    { weight: 2, arbitrary: fc.constantFrom(...flagNames).chain((flag) => hostileNumber.map((n) => `--${flag}=${n}`)) },
    { weight: 3, arbitrary: fc.oneof(hostileString, hostileNumber.map(String), fc.constantFrom('0', '-1', '1e9', 'NaN', '0x10', ' 4 ', '', '-', '--', '-x')) },
  );
  await recorder.check(
    'CLI flag parsing of every command',
    [fc.constantFrom(...commands), fc.array(argument, { maxLength: 8 })],
    async (command, args) => {
      const error = await recorder.call(`parseCommandLine ${command.name}`, () => parseCommandLine(command, args));
      if (error !== undefined && error.errorName !== 'InvalidArgument') throw new Error(`flags refused with ${error.errorName}: ${error.message}`);
    },
    4,
  );
});
