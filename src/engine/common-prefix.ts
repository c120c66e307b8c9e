/**
 * Length of the common prefix of two token sequences: how much of a prompt a KV cache holding `a` keeps when it
 * is asked for `b` (the engine keeps exactly this prefix and decodes the rest).
 */
export function commonPrefixLength(a: Int32Array, b: Int32Array): number {
  const limit = Math.min(a.length, b.length);
  let index = 0;
  while (index < limit && a[index] === b[index]) index++;
  return index;
}
