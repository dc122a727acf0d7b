// Worst-case cost on the event loop of what the builtin chat does to one message before answering (issue 39):
// language detection, misspelling correction against Builder's words (edit distance), the Spanish rewrite, the
// experiment reference and the intent. Messages at the route's 8000-character limit, built to make each step work
// hardest. Run: npx tsx bench/chat/worst-case.ts
import { parseGlossary } from "../../src/chat/glossary.js";
import { readDocs } from "../../src/chat/docs.js";
import { detectLanguage } from "../../src/chat/language.js";
import { understand } from "../../src/chat/understand.js";
import { resolveExperiment } from "../../src/chat/resolve.js";
import { recognise } from "../../src/chat/builtin/intents.js";
import type { Candidate } from "../../src/chat/resolve.js";

const glossary = parseGlossary(readDocs());
const userWords = Array.from({ length: 200 }, (_, i) => `experimentname${i} descripcion${i} columna${i}`)
  .join(" ")
  .split(" ");
const candidates = Array.from({ length: 200 }, (_, i) => ({
  experiment_id: i + 1,
  name: `Experiment name ${i}`,
  description: "d ".repeat(1000),
  task: "vision",
  status: "ready",
})) as unknown as Candidate[];

const fill = (unit: string) => unit.repeat(Math.ceil(8000 / unit.length)).slice(0, 8000);
const MESSAGES: Record<string, string> = {
  "misspelt long words": fill("qwertyuiopas "),
  "near-misses of Builder's words": fill("sensitivty specifcity calibraton "),
  "Spanish, head words": fill("el modelo de mama del experimento "),
  "one 8000-letter word": "x".repeat(8000),
  "clinic phrases": fill("can I use this to decide "),
};

for (const [name, message] of Object.entries(MESSAGES)) {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    detectLanguage(message);
    const text = understand(message, glossary.words, userWords);
    resolveExperiment(text, candidates, { known: glossary.words });
    recognise(text, glossary, {});
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(32)} median ${times[2].toFixed(1)} ms  max ${times[4].toFixed(1)} ms`);
}
