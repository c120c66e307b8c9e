import { PromptAssembler } from '../../prompt/prompt-assembler.js';
import type { InferencePort } from '../inference-port.js';

/**
 * The prompt assembler of a node that assembles its own messages (classifiers, Summarize), built on first use from
 * the model's shared kit, so its segments share the model's token cache with every other node of that model.
 */
export class NodeAssembler {
  private assembler: PromptAssembler | undefined;

  get(inference: InferencePort): PromptAssembler {
    this.assembler ??= new PromptAssembler({
      renderer: inference.prompts.renderer,
      tokenizer: inference.tokenizer,
      contentCache: inference.prompts.contentCache,
    });
    return this.assembler;
  }
}
