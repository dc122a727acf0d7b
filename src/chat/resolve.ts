import type { Task } from "./facts.js";
import { bigramsOf, spelledLike, type Bigrams } from "./spelling.js";

// Which of the caller's experiments a message means when it names no number: "my breast cancer model", "the
// ultrasound one", "mi modelo de mama", "the last one". Before this, the builtin answered about the newest model
// whenever the words did not help, which is right only by luck and wrong in the dangerous way (a confident answer
// about another disease's model). So: one clear fit is answered; a tie asks back; a named thing that fits none
// says so. Only the experiments passed in are ever considered, and the caller passes only its user's own.

export interface Candidate {
  experiment_id: number;
  task: Task;
  status: string;
  name?: string | null;
  description?: string | null;
  dataset?: string | null;
  label_cols?: string[];
}

export type Resolution =
  | { kind: "none_named" } // the message names no experiment in words: the caller keeps its own default
  | { kind: "number"; experimentId: number } // "experiment one"
  | { kind: "one"; experiment: Candidate; by: "words" | "newest" }
  | { kind: "ambiguous"; candidates: Candidate[] }
  | { kind: "no_match"; words: string[] };

/** Lower-case words without accents: "Último" and "ultimo" meet, "X-ray" and "xray" meet. */
export function plainWords(text: string): string[] {
  return text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/-/g, "")
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

