import { z } from 'zod';
import { defineNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { GenerateNode, generateDefinitionTraits, generateParamsShape, type GenerateParams } from './generate-node.js';
import { beginNodeSpeech, eagerFirstClauseParam, finishNodeSpeech, speaksWithTtsModel, speechParamsShape, type SpeechParams } from './speech-params.js';

const paramsSchema = z.strictObject({ ...generateParamsShape, ...speechParamsShape, eagerFirstClause: eagerFirstClauseParam });
type GenerateAndSpeakParams = GenerateParams & SpeechParams;

/**
 * Generate whose reply is spoken while it streams: each sentence goes to the voice as soon as the segmenter closes
 * it, and its audio reaches the turn beside the text. The exit is taken once generation and speech have both ended.
 */
class GenerateAndSpeakNode extends GenerateNode {
  override readonly type = 'GenerateAndSpeak';

  override async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as unknown as GenerateAndSpeakParams;
    const pipeline = beginNodeSpeech(run, params, params.stream ? (piece) => run.emitAnswer(piece, true) : undefined);
    let result;
    try {
      result = await this.generateReply(run, params, (piece) => pipeline.push(piece));
    } catch (error) {
      pipeline.abandon();
      run.diagnostics.addData({ speech: pipeline.report() });
      throw error;
    }
    await finishNodeSpeech(run, pipeline);
    this.recordReply(run, params, result);
    return 'default';
  }
}

/** Generate plus speech: the reply's sentences are synthesized on the agent's voice while the model writes. */
export const generateAndSpeakNode = defineNode<z.infer<typeof paramsSchema>>({
  type: 'GenerateAndSpeak',
  paramsSchema,
  ...generateDefinitionTraits,
  structuralParams: [...generateDefinitionTraits.structuralParams, 'ttsModel'],
  speaks: speaksWithTtsModel,
  create: (node) => new GenerateAndSpeakNode(node.name),
});
