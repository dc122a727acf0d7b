// Worst-case cost on the event loop of what the builtin chat does to one message before answering (issues 39, 53):
// the language, the intent (the matcher's n-grams and dot products), the slots, the words that name nothing, and the
// experiment reference among 200 experiments with 2,000-character descriptions. Messages at the route's
// 8000-character limit, built to make each step work hardest. Each run also does what the service does before the
// builtin sees the message (the diagnosis check over the whole message, the language of the conversation) and what
// the builtin does with a conversation (the experiment named by earlier messages), with a history of 12 messages
// (service.ts HISTORY) as hard as the message itself. Run: npx tsx bench/chat/worst-case.ts [runs]
import { parseGlossary } from "../../src/chat/glossary.js";
import { readDocs } from "../../src/chat/docs.js";
import { conversationLanguage, detectLanguage } from "../../src/chat/language.js";
import { asksForDiagnosis } from "../../src/chat/safety.js";
import { resolveExperiment, vocabulary } from "../../src/chat/resolve.js";
import { recognise } from "../../src/chat/builtin/intents.js";
import { experimentNumbers, metricsNamedIn, taskIn, statusIn } from "../../src/chat/builtin/slots.js";
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

/** What service.ts and builtin/index.ts do per message, in the same order (their reads are awaited I/O, not measured here). */
function understandOne(message: string, history: Array<{ role: string; content: string }>) {
  // service.ts: the diagnosis refusal reads the whole message; the conversation's language its history.
  asksForDiagnosis(message);
  const lang = conversationLanguage(history);
  const text = message.slice(0, 600);
  detectLanguage(text, lang);
  const starts = new Set<string>();
  for (const c of candidates) for (const w of vocabulary(c)) if (w.length >= 5) starts.add(w.slice(0, 4));
  const known = new Set([...glossary.words, ...examples].filter((w) => !starts.has(w.slice(0, 4))));
  // builtin/index.ts earlierExperiment: the last 3 user messages, newest first, until one names an experiment.
  for (const m of history
    .filter((h) => h.role === "user")
    .slice(-3)
    .reverse()) {
    const earlier = m.content.slice(0, 600);
    if (experimentNumbers(earlier)[0] || resolveExperiment(earlier, candidates, { known }).kind === "one") break;
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
};

// Wall time is what the event loop waits; on a shared, loaded machine it also counts the time the scheduler gave
// other processes, so the process's own CPU time is printed beside it (the two meet on an idle machine).
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)].toFixed(2)} ms  max ${s[s.length - 1].toFixed(2)} ms`;
};
understandOne("warm up: ¿cómo va el experimento 1?", []);
console.log(
  `${RUNS} runs per message; each run: diagnosis check, language, intent, slots, known words, resolver over ${candidates.length} experiments, ` +
    `alone and after a 12-message history of the same message`,
);
const all: number[] = [];
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
      understandOne(message, [...history]);
      wall.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
    all.push(...wall);
    console.log(`${(name + label).padEnd(40)} wall ${stats(wall)}   cpu ${stats(cpu)}`);
  }
}
console.log(`${"every message, every run".padEnd(40)} wall ${stats(all)}`);
