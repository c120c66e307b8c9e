/** `text` cut into consecutive pieces of 1..maxLength characters (as a model's tokens might stream it), seeded. */
export function randomPieces(text: string, random: () => number, maxLength: number): string[] {
  const pieces: string[] = [];
  let index = 0;
  while (index < text.length) {
    const length = 1 + Math.floor(random() * maxLength);
    pieces.push(text.slice(index, index + length));
    index += length;
  }
  return pieces;
}
