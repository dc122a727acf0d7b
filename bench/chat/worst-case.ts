// Worst-case cost on the event loop of what the builtin chat does to one message before answering (issues 39, 53):
// the language, the intent (the matcher's n-grams and dot products), the slots, the words that name nothing, and the
// experiment reference among 200 experiments with 2,000-character descriptions. Messages at the route's
// 8000-character limit, built to make each step work hardest. Each run also does what the service does before the
// builtin sees the message (the diagnosis check over the whole message, the language of the conversation) and what
// the builtin does with a conversation (the experiment named by earlier messages), with a history of 12 messages
// (service.ts HISTORY) as hard as the message itself, its newest user message new to each run. Run: npx tsx bench/chat/worst-case.ts [runs] [workspace: one|distinct]
import { parseGlossary } from "../../src/chat/glossary.js";
import { readDocs } from "../../src/chat/docs.js";
import { conversationLanguage, detectLanguage } from "../../src/chat/language.js";
import { asksForDiagnosis } from "../../src/chat/safety.js";
import { resolveExperiment, vocabulariesKey } from "../../src/chat/resolve.js";
const EARLIER_NAMED = new Map<string, number>();
import { knownWords } from "../../src/chat/builtin/index.js";
import { recognise } from "../../src/chat/builtin/intents.js";
import { experimentNumbers, metricsNamedIn, taskIn, statusIn } from "../../src/chat/builtin/slots.js";
import type { Candidate } from "../../src/chat/resolve.js";

const RUNS = Number(process.argv[2] ?? 50);
const glossary = parseGlossary(readDocs());
// Two workspaces of 200 experiments (the most tools.ts lists) with 2,000-character descriptions (DESCRIPTION_MAX):
// one word repeated, and distinct made-up words (what the resolver compares a message word with: every word of five
// letters or more of every description). The second is the harder: before issue 53's index each unknown message word
// was compared with all ~280 words of each description.
let seed = 53;
/** mulberry32: the same words on every run. */
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const madeUpWord = (min: number, max: number) =>
  Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, () => "abcdefghijklmnopqrstuvwxyz"[Math.floor(random() * 26)]).join(
    "",
  );
const madeUpText = (chars: number) => {
  let s = "";
  while (s.length < chars) s += `${madeUpWord(5, 10)} `;
  return s.slice(0, chars);
};
const workspace = (description: (i: number) => string) =>
  Array.from({ length: 200 }, (_, i) => ({
    experiment_id: i + 1,
    name: `Experiment name ${i}`,
    description: description(i),
    task: "vision",
    status: "ready",
  })) as unknown as Candidate[];
const WORKSPACES: Record<string, Candidate[]> = {
  "one word repeated": workspace(() => "d ".repeat(1000)),
  "distinct words": workspace(() => madeUpText(2000)),
};

/** What service.ts and builtin/index.ts do per message, in the same order (their reads are awaited I/O, not measured here). */
function understandOne(message: string, history: Array<{ role: string; content: string }>, listed: Candidate[]) {
  // builtin/index.ts: the listed experiments become new candidates on every request (candidateOf).
  const candidates = listed.map((c) => ({ ...c }));
  // service.ts: the diagnosis refusal reads the whole message; the conversation's language its history.
  asksForDiagnosis(message);
  const lang = conversationLanguage(history);
  const text = message.slice(0, 600);
  detectLanguage(text, lang);
  const known = knownWords(glossary.words, candidates);
  // builtin/index.ts earlierExperiment: the last 3 user messages, newest first, until one names an experiment, each
  // read once per workspace state (kept by its text).
  const workspace = `${candidates.map((c) => `${c.experiment_id}/${c.task}/${c.status}`).join(",")}|${vocabulariesKey(candidates)}`;
  for (const m of history
    .filter((h) => h.role === "user")
    .slice(-3)
    .reverse()) {
    const earlier = m.content.slice(0, 600);
    const key = `${workspace}\u0000${earlier}`;
    let named = EARLIER_NAMED.get(key);
    if (named === undefined) {
      const numbered = experimentNumbers(earlier)[0];
      const r = numbered ? undefined : resolveExperiment(earlier, candidates, { known });
      named = numbered ?? (r?.kind === "one" ? r.experiment.experiment_id : 0);
      EARLIER_NAMED.set(key, named);
    }
    if (named) break;
  }
  resolveExperiment(text, candidates, { known });
  recognise(text, glossary, {});
  metricsNamedIn(text, glossary);
  taskIn(text);
  statusIn(text);
}

const fill = (unit: string) => unit.repeat(Math.ceil(8000 / unit.length)).slice(0, 8000);
const MESSAGES: Record<string, string> = {
  "misspelt long words": fill("qwertyuiopas "),
  "near-misses of Builder's words": fill("sensitivty specifcity calibraton "),
  "Spanish, head words": fill("el modelo de mama del experimento "),
  "one 8000-letter word": "x".repeat(8000),
  "clinic phrases": fill("can I use this to decide "),
  "snake_case and digits": fill("class_too_small 42 "),
  "accents and marks": fill("¿qué?¡ñá "),
  "distinct unknown words": madeUpText(8000),
  // Words of the distinct-words descriptions with two letters swapped: each one is near a word of some description.
  "misspelt description words": fill(
    WORKSPACES["distinct words"]
      .slice(0, 100)
      .map((c) => c.description!.split(" ")[0])
      .map((w) => w[0] + w[2] + w[1] + w.slice(3))
      .join(" ") + " ",
  ),
};

// Wall time is what the event loop waits; on a shared, loaded machine it also counts the time the scheduler gave
// other processes, so the process's own CPU time is printed beside it (the two meet on an idle machine).
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)].toFixed(2)} ms  max ${s[s.length - 1].toFixed(2)} ms`;
};
const only = process.argv[3];
const all: number[] = [];
for (const [space, listed] of Object.entries(WORKSPACES)) {
  if (only && !space.startsWith(only)) continue;
  understandOne("warm up: ¿cómo va el experimento 1?", [], listed);
  console.log(
    `${RUNS} runs per message; each run: diagnosis check, language, intent, slots, known words, resolver over ${listed.length} experiments ` +
      `(descriptions: ${space}), alone and after a 12-message history of the same message`,
  );
  for (const [name, message] of Object.entries(MESSAGES)) {
    for (const [label, history] of [
      ["", []],
      [" +history", Array.from({ length: 12 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: message }))],
    ] as const) {
      const wall: number[] = [];
      const cpu: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        // A conversation goes on: its newest earlier question is new to each run, the older ones were read before.
        const h = history.map((m, k) => (k === history.length - 2 ? { ...m, content: `${i} ${m.content}` } : m));
        understandOne(message, h, listed);
        wall.push(performance.now() - t0);
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1000);
      }
      all.push(...wall);
      console.log(`${(name + label).padEnd(40)} wall ${stats(wall)}   cpu ${stats(cpu)}`);
    }
  }
}
console.log(`${"every message, every run".padEnd(40)} wall ${stats(all)}`);