// The words that end a reference ("my breast cancer model") and those that open one ("my", "the", "mi").
// Not "run": "can the model run on a GPU?" names no experiment.
const HEADS = new Set(["model", "one", "experiment", "modelo", "experimento", "dataset", "detector", "classifier", "clasificador"]);
const OPENERS = new Set(["my", "the", "this", "that", "our", "your", "mi", "el", "la", "este", "ese", "nuestro"]);
// After a head, these introduce the descriptor instead: "the model for diabetes", "el modelo de mama".
const LINKS = new Set(["of", "for", "on", "de", "del", "para", "sobre"]);
// Words inside a reference that describe no experiment: they must not make "the best model" an unknown name.
const NEUTRAL = new Set([
  "a",
  "an",
  "and",
  "or",
  "of",
  "de",
  "del",
  "y",
  "o",
  "la",
  "el",
  "los",
  "las",
  "un",
  "una",
  "best",
  "top",
  "good",
  "trained",
  "ready",
  "published",
  "current",
  "same",
  "other",
  "new",
  "old",
  "final",
  "whole",
  "first",
  "auc",
  "recall",
  "precision",
  "accuracy",
  "metric",
  "metrics",
  "score",
  "results",
  "status",
  "mejor",
  "entrenado",
  "that",
  "this",
  "which",
  "what",
  "how",
  "is",
  "its",
  "it",
  "tell",
  "me",
  "about",
  "user",
  "users",
  "other",
  "someone",
  "gpu",
  "cpu",
  "heat",
  "map",
  "heatmap",
  "gradcam",
  "grad",
  "cam",
  "saliency",
  "predict",
  "prediction",
  "call",
  "use",
  "please",
]);
// Bounded alternation, no repetition around it: linear on any message (test/unit/regex-redos.test.ts).
const ASKS_ABOUT_FAILURE = /\b(fail|refus|reject|invalid|fall[oó])/i;
const NEWEST = new Set(["last", "latest", "newest", "recent", "ultimo", "reciente", "nuevo"]);
// Maps, not object literals: a message word such as "constructor" must not find Object.prototype's.
const TASK_WORDS = new Map<string, Task>(
  Object.entries({
    image: "vision",
    images: "vision",
    vision: "vision",
    imagen: "vision",
    imagenes: "vision",
    table: "data",
    tabular: "data",
    data: "data",
    tabla: "data",
    datos: "data",
    detection: "detection",
    detector: "detection",
    deteccion: "detection",
  } as Record<string, Task>),
);
// A few Spanish words clinicians use for what names say in English, and the other way round: "mi modelo de mama"
// meets a model described as "breast ultrasound", and "my breast model" one named "Cáncer de mama".
const SPANISH = new Map(
  Object.entries({
    mama: "breast",
    mamaria: "breast",
    pecho: "breast",
    pulmon: "lung",
    pulmones: "lung",
    piel: "skin",
    rinon: "kidney",
    corazon: "heart",
    higado: "liver",
    ecografia: "ultrasound",
    ecografias: "ultrasound",
    cerebro: "brain",
    torax: "chest",
    radiografia: "xray",
    radiografias: "xray",
    neumonia: "pneumonia",
    sangre: "blood",
    celulas: "cells",
    lesiones: "lesion",
    glucosa: "glucose",
    dermatoscopia: "dermoscopy",
  }),
);
const ENGLISH = new Map<string, string[]>();
for (const [es, en] of SPANISH) ENGLISH.set(en, [...(ENGLISH.get(en) ?? []), es]);
/** A descriptor and its translations: any of them may be the word a name uses. */
const spellings = (w: string) => [w, ...(SPANISH.has(w) ? [SPANISH.get(w)!] : []), ...(ENGLISH.get(w) ?? [])];
const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
const NUMEROS = ["cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "once", "doce"];
const numberWord = (w: string) => Math.max(NUMBER_WORDS.indexOf(w), NUMEROS.indexOf(w));

/** The descriptor words of the first reference in the message, or undefined when it has none. */
export function referenceWords(message: string): string[] | undefined {
  const words = plainWords(message);
  for (let i = 0; i < words.length; i++) {
    if (!HEADS.has(words[i])) continue;
    const before: string[] = [];
    for (let j = i - 1; j >= 0 && i - j <= 4 && !OPENERS.has(words[j]); j--) before.unshift(words[j]);
    const opened = i - before.length - 1 >= 0 && OPENERS.has(words[i - before.length - 1]);
    const after: string[] = [];
    if (LINKS.has(words[i + 1] ?? ""))
      for (let j = i + 2; j < words.length && after.length < 3 && !HEADS.has(words[j]) && !LINKS.has(words[j]); j++) after.push(words[j]);
    // One letter is a possessive's "s" ("the other user's model"), never a name worth matching.
    const descriptors = [...(opened ? before : []), ...after].filter(
      (w) => w.length > 1 && !NEUTRAL.has(w) && !HEADS.has(w) && !/^\d+$/.test(w),
    );
    if (descriptors.length) return descriptors;
  }
  // "the last", "el último", "the most recent": newest-words name an experiment without a head word.
  for (let i = 0; i < words.length; i++)
    if (NEWEST.has(words[i]) && (i === 0 || OPENERS.has(words[i - 1]) || words[i - 1] === "most")) return [words[i]];
  return undefined;
}

/** An experiment named by a number word: "experiment one", "experimento tres". */
function numberWordReference(words: string[]): number | undefined {
  for (let i = 0; i + 1 < words.length; i++) {
    if ((words[i] === "experiment" || words[i] === "experimento") && numberWord(words[i + 1]) > 0) return numberWord(words[i + 1]);
  }
  return undefined;
}

// Vocabularies by the text they are built from: a request lists the same experiments as the one before, and a
// description holds up to 2,000 characters (bench/chat/worst-case.ts). Bounded: cleared when full.
const VOCABULARIES = new Map<string, Set<string>>();
const MAX_VOCABULARIES = 5_000;

/** The words a candidate can be called by: its name, description, dataset path (less the user id), labels. */
export function vocabulary(c: Candidate): Set<string> {
  // The same candidate is read by every resolver pass of a request (the message, earlier messages, the known words):
  // its key (up to 2,000 characters of description) is built once per request, not once per pass.
  let words = BY_CANDIDATE.get(c);
  if (!words) {
    words = vocabularyOfText(c);
    BY_CANDIDATE.set(c, words);
  }
  return words;
}
const BY_CANDIDATE = new WeakMap<Candidate, Set<string>>();

function vocabularyOfText(c: Candidate): Set<string> {
  const key = `${c.name ?? ""}\u0000${c.description ?? ""}\u0000${c.dataset ?? ""}\u0000${(c.label_cols ?? []).join("\u0000")}`;
  let words = VOCABULARIES.get(key);
  if (!words) {
    if (VOCABULARIES.size >= MAX_VOCABULARIES) VOCABULARIES.clear();
    words = buildVocabulary(c);
    VOCABULARIES.set(key, words);
  }
  return words;
}

function buildVocabulary(c: Candidate): Set<string> {
  const path = (c.dataset ?? "")
    .split("/")
    .slice(1)
    .join(" ")
    .replace(/\.[a-z0-9]{1,8}$/i, "");
  const words = plainWords(`${c.name ?? ""} ${c.description ?? ""} ${path} ${(c.label_cols ?? []).join(" ")}`);
  return new Set(words.filter((w) => w.length >= 2));
}

/** At most one letter added, dropped or changed ("brest", "breats" is two): a small typo, not another word. */
function oneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  // a.slice(i + 1) === b.slice(i + 1) || a.slice(i) === b.slice(i + 1) || a.slice(i + 1) === b.slice(i), without the slices.
  return sameFrom(a, i + 1, b, i + 1) || sameFrom(a, i, b, i + 1) || sameFrom(a, i + 1, b, i);
}

