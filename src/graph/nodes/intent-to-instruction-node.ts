import { z } from 'zod';
import { isKeyedStorage } from '../../knowledge/string-storage.js';
import { MapStorage } from '../../knowledge/map-storage.js';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { INTENT_SLOT } from './classify-intent-node.js';

const paramsSchema = z.strictObject({
  /**
   * A Map string storage: a session storage name or a `.json` file under the storage root. Mutable: changeParam
   * rebinds it. Wins over the inline map when both are set.
   */
  storage: z.string().min(1).max(4096).optional(),
  /** Inline map keys (intent labels), paired by position with `inlineStrings`. Structural. */
  inlineKeys: z.array(z.string().min(1).max(128)).max(4096).optional(),
  /** Inline instruction texts, one per key. Structural. */
  inlineStrings: z.array(z.string().max(100_000)).max(4096).optional(),
  /** Name of the instruction attached: templates read it as `{{instructions.<name>}}` and in `instructionList`. */
  instructionName: z.string().min(1).max(128),
  /** Turn slot holding the intent label (default `intent`, which ClassifyIntentLLM and ClassifyIntent write). */
  intentSlot: z.string().min(1).max(128).default(INTENT_SLOT),
});
type IntentToInstructionParams = z.infer<typeof paramsSchema>;

function inlineMapProblem(params: IntentToInstructionParams): string | undefined {
  const keys = params.inlineKeys;
  const strings = params.inlineStrings;
  if ((keys === undefined) !== (strings === undefined)) return 'give inlineKeys and inlineStrings together';
  if (keys && strings && keys.length !== strings.length) {
    return `inlineKeys has ${keys.length} keys but inlineStrings has ${strings.length} strings; they pair by position`;
  }
  if (params.storage === undefined && keys === undefined) return 'give storage or inlineKeys + inlineStrings';
  const seen = new Set<string>();
  for (const key of keys ?? []) {
    if (seen.has(key)) return `inlineKeys has ${JSON.stringify(key)} twice; a map needs unique keys`;
    seen.add(key);
  }
  return undefined;
}

class IntentToInstructionNode implements GraphNode {
  readonly type = 'IntentToInstruction';
  /** Built once: inline keys and strings are structural, so they never change for this agent. */
  private readonly inlineMap: MapStorage | undefined;

  constructor(
    readonly name: string,
    params: IntentToInstructionParams,
  ) {
    // Keys were checked unique by `check`, so this cannot throw.
    this.inlineMap =
      params.inlineKeys && params.inlineStrings
        ? new MapStorage(`${name}.inline`, params.inlineKeys.map((id, index) => ({ id, text: params.inlineStrings?.[index] as string })))
        : undefined;
  }

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as IntentToInstructionParams;
    const bound = run.storage('storage');
    // The agent only binds Map storages to this param (StorageWrongKind otherwise); the guard keeps the type honest.
    const map = bound && isKeyedStorage(bound) ? bound : this.inlineMap;
    const intent = run.turn.slots[params.intentSlot];
    const storageName = bound?.name ?? this.inlineMap?.name ?? null;
    let resultText: string | undefined;
    if (intent === undefined || intent === '') {
      run.warn(`no intent in slot "${params.intentSlot}" this turn: no instruction attached`);
    } else {
      resultText = map?.findFirst(intent);
      if (resultText === undefined) run.warn(`intent "${intent}" has no entry in storage ${JSON.stringify(storageName)}: no instruction attached`);
      else run.dialog.addInstruction({ name: params.instructionName, text: resultText, node: this.name });
    }
    run.diagnostics.addData({
      storage: storageName,
      instructionName: params.instructionName,
      intent: intent ?? null,
      found: resultText !== undefined,
      resultText: resultText ?? null,
    });
    return 'default';
  }
}

/**
 * Looks the turn's intent label up in a Map string storage (or an inline map) and attaches the text as a named
 * instruction for later nodes' templates. A missing intent or key is a warning; the exit is always `default`.
 */
export const intentToInstructionNode = defineNode({
  type: 'IntentToInstruction',
  paramsSchema,
  exits: ['default'],
  structuralParams: ['inlineKeys', 'inlineStrings'],
  usesModel: false,
  storageParams: [{ param: 'storage', kinds: ['map'] }],
  check: (params) => inlineMapProblem(params),
  create: (node) => new IntentToInstructionNode(node.name, node.params as IntentToInstructionParams),
});
