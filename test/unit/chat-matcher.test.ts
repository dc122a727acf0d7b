import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { fold, featurize, MAX_CHARS } from "../../src/chat/matcher/features.js";
import { IntentMatcher } from "../../src/chat/matcher/matcher.js";
import { readIntentTables, readWeights, WEIGHTS_PATH } from "../../src/chat/matcher/table.js";
import { examplesHash, examplesOf, train } from "../../src/chat/matcher/train.js";
import { MIN_CONFIDENCE, recognise } from "../../src/chat/builtin/intents.js";
import { readDocs } from "../../src/chat/docs.js";
import { parseGlossary } from "../../src/chat/glossary.js";

// Issue 53: the chat's intents are learnt from src/chat/intents/{en,es}.json. The committed weights must be what
// the table gives (scripts/train-chat-intents.ts writes them), and the matcher must know every example it was given.

const tables = readIntentTables();
const examples = examplesOf(tables);

describe("the intent matcher's data and weights", () => {
  it("has the same intents in both languages, each with examples", () => {
    expect(Object.keys(tables.es).sort()).toEqual(Object.keys(tables.en).sort());
    for (const lang of ["en", "es"] as const)
      for (const [intent, list] of Object.entries(tables[lang])) expect(list.length, `${lang} ${intent}`).toBeGreaterThanOrEqual(2);
    expect(examples.length).toBeGreaterThanOrEqual(250);
  });

  it("retraining from the table reproduces the committed weights byte for byte", () => {
    const committed = fs.readFileSync(WEIGHTS_PATH, "utf8");
    expect(readWeights().examples_sha256, "the table changed: run npx tsx scripts/train-chat-intents.ts").toBe(examplesHash(examples));
    expect(`${JSON.stringify(train(examples), null, 1)}\n`).toBe(committed);
  }, 60_000);

  it("puts every example it was trained on in its own intent and language", () => {
    const m = new IntentMatcher(readWeights());
    const wrong = examples.filter((e) => m.match(e.text).intent !== e.intent).map((e) => `${e.text} → ${m.match(e.text).intent}`);
    // A few examples may sit between two intents; more than 1 % means the model is too weak for its table.
    expect(wrong.length, wrong.join("\n")).toBeLessThanOrEqual(Math.floor(examples.length / 100));
    const lang = examples.filter((e) => (m.spanish(e.text) >= 0.5 ? "es" : "en") !== e.lang).map((e) => e.text);
    expect(lang).toEqual([]);
  });
});

describe("features", () => {
  it("fold typos, accents and case into shared n-grams", () => {
    expect(fold("¿Cómo va el EXPERIMENTO 42?")).toBe("¿como va el experimento 0");
    const shared = (a: string, b: string) => {
      const x = new Set(featurize(a).index);
      const y = featurize(b).index;
      return y.filter((i) => x.has(i)).length / y.length;
    };
    expect(shared("experimento", "experimneto")).toBeGreaterThan(0.4);
    expect(shared("experimento", "diabetes")).toBeLessThan(0.2);
  });

  it("reads only the first MAX_CHARS characters, so a long message costs what a short one does", () => {
    const long = "x".repeat(MAX_CHARS) + " ¿qué significa VPN?";
    expect(featurize(long)).toEqual(featurize("x".repeat(MAX_CHARS)));
  });
});

describe("what the chat does with what it is unsure of", () => {
  const glossary = parseGlossary(readDocs());
  it("does not guess: below MIN_CONFIDENCE the intent is not_understood", () => {
    expect(MIN_CONFIDENCE).toBeGreaterThan(0);
    for (const m of ["zzzz qqqq", "tell me a joke about sockets", "cuéntame un chiste de enchufes"])
      expect(recognise(m, glossary, {}), m).toEqual({ kind: "not_understood" });
  });

  it("reads a Spanish question without rewriting it into English", () => {
    expect(recognise("¿qué significa VPN?", glossary, {})).toEqual({ kind: "explain_metric", metric: "npv" });
    expect(recognise("borra el experimento 5", glossary, {})).toEqual({ kind: "cannot_do", action: "delete", experimentId: 5 });
    expect(recognise("compara los experimentos 1 y 2 en sensibilidad", glossary, {})).toMatchObject({
      kind: "best_model",
      metric: "sensitivity",
      experimentIds: [1, 2],
    });
  });
});