/** a.slice(x) === b.slice(y), comparing in place (called for every near word of a message word). */
function sameFrom(a: string, x: number, b: string, y: number): boolean {
  const n = Math.max(0, a.length - x);
  if (n !== Math.max(0, b.length - y)) return false;
  for (let k = 0; k < n; k++) if (a.charCodeAt(x + k) !== b.charCodeAt(y + k)) return false;
  return true;
}

/**
 * The words of a list of vocabularies (the candidates a message is compared with), indexed so that a message word
 * finds the few it may be a misspelling of, and whose vocabularies they are, by a handful of lookups instead of being
 * compared with every word of every vocabulary (issue 53: a 600-character message of unknown words against 200
 * descriptions of 2,000 characters of distinct words cost ~0.8 s per resolver pass, bench/chat/worst-case.ts). Each
 * entry lists the positions (in the list) of the vocabularies that hold such a word, in increasing order, each once.
 */
interface Index {
  size: number;
  /** Every word. */
  exact: Map<string, number[]>;
  /** The words of five letters or more by their first five letters, without their first, without their last. */
  starts: Map<string, number[]>;
  tails: Map<string, number[]>;
  heads: Map<string, number[]>;
  /** By first letter, last letter and length ("be6": "breast"): one edit elsewhere keeps all three but the length. */
  inside: Map<string, Array<{ word: string; at: number }>>;
  /** The words of seven letters or more by first letter and length: the ones spelledLike may find alike. */
  similar: Map<string, Similar>;
}
/**
 * Words of one first letter and one length, and which of them hold each bigram (as bigramsOf numbers it), so that
 * the bigrams a message word shares with each are counted by looking its own up. The first, "<" and the first letter,
 * all of them share, and it is counted without a list.
 */
