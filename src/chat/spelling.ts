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
  return similarBigrams(bigramsOf(word), bigramsOf(value));
}

/** A word's padded bigrams, each as one number (two character codes), and how many distinct ones it has. */
export interface Bigrams {
  all: Float64Array;
  distinct: number;
}
export function bigramsOf(w: string): Bigrams {
  const all = Float64Array.from(bigrams(w), (g) => g.charCodeAt(0) * 65536 + g.charCodeAt(1));
  return { all, distinct: new Set(all).size };
}

/** Most bigrams shared (Dice ≥ 0.55): each of a's bigrams found among b's, over a's count and b's distinct ones. */
export function similarBigrams(a: Bigrams, b: Bigrams): boolean {
  let shared = 0;
  for (const g of a.all) if (b.all.includes(g)) shared++;
  return (2 * shared) / (a.all.length + b.distinct) >= 0.55;
}
