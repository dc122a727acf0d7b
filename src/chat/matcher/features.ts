// What the intent matcher sees of a message (issue 53): hashed character n-grams of its words, accent-folded and
// lower-cased. "experimneto", "experimento" and "experiment" share most of their 3-grams, so typos, accents and
// inflections cost a little similarity instead of needing an edit distance or a word list.

/** Characters read of a message: a question is a sentence or two; the rest of a long paste says nothing more. */
export const MAX_CHARS = 600;
/** Hash buckets per feature vector: small enough to commit the weights, large enough that collisions rarely matter. */
export const DIMENSIONS = 4096;

/** Lower case, no accents, digits as 0, anything but letters, digits and ¿¡ as a space: what two spellings share. */
export function fold(message: string): string {
  return message
    .slice(0, MAX_CHARS)
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[0-9]+/g, "0")
    .replace(/[^a-z0-9¿¡]+/g, " ")
    .trim();
}

/** FNV-1a, 32 bits: the same bucket for the same n-gram on every machine. */
function bucket(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % DIMENSIONS;
}

const WORD_WEIGHT = 3;

/** A sparse feature vector: bucket indexes and their values, L2-normalised. */
export interface Features {
  index: Int32Array;
  value: Float64Array;
}

/** The n-grams (2 to 4 characters of each word with its edges marked, plus each word and each pair of words). */
export function featurize(message: string): Features {
  // Numbers are slots (slots.ts), not part of what a question asks: "0.3" must not make a question about thresholds.
  const words = fold(message)
    .split(" ")
    .filter((w) => w && w !== "0");
  const counts = new Map<number, number>();
  const add = (gram: string, weight = 1) => {
    const b = bucket(gram);
    counts.set(b, (counts.get(b) ?? 0) + weight);
  };
  for (let w = 0; w < words.length; w++) {
    const padded = `<${words[w]}>`;
    for (let n = 2; n <= 4; n++) for (let i = 0; i + n <= padded.length; i++) add(padded.slice(i, i + n));
    // A whole word counts as much as its n-grams together: "delete" is the question, "pneumonia" only its object.
    add(`w:${words[w]}`, WORD_WEIGHT);
    if (w + 1 < words.length) add(`b:${words[w]} ${words[w + 1]}`);
  }
  const index = Int32Array.from([...counts.keys()].sort((a, b) => a - b));
  const value = Float64Array.from(index, (i) => counts.get(i)!);
  let norm = 0;
  for (const v of value) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < value.length; i++) value[i] /= norm;
  return { index, value };
}
