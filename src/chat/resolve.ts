import type { Task } from "./facts.js";
import { bigramsOf, similarBigrams, spelledLike, type Bigrams } from "./spelling.js";

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
  const rest = (x: string, skip: number) => x.slice(i + skip);
  return rest(a, 1) === rest(b, 1) || rest(a, 0) === rest(b, 1) || rest(a, 1) === rest(b, 0);
}

/**
 * A vocabulary's words of five letters or more, indexed so that a message word finds the few it may be a misspelling
 * of without being compared with every one (issue 53: a 600-character message of unknown words against 200
 * descriptions of 2,000 characters compared each word with all of theirs, ~0.8 s per resolver pass,
 * bench/chat/worst-case.ts). Built once per vocabulary, which is itself cached by its text.
 */
interface Fuzzy {
  /** The words of five letters or more. */
  long: Set<string>;
  /** Their first five letters. */
  starts: Set<string>;
  /** Each without its first letter, and without its last. */
  tails: Set<string>;
  heads: Set<string>;
  /** By first letter, last letter and length ("be6": "breast"): one edit elsewhere keeps all three but the length. */
  inside: Map<string, string[]>;
  /** The words of seven letters or more by first letter and length, with their bigrams: what spelledLike compares. */
  similar: Map<string, Array<{ word: string; grams?: Bigrams }>>;
}
const FUZZY = new WeakMap<Set<string>, Fuzzy>();
const push = <T>(m: Map<string, T[]>, key: string, value: T) => {
  const list = m.get(key);
  if (list) list.push(value);
  else m.set(key, [value]);
};
function fuzzy(vocab: Set<string>): Fuzzy {
  let f = FUZZY.get(vocab);
  if (!f) {
    f = { long: new Set(), starts: new Set(), tails: new Set(), heads: new Set(), inside: new Map(), similar: new Map() };
    for (const v of vocab) {
      if (v.length < 5) continue;
      f.long.add(v);
      f.starts.add(v.slice(0, 5));
      f.tails.add(v.slice(1));
      f.heads.add(v.slice(0, -1));
      push(f.inside, v[0] + v[v.length - 1] + v.length, v);
      if (v.length >= 7) push(f.similar, v[0] + v.length, { word: v });
    }
    FUZZY.set(vocab, f);
  }
  return f;
}

/**
 * "ultrasound" meets "ultrasounds" and "diabetic" meets "diabetes" (a shared start of five letters); "brest" meets
 * "breast" (one typo, only in words of five letters or more, where one letter cannot make another common word);
 * "pnuemonia" meets "pneumonia" (two letters swapped in a word of seven or more: most bigrams shared, spelling.ts).
 * The same answer as comparing `word` with each vocabulary word of five letters or more (meetsOneByScan, which
 * test/unit/chat-resolve.test.ts compares with this): one edit at the first or the last letter is found by looking the
 * rest up; one edit anywhere else keeps the first and last letters and changes the length by at most one; spelledLike
 * needs the same first letter, and the same length is asked for.
 */
export function meetsOne(word: string, vocab: Set<string>): boolean {
  return meetsProbe(probeOf(word), vocab);
}

/** What meetsOne looks up for one message word, made once: the same strings (hashed once) for every vocabulary. */
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
const PROBES = new Map<string, Probe>();
function probeOf(word: string): Probe {
  let p = PROBES.get(word);
  if (!p) {
    if (PROBES.size >= 2_000) PROBES.clear();
    const ends = word[0] + word[word.length - 1];
    const n = word.length;
    p = {
      word,
      start: word.slice(0, 5),
      rest: word.slice(1),
      head: word.slice(0, -1),
      inside: [ends + (n - 1), ends + n, ends + (n + 1)],
      similar: word[0] + n,
    };
    PROBES.set(word, p);
  }
  return p;
}

function meetsProbe(p: Probe, vocab: Set<string>): boolean {
  const { word } = p;
  if (vocab.has(word)) return true;
  if (word.length < 5) return false;
  const f = fuzzy(vocab);
  if (f.starts.has(p.start)) return true;
  if (f.tails.has(p.rest) || f.long.has(p.rest) || f.tails.has(word)) return true;
  if (f.heads.has(p.head) || f.long.has(p.head) || f.heads.has(word)) return true;
  for (const key of p.inside) {
    const near = f.inside.get(key);
    if (near) for (const v of near) if (oneEdit(v, word)) return true;
  }
  if (word.length < 7) return false;
  const same = f.similar.get(p.similar);
  if (!same) return false;
  const grams = (p.grams ??= bigramsOf(word));
  return same.some((v) => similarBigrams(grams, (v.grams ??= bigramsOf(v.word))));
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
/** A word or one of its translations meets the vocabulary. */
const meets = (probes: Probe[], vocab: Set<string>) => probes.some((p) => meetsProbe(p, vocab));

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
  // Each word once: a long message repeats its words, and each is compared with every candidate's vocabulary.
  const describing = [...new Set(words)].filter((w) => !TASK_WORDS.get(w));
  if (!describing.length) return pool;
  const probes = describing.map((w) => spellings(w).map(probeOf));
  // Each candidate's vocabulary is built once, not once per word: a description holds up to 2,000 characters.
  const scored = pool.map((c) => {
    const vocab = vocabulary(c);
    return { c, score: probes.filter((ps) => meets(ps, vocab)).length };
  });
  const best = scored.reduce((m, s) => Math.max(m, s.score), 0);
  return best === 0 ? [] : scored.filter((s) => s.score === best).map((s) => s.c);
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