interface Similar {
  words: Array<{ at: number; distinct: number }>;
  holding: Map<number, number[]>;
}
const at = (m: Map<string, number[]>, key: string, position: number) => {
  const list = m.get(key);
  if (!list) m.set(key, [position]);
  else if (list[list.length - 1] !== position) list.push(position);
};
const push = <K, T>(m: Map<K, T[]>, key: K, value: T) => {
  const list = m.get(key);
  if (list) list.push(value);
  else m.set(key, [value]);
};
function buildIndex(vocabs: Set<string>[]): Index {
  const ix: Index = {
    size: vocabs.length,
    exact: new Map(),
    starts: new Map(),
    tails: new Map(),
    heads: new Map(),
    inside: new Map(),
    similar: new Map(),
  };
  vocabs.forEach((vocab, p) => {
    for (const v of vocab) {
      at(ix.exact, v, p);
      if (v.length < 5) continue;
      at(ix.starts, v.slice(0, 5), p);
      at(ix.tails, v.slice(1), p);
      at(ix.heads, v.slice(0, -1), p);
      push(ix.inside, v[0] + v[v.length - 1] + v.length, { word: v, at: p });
      if (v.length >= 7) {
        const key = v[0] + v.length;
        let bucket = ix.similar.get(key);
        if (!bucket) ix.similar.set(key, (bucket = { words: [], holding: new Map() }));
        const grams = bigramsOf(v);
        const k = bucket.words.push({ at: p, distinct: grams.distinct }) - 1;
        for (const g of new Set(grams.all.subarray(1))) push(bucket.holding, g, k);
      }
    }
  });
  return ix;
}

// Indexes by the vocabularies they cover (each vocabulary object is cached by its text, so a workspace whose
// experiments did not change lists the same ones): a few, since one workspace holds at most 200 descriptions of
// 2,000 characters and a request asks about one workspace.
const VOCABULARY_IDS = new WeakMap<Set<string>, number>();
let nextVocabularyId = 0;
const idOf = (vocab: Set<string>) => {
  let id = VOCABULARY_IDS.get(vocab);
  if (id === undefined) VOCABULARY_IDS.set(vocab, (id = nextVocabularyId++));
  return id;
};
/** A key that is the same for the same candidates' vocabularies, in the same order (each cached by its text). */
export const vocabulariesKey = (candidates: Candidate[]) => candidates.map((c) => idOf(vocabulary(c))).join(",");
const INDEXES = new Map<string, Index>();
const MAX_INDEXES = 8;
function indexOf(vocabs: Set<string>[]): Index {
  const key = vocabs.map(idOf).join(",");
  let ix = INDEXES.get(key);
  if (ix) INDEXES.delete(key);
  else {
    ix = buildIndex(vocabs);
    if (INDEXES.size >= MAX_INDEXES) INDEXES.delete(INDEXES.keys().next().value!);
  }
  INDEXES.set(key, ix);
  return ix;
}

/**
 * "ultrasound" meets "ultrasounds" and "diabetic" meets "diabetes" (a shared start of five letters); "brest" meets
 * "breast" (one typo, only in words of five letters or more, where one letter cannot make another common word);
 * "pnuemonia" meets "pneumonia" (two letters swapped in a word of seven or more: most bigrams shared, spelling.ts).
 * Marks in `met` the vocabularies of the index that `p`'s word meets. The same answer as comparing the word with each
 * vocabulary word of five letters or more (meetsOneByScan, which test/unit/chat-resolve.test.ts compares with this):
 * one edit at the first or the last letter is found by looking the rest up; one edit anywhere else keeps the first and
 * last letters and changes the length by at most one; spelledLike needs the same first letter, and the same length is
 * asked for.
 */
function markMet(p: Probe, ix: Index, met: Uint8Array): void {
  const mark = (list: number[] | undefined) => {
    if (list) for (const i of list) met[i] = 1;
  };
  const { word } = p;
  mark(ix.exact.get(word));
  if (word.length < 5) return;
  mark(ix.starts.get(p.start));
  mark(ix.tails.get(p.rest));
  mark(ix.tails.get(word));
  mark(ix.heads.get(p.head));
  mark(ix.heads.get(word));
  if (p.rest.length >= 5) mark(ix.exact.get(p.rest));
  if (p.head.length >= 5) mark(ix.exact.get(p.head));
  for (const key of p.inside) for (const v of ix.inside.get(key) ?? []) if (!met[v.at] && oneEdit(v.word, word)) met[v.at] = 1;
  if (word.length < 7) return;
  const same = ix.similar.get(p.similar);
  if (!same) return;
  // spelledLike's Dice: the word's bigrams (each time it has one) that the other holds, over the word's count and
  // the other's distinct ones; the first bigram, the same first letter, is held by all.
  const grams = (p.grams ??= bigramsOf(word)).all;
  const shared = new Map<number, number>();
  for (let g = 1; g < grams.length; g++) for (const k of same.holding.get(grams[g]) ?? []) shared.set(k, (shared.get(k) ?? 1) + 1);
  // One shared bigram (the first) is never enough: 2 / (8 + 8) < 0.55 from seven letters on.
  for (const [k, n] of shared) {
    const v = same.words[k];
    if (!met[v.at] && (2 * n) / (grams.length + v.distinct) >= 0.55) met[v.at] = 1;
  }
}

