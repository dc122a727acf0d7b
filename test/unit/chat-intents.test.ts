import { describe, expect, it } from "vitest";
import { parseConfig, ConfigError } from "../../src/config.js";
import { recognise } from "../../src/chat/builtin/intents.js";
import { experimentNumbers, metricIn, snakeCaseWords } from "../../src/chat/builtin/slots.js";
import { readDocs } from "../../src/chat/docs.js";
import { parseGlossary } from "../../src/chat/glossary.js";
import { asksForDiagnosis, quote } from "../../src/chat/safety.js";
import { generatedMessages } from "../helpers/generated-text.js";

const glossary = parseGlossary(readDocs());

describe("builtin chat: what it recognises", () => {
  it("finds experiment numbers however they are written, and nothing in other numbers", () => {
    expect(experimentNumbers("how is experiment 42 doing?")).toEqual([42]);
    expect(experimentNumbers("compare exp 3 and 5, model #9")).toEqual([3, 5, 9]);
    expect(experimentNumbers("I have 12 patients and 3 classes")).toEqual([]);
    expect(experimentNumbers("compara los experimentos 1 y 2")).toEqual([1, 2]);
  });

  it("maps the common questions to intents, using the conversation's experiment for 'it'", () => {
    const r = (m: string, experimentId?: number) => recognise(m, glossary, { experimentId });
    expect(r("why was experiment 11 refused?")).toEqual({ kind: "why_refused", experimentId: 11 });
    expect(r("what does class_too_small mean")).toEqual({ kind: "explain_code", code: "class_too_small" });
    expect(r("which model is best for sensitivity?")).toMatchObject({ kind: "best_model", metric: "sensitivity" }); // its own metric since issue 37
    expect(r("which model is best for recall?")).toMatchObject({ kind: "best_model", metric: "recall" });
    expect(r("what does F-macro mean?")).toEqual({ kind: "explain_metric", metric: "f_macro" });
    expect(r("how do I call predict for it?", 7)).toMatchObject({ kind: "predict_howto", experimentId: 7 });
    expect(r("and its metrics?", 7)).toEqual({ kind: "experiment_status", experimentId: 7 });
    expect(r("show my failed experiments")).toMatchObject({ kind: "list_experiments", status: "failed" });
    // Issue 53: what the matcher is unsure of is not guessed (it was a documentation search before).
    expect(r("tell me a joke about sockets")).toEqual({ kind: "not_understood" });
  });
});

describe("chat safety", () => {
  it("recognises requests for a diagnosis and leaves ordinary questions alone", () => {
    for (const m of [
      "Does this patient have pneumonia?",
      "Is this lesion malignant?",
      "please diagnose my patient",
      "should I operate?",
      "read this x-ray for me",
    ]) {
      expect(asksForDiagnosis(m), m).toBe(true);
    }
    for (const m of [
      "why was my dataset refused?",
      "what does the diagnosis column need to hold?",
      "how good is experiment 42?",
      "how do I call predict on an image?",
    ]) {
      expect(asksForDiagnosis(m), m).toBe(false);
    }
  });

  it("quotes user data on one line without a way out of the quote", () => {
    expect(quote("a`b\nIGNORE")).toBe("`a'b IGNORE`");
    expect(quote("x".repeat(100), 10)).toBe("`xxxxxxxxxx…`");
  });

  it("refuses CHAT_BACKEND=openai without CHAT_BASE_URL at start-up", () => {
    expect(() => parseConfig({ CHAT_BACKEND: "openai" })).toThrow(ConfigError);
    expect(parseConfig({ CHAT_BACKEND: "openai", CHAT_BASE_URL: "http://localhost:8000/v1" }).CHAT_TIMEOUT_MS).toBe(60_000);
    expect(parseConfig({}).CHAT_BACKEND).toBe("builtin");
  });
});

// Issue 42, finding 2: two quadratic patterns were rewritten to run in linear time; the old ones are the reference
// the rewrite must agree with on generated messages. (The intents' `A.*B` patterns went with issue 53's matcher.)
describe("builtin chat: the linear rewrite recognises what the old patterns recognised", () => {
  const OLD_MAP50_95 = /\bmap\s*@?\s*(0?\.5|50)\s*[:_-]\s*(0?\.95|95)\b/i;
  const OLD_SNAKE = /[a-z][a-z0-9]*(?:_[a-z0-9]+)+/gi;
  const WORDS = [
    "call",
    "model",
    "models",
    "api",
    "inputs",
    "input",
    "columns",
    "data_cols",
    "expects",
    "takes",
    "use",
    "run",
    "query",
    "the",
    "my",
    "this",
    "list",
    "show",
    "which",
    "how many",
    "what",
    "all",
    "experiment",
    "experiments",
    "do i have",
    "have i",
    "predict",
    "why",
    "it",
    "x-ray",
    "map",
    "@",
    "0.5",
    ".5",
    "50",
    ":",
    "_",
    "-",
    "0.95",
    "95",
    "class_too_small",
    "image_not_found",
    "a1",
    "9",
    "_x",
    "abc_",
    "snake_case_word",
  ];
  const GLUE = [" ", "  ", "\t", ", ", "\n", "", "_", "-", "@"];
  const old = (m: string) => ({
    map50_95: OLD_MAP50_95.test(m),
    snake: [...m.matchAll(OLD_SNAKE)].map((x) => x[0]),
  });
  const now = (m: string) => ({
    map50_95: metricIn(m, glossary) === "map50_95",
    snake: snakeCaseWords(m),
  });

  it("on 20000 generated messages", () => {
    let snakes = 0;
    for (const m of generatedMessages(7, 20_000, WORDS, GLUE)) {
      const o = old(m);
      expect([m, now(m)]).toEqual([m, o]);
      if (o.snake.length) snakes++;
    }
    expect(snakes).toBeGreaterThan(1_000);
  });
});
