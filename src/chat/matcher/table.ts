import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { IntentTable, TrainedWeights } from "./train.js";

// Where the chat's intent data lives: src/chat/intents/, beside the code, edited without touching it (docs/chat.md).
// Read once at start-up, synchronously, like the docs index's files.

const here = path.dirname(fileURLToPath(import.meta.url));
export const INTENTS_DIR = path.resolve(here, "../intents");
export const WEIGHTS_PATH = path.join(INTENTS_DIR, "weights.json");

const readJson = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(INTENTS_DIR, file), "utf8"));

export function readIntentTables(): Record<"en" | "es", IntentTable> {
  return { en: readJson("en.json") as IntentTable, es: readJson("es.json") as IntentTable };
}

export const readWeights = () => readJson("weights.json") as TrainedWeights;

export interface SlotVocabulary {
  metrics: Record<string, string>;
  tasks: Record<"vision" | "data" | "detection", string[]>;
  statuses: Record<string, string[]>;
  thresholds: string[];
  per_class: string[];
}
export const readSlotVocabulary = () => readJson("slots.json") as SlotVocabulary;
export const readDocsTopics = () => readJson("docs-topics.json") as Record<string, string>;

/** Every word of the example questions, accent-folded: words of questions, not names of the user's things. */
export function exampleWords(): Set<string> {
  const tables = readIntentTables();
  const words = new Set<string>();
  for (const table of [tables.en, tables.es])
    for (const examples of Object.values(table))
      for (const e of examples)
        for (const w of e
          .normalize("NFD")
          .replace(/[\u0300-\u036f]/g, "")
          .toLowerCase()
          .split(/[^a-z0-9]+/))
          if (w) words.add(w);
  return words;
}