/** Whether `word` meets one vocabulary (see markMet). */
export function meetsOne(word: string, vocab: Set<string>): boolean {
  const met = new Uint8Array(1);
  markMet(probeOf(word), buildIndex([vocab]), met);
  return met[0] === 1;
}

/** What markMet looks up for one message word, made once: the same strings (hashed once) for every lookup. */
interface Probe {
  word: string;
  start: string;
  rest: string;
  head: string;
  /** The `inside` keys of one letter shorter, the same length, one letter longer. */
  inside: [string, string, string];
  similar: string;
  grams?: Bigrams;
}
function probeOf(word: string): Probe {
  const ends = word[0] + word[word.length - 1];
  const n = word.length;
  return {
    word,
    start: word.slice(0, 5),
    rest: word.slice(1),
    head: word.slice(0, -1),
    inside: [ends + (n - 1), ends + n, ends + (n + 1)],
    similar: word[0] + n,
  };
}

/** meetsOne as it was written before the index: each vocabulary word compared in turn (kept for the test). */
export const meetsOneByScan = (word: string, vocab: Set<string>) =>
  vocab.has(word) ||
  (word.length >= 5 &&
    [...vocab].some(
      (v) =>
        v.length >= 5 &&
        (v.slice(0, 5) === word.slice(0, 5) || oneEdit(v, word) || (word.length >= 7 && word.length === v.length && spelledLike(word, v))),
    ));

export interface ResolveOptions {
  /** The kind of model the question needs (a heat map: image; columns: tabular): it settles a tie. */
  implied?: Task;
  /** Words of Builder's documentation: a word outside them and the keywords may name a model without "model". */
  known?: ReadonlySet<string>;
}

export function resolveExperiment(message: string, candidates: Candidate[], opts: ResolveOptions = {}): Resolution {
  const numbered = numberWordReference(plainWords(message));
  if (numbered) return { kind: "number", experimentId: numbered };
  const words = referenceWords(message);
  if (!words) return looseReference(message, candidates, opts.known);
  const task = words.map((w) => TASK_WORDS.get(w)).find(Boolean);
  const pool = task ? candidates.filter((c) => c.task === task) : candidates;
  if (words.some((w) => NEWEST.has(w))) {
    // Candidates come newest first (the repository's order); "the last one" is the first of them. "Why did my last
    // experiment fail?" means the last one that failed (or was refused), not the newest whatever its state.
    const failedOnes = ASKS_ABOUT_FAILURE.test(message) ? pool.filter((c) => c.status === "failed" || c.status === "invalid_dataset") : [];
    const newestOf = failedOnes.length ? failedOnes : pool;
    return newestOf.length ? { kind: "one", experiment: newestOf[0], by: "newest" } : { kind: "no_match", words };
  }
  // "the vision model" with several vision models is as vague as "the model": the caller's default (which lists
  // the others) serves it better than a question back. Only a kind that fits none is worth saying so.
  if (words.every((w) => TASK_WORDS.get(w)) && pool.length > 1) return { kind: "none_named" };
  let top = bestFits(words, pool);
  if (!top.length) return { kind: "no_match", words };
  // "the heat map of my breast model" with a tabular and an image breast model: only the image one has a heat map.
  const fitting = opts.implied ? top.filter((c) => fitsKind(c.task, opts.implied!)) : [];
  if (fitting.length) top = fitting;
  return top.length === 1 ? { kind: "one", experiment: top[0], by: "words" } : { kind: "ambiguous", candidates: top };
}

