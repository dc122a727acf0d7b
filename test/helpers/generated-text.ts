// Messages made of chosen words and separators, from a seeded generator (mulberry32), for tests that compare a
// rewritten matcher with the patterns it replaced: a failure names a message that the same seed makes again.

export function seededRandom(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` messages of 1..maxWords words (a fifth upper-cased), joined by a space or, 40% of the time, by `glue`. */
export function generatedMessages(seed: number, count: number, words: string[], glue: string[], maxWords = 16): string[] {
  const rand = seededRandom(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rand() * maxWords);
    let m = "";
    for (let k = 0; k < n; k++)
      m += (rand() < 0.2 ? pick(words).toUpperCase() : pick(words)) + (k < n - 1 ? (rand() < 0.6 ? " " : pick(glue)) : "");
    out.push(m);
  }
  return out;
}
