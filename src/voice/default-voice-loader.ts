import { LlamaDialogError } from '../errors.js';
import type { VoiceLoader } from './tts-voice.js';

/**
 * The voice loader sessions and `voice bake` use unless given one: `loadSherpaVoice` from ./sherpa-engine.js (the
 * sherpa-onnx engine) takes this place once that engine is in the tree; until then every load fails with
 * TtsEngineUnavailable, and callers pass their own loader (SessionHostOptions.loadVoice).
 */
export const defaultVoiceLoader: VoiceLoader = async (folder) => {
  throw new LlamaDialogError(
    'TtsEngineUnavailable',
    `cannot load the voice in ${folder}: no speech engine is available in this build (install sherpa-onnx-node, or pass loadVoice in the session's host options)`,
  );
};
