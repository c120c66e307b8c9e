import { z } from 'zod';
import { LlamaDialogError } from '../../errors.js';
import { MAX_SPEECH_SPEED, MIN_SPEECH_SPEED } from '../../voice/sherpa-voice.js';
import type { SpeechPipeline, SpeechReport, SynthesisPacing } from '../../voice/speech-pipeline.js';
import type { NodeRunContext } from '../node-run-context.js';

/** Params of the nodes that speak (Speak, GenerateAndSpeak), with the reference's defaults and ranges. */
export const speechParamsShape = {
  /** Catalog name of a `purpose: 'tts'` voice this node speaks with instead of the agent's; structural. */
  ttsModel: z.string().min(1).max(256).optional(),
  /** Speaker of a multi-speaker voice; default the agent voice's. */
  speakerId: z.number().int().min(0).max(65_535).optional(),
  /** 1 = the voice's pace, 2 = twice as fast; 0.1–3.0; default the agent voice's. */
  speed: z.number().min(MIN_SPEECH_SPEED).max(MAX_SPEECH_SPEED).optional(),
  /** A sentence end counts once this many characters have accumulated (shorter sentences merge with the next). */
  minSentenceChars: z.number().int().min(1).max(1000).default(12),
  /**
   * `playback` (default): while the model is still writing, a segment after the first is synthesized only when the
   * audio already sent is about to run out, so generation keeps the CPU; `eager`: each segment as soon as it is cut.
   */
  synthesisPacing: z.enum(['playback', 'eager']).default('playback'),
};

/**
 * GenerateAndSpeak's own: the reply's first segment ends at its first clause mark (`,` `;` `:`) once minSentenceChars
 * have accumulated, a shorter first synthesis so the first audio comes sooner while the model writes on. Default
 * true. (Speak voices a whole line known in advance, often cached or baked: it cuts at sentences only.)
 */
export const eagerFirstClauseParam = z.boolean().default(true);

export interface SpeechParams {
  ttsModel?: string | undefined;
  speakerId?: number | undefined;
  speed?: number | undefined;
  minSentenceChars: number;
  /** GenerateAndSpeak only; absent (Speak): false. */
  eagerFirstClause?: boolean;
  synthesisPacing: SynthesisPacing;
}

/** The `speaks` entry of a speaking node's definition. */
export const speaksWithTtsModel = { ttsModel: (params: { ttsModel?: string | undefined }): string | undefined => params.ttsModel };

/** Starts the node's speech on this turn; `emitText` receives the reply's text as the delivery mode releases it. */
export function beginNodeSpeech(run: NodeRunContext, params: SpeechParams, emitText?: (piece: string) => void): SpeechPipeline {
  return run.speech().begin({
    node: run.node.name,
    ...(params.ttsModel === undefined ? {} : { ttsModel: params.ttsModel }),
    ...(params.speakerId === undefined ? {} : { speakerId: params.speakerId }),
    ...(params.speed === undefined ? {} : { speed: params.speed }),
    minSentenceChars: params.minSentenceChars,
    eagerFirstClause: params.eagerFirstClause === true,
    synthesisPacing: params.synthesisPacing,
    ...(emitText ? { emitText } : {}),
    warn: (message) => run.warn(message),
  });
}

/** Waits for the speech to end, records it in diagnostics and turns a cancel during it into Aborted. */
export async function finishNodeSpeech(run: NodeRunContext, pipeline: SpeechPipeline): Promise<SpeechReport> {
  const report = await pipeline.finish();
  run.diagnostics.addData({ speech: report });
  if (run.signal.aborted) throw new LlamaDialogError('Aborted', 'turn cancelled while speaking');
  return report;
}