/** A detection model takes images too, so a question about sending an image fits it. */
const fitsKind = (task: Task, implied: Task) => task === implied || (implied === "vision" && task === "detection");

// Words that describe many models and name none in particular, left out of a reference without a head word.
const GENERAL = new Set(["image", "images", "imagen", "imagenes", "data", "datos", "label", "labels", "cells", "scans", "model"]);

/**
 * "¿qué AUC tiene la ecografía mamaria?": no head word, but a word found neither in the documentation nor among
 * the keywords, that fits exactly one experiment, names it. Anything less certain names none.
 */
function looseReference(message: string, candidates: Candidate[], known?: ReadonlySet<string>): Resolution {
  const named = afterHead(plainWords(message));
  if (named.length) {
    const top = bestFits(named, candidates);
    if (top.length === 1) return { kind: "one", experiment: top[0], by: "words" };
  }
  if (!known) return { kind: "none_named" };
  const words = plainWords(message).filter(
    (w) => w.length >= 5 && !known.has(w) && !NEUTRAL.has(w) && !GENERAL.has(w) && !NEWEST.has(w) && !TASK_WORDS.has(w) && !/\d/.test(w),
  );
  if (!words.length) return { kind: "none_named" };
  const top = bestFits(words, candidates);
  return top.length === 1 ? { kind: "one", experiment: top[0], by: "words" } : { kind: "none_named" };
}

/**
 * "el modelo WDBC", "the model BUSI": a word right after a head word, without "of"/"de" between. It names an
 * experiment only when it fits exactly one (the caller checks), so "the model is good" still names none.
 */
function afterHead(words: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < words.length; i++) {
    const w = words[i + 1];
    if (HEADS.has(words[i]) && w.length >= 3 && !LINKS.has(w) && !NEUTRAL.has(w) && !HEADS.has(w) && !/\d/.test(w)) out.push(w);
  }
  return out;
}

/** The candidates sharing the most describing words with `words` (all of them when only kind words were given). */
function bestFits(words: string[], pool: Candidate[]): Candidate[] {
  // Each word once: a long message repeats its words, and each is looked up among every candidate's vocabulary.
  const describing = [...new Set(words)].filter((w) => !TASK_WORDS.get(w));
  if (!describing.length) return pool;
  const ix = indexOf(pool.map(vocabulary));
  const score = new Int32Array(pool.length);
  const met = new Uint8Array(pool.length);
  for (const w of describing) {
    // A word or one of its translations (spellings) meets a candidate: one point to it.
    met.fill(0);
    for (const s of spellings(w)) markMet(probeOf(s), ix, met);
    for (let i = 0; i < pool.length; i++) score[i] += met[i];
  }
  const best = score.reduce((m, s) => Math.max(m, s), 0);
  return best === 0 ? [] : pool.filter((_, i) => score[i] === best);
}

/**
 * The find_experiments tool: free words ("breast cancer", "mama", "image") rather than a reference inside a
 * sentence, matched the same way the builtin resolves, so both backends agree on which experiment a name means.
 */
export function findExperiments(query: string, candidates: Candidate[]): Candidate[] {
  const words = plainWords(query).filter((w) => !NEUTRAL.has(w) && !HEADS.has(w) && !OPENERS.has(w));
  if (!words.length) return [];
  const task = words.map((w) => TASK_WORDS.get(w)).find(Boolean);
  const pool = task ? candidates.filter((c) => c.task === task) : candidates;
  return words.some((w) => NEWEST.has(w))
    ? pool.slice(0, 1)
    : bestFits(
        words.filter((w) => !NEWEST.has(w)),
        pool,
      );
}
