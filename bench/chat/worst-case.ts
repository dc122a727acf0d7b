// Worst-case cost on the event loop of what the builtin chat does to one message before answering (issues 39, 53):
// the language, the intent (the matcher's n-grams and dot products), the slots, the words that name nothing, and the
// experiment reference among 200 experiments with 2,000-character descriptions. Messages at the route's
// 8000-character limit, built to make each step work hardest. Run: npx tsx bench/chat/worst-case.ts [runs]
import { parseGlossary } from "../../src/chat/glossary.js";
import { readDocs } from "../../src/chat/docs.js";
import { detectLanguage } from "../../src/chat/language.js";
import { resolveExperiment, vocabulary } from "../../src/chat/resolve.js";
import { recognise } from "../../src/chat/builtin/intents.js";
import { metricsNamedIn, taskIn, statusIn } from "../../src/chat/builtin/slots.js";
import { exampleWords } from "../../src/chat/matcher/table.js";
import type { Candidate } from "../../src/chat/resolve.js";

const RUNS = Number(process.argv[2] ?? 50);
const glossary = parseGlossary(readDocs());
const candidates = Array.from({ length: 200 }, (_, i) => ({
  experiment_id: i + 1,
  name: `Experiment name ${i}`,
  description: "d ".repeat(1000),
  task: "vision",
  status: "ready",
})) as unknown as Candidate[];
const examples = exampleWords();

/** What builtin/index.ts does per message, in the same order (its reads are awaited I/O, not measured here). */
function understandOne(message: string) {
  const text = message.slice(0, 600);
  detectLanguage(text);
  const starts = new Set<string>();
  for (const c of candidates) for (const w of vocabulary(c)) if (w.length >= 5) starts.add(w.slice(0, 4));
  const known = new Set([...glossary.words, ...examples].filter((w) => !starts.has(w.slice(0, 4))));
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
};

// Wall time is what the event loop waits; on a shared, loaded machine it also counts the time the scheduler gave
// other processes, so the process's own CPU time is printed beside it (the two meet on an idle machine).
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)].toFixed(2)} ms  max ${s[s.length - 1].toFixed(2)} ms`;
};
understandOne("warm up: ¿cómo va el experimento 1?");
console.log(`${RUNS} runs per message; each run: language, intent, slots, known words, resolver over ${candidates.length} experiments`);
for (const [name, message] of Object.entries(MESSAGES)) {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    understandOne(message);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  console.log(`${name.padEnd(32)} wall ${stats(wall)}   cpu ${stats(cpu)}`);
}
