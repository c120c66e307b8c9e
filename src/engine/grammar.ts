/** Grammars for constrained generation (GenerateOptions.grammar). */
import { callNativeSync } from '../native/binding.js';
import { loadNativeAddon } from '../native/loader.js';

/**
 * Converts a JSON Schema into a GBNF grammar with llama.cpp's own converter (the one llama-server uses
 * for `response_format`), for {@link GenerateOptions.grammar}: a reply sampled under it is a JSON value
 * that matches the schema.
 * @param schema the schema, as an object or as JSON text.
 * @throws LlamaDialogError InvalidArgument when the text is not JSON or the converter refuses the schema
 *   (unsupported keywords, unresolvable `$ref`s; the message says which).
 */
export function jsonSchemaToGrammar(schema: string | object): string {
  const text = typeof schema === 'string' ? schema : JSON.stringify(schema);
  return callNativeSync(() => loadNativeAddon().jsonSchemaToGrammar(text));
}
