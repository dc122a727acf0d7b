// A misspelling told by shared character bigrams (issue 53), for the few places that compare one word with one
// known value (a slot's value, a word of an experiment's name): no edit-distance table, linear in the two words.

/** Padded character bigrams of a word: what two spellings of it share. */
const bigrams = (w: string) => {
  const p = `<${w}>`;
  const out: string[] = [];
  for (let i = 0; i + 2 <= p.length; i++) out.push(p.slice(i, i + 2));
  return out;
};
/**
 * Whether a word is a misspelling of a one-word slot value: the same first letter and most character bigrams shared
 * (Dice ≥ 0.55), from five letters on. "umbrla" → "umbral", "sensibilidd" → "sensibilidad"; "modelo" is no metric.
 */
export function spelledLike(word: string, value: string): boolean {
  if (word === value) return true;
  if (word.length < 5 || value.length < 5 || word[0] !== value[0] || Math.abs(word.length - value.length) > 2) return false;
  const a = bigrams(word);
  const b = new Set(bigrams(value));
  const shared = a.filter((g) => b.has(g)).length;
  return (2 * shared) / (a.length + b.size) >= 0.55;
}
