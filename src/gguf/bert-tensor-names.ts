import { LlamaDialogError } from '../errors.js';

/** HF tensors llama.cpp's BERT graph never reads (the converter drops them, as convert_hf_to_gguf.py does). */
const DROPPED = /^(embeddings\.position_ids|pooler\..*|cls\.predictions\..*|cls\.seq_relationship\..*)$/;

const EMBEDDINGS: Readonly<Record<string, string>> = {
  'embeddings.word_embeddings.weight': 'token_embd.weight',
  'embeddings.position_embeddings.weight': 'position_embd.weight',
  'embeddings.token_type_embeddings.weight': 'token_types.weight',
  'embeddings.LayerNorm.weight': 'token_embd_norm.weight',
  'embeddings.LayerNorm.bias': 'token_embd_norm.bias',
};

/** Per-layer HF module path → llama.cpp tensor stem (llama-arch.cpp LLM_TENSOR_* names for LLM_ARCH_BERT). */
const LAYER_PARTS: Readonly<Record<string, string>> = {
  'attention.self.query': 'attn_q',
  'attention.self.key': 'attn_k',
  'attention.self.value': 'attn_v',
  'attention.output.dense': 'attn_output',
  'attention.output.LayerNorm': 'attn_output_norm',
  'intermediate.dense': 'ffn_up',
  'output.dense': 'ffn_down',
  'output.LayerNorm': 'layer_output_norm',
};

/**
 * The llama.cpp GGUF name of a Hugging Face BERT tensor (`encoder.layer.3.attention.self.query.weight` →
 * `blk.3.attn_q.weight`), or null for a tensor the GGUF leaves out (position ids, pooler, MLM heads).
 * A `bert.` prefix and the old `gamma`/`beta` LayerNorm names are accepted.
 * @throws LlamaDialogError `ConversionFailed` for a tensor name no BERT model has.
 */
export function bertTensorName(hfName: string): string | null {
  let name = hfName.startsWith('bert.') ? hfName.slice('bert.'.length) : hfName;
  name = name.replace(/\.gamma$/, '.weight').replace(/\.beta$/, '.bias');
  if (DROPPED.test(name)) return null;
  const embedding = EMBEDDINGS[name];
  if (embedding !== undefined) return embedding;
  const layer = /^encoder\.layer\.(\d+)\.(.+)\.(weight|bias)$/.exec(name);
  const part = layer === null ? undefined : LAYER_PARTS[layer[2]!];
  if (layer === null || part === undefined) {
    throw new LlamaDialogError('ConversionFailed', `tensor "${hfName}" is not part of a BERT model the converter knows`);
  }
  return `blk.${Number(layer[1])}.${part}.${layer[3]}`;
}
