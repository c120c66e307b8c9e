import { z } from 'zod';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { beginNodeSpeech, finishNodeSpeech, speaksWithTtsModel, speechParamsShape, type SpeechParams } from './speech-params.js';

const paramsSchema = z.strictObject(speechParamsShape);

class SpeakNode implements GraphNode {
  readonly type = 'Speak';

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as unknown as SpeechParams;
    const reply = run.turn.replies.findLast((candidate) => candidate.text.trim().length > 0);
    if (!reply) return 'default';
    const pipeline = beginNodeSpeech(run, params);
    pipeline.push(reply.text);
    await finishNodeSpeech(run, pipeline);
    return 'default';
  }
}

/**
 * Speaks the latest non-empty reply of the current turn (e.g. CannedResponse → Speak): no model call, no text, no
 * message; the exit is `default` always, also when there is nothing to say.
 */
export const speakNode = defineNode({
  type: 'Speak',
  paramsSchema,
  exits: ['default'],
  structuralParams: ['ttsModel'],
  usesModel: false,
  speaks: speaksWithTtsModel,
  create: (node) => new SpeakNode(node.name),
});
