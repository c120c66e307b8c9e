import { ChatTemplateRenderer } from './chat-template-renderer.js';
import { TokenCache } from './token-cache.js';
import type { RuntimeModel } from '../engine/types.js';

/** What every node on one model shares for building prompts: the chat template renderer and the content token cache. */
export interface ModelPromptKit {
  readonly renderer: ChatTemplateRenderer;
  readonly contentCache: TokenCache;
}

const kits = new WeakMap<RuntimeModel, ModelPromptKit>();

/** The model's shared prompt kit, built on first use (the renderer probes the GGUF template once per model). */
export function promptKitFor(model: RuntimeModel): ModelPromptKit {
  let kit = kits.get(model);
  if (!kit) {
    kit = { renderer: ChatTemplateRenderer.forModel(model.info, model), contentCache: new TokenCache() };
    kits.set(model, kit);
  }
  return kit;
}
