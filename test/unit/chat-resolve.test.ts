import { describe, expect, it } from "vitest";
import { findExperiments, meetsOne, meetsOneByScan, referenceWords, resolveExperiment, type Candidate } from "../../src/chat/resolve.js";
import { asksForHeatMap, askWhich, heatMapMismatch } from "../../src/chat/builtin/resolve-replies.js";

// Newest first, as the repository lists them: the ultrasound model is the newest, so "newest wins" would pick it.
const ULTRASOUND: Candidate = {
  experiment_id: 3,
  task: "vision",
  status: "ready",
  name: "Breast ultrasound",
  description: null,
  dataset: "u1/busi_scans/images.zip",
  label_cols: ["finding"],
};
const PIMA: Candidate = {
  experiment_id: 2,
  task: "data",
  status: "ready",
  name: "Diabetes (Pima)",
  description: "onset within five years",
  dataset: "u1/exp2/pima.zip",
  label_cols: ["outcome"],
};
const WDBC: Candidate = {
  experiment_id: 1,
  task: "data",
  status: "failed",
  name: "Breast cancer (WDBC)",
  description: null,
  dataset: "u1/exp1/data.zip",
  label_cols: ["diagnosis"],
};
const ALL = [ULTRASOUND, PIMA, WDBC];
const picked = (message: string, cs = ALL) => {
  const r = resolveExperiment(message, cs);
  return r.kind === "one" ? r.experiment.experiment_id : r.kind;
};

describe("resolveExperiment", () => {
  it("picks the experiment whose name fits best, not the newest", () => {
    expect(picked("Tell me about my breast cancer model")).toBe(1);
    expect(picked("how good is the diabetes model?")).toBe(2);
    expect(picked("the heat map of the ultrasound one")).toBe(3);
  });

  it("asks back when two fit equally", () => {
    const r = resolveExperiment("how is my breast model doing?", ALL);
    expect(r.kind).toBe("ambiguous");
    expect(r.kind === "ambiguous" && r.candidates.map((c) => c.experiment_id)).toEqual([3, 1]);
  });

  it("says no match for a named thing that fits none, instead of falling back", () => {
    expect(resolveExperiment("my kidney model", ALL)).toEqual({ kind: "no_match", words: ["kidney"] });
  });

  it("leaves messages that name nothing to the caller's default", () => {
    for (const m of [
      "Can the model run on a GPU?",
      "Does the chat see the other user's model?",
      "my tabular model",
      "How do I call my model?",
      "what is the best model by AUC?",
      "list my experiments",
      "what does recall mean?",
      "is this one good?",
    ]) {
      expect(resolveExperiment(m, ALL).kind, m).toBe("none_named");
    }
  });

  it("ignores accents and case, and reads a few Spanish forms", () => {
    expect(picked("¿Cómo va mi modelo de DIABETES?")).toBe(2);
    expect(picked("el último modelo")).toBe(3);
    expect(picked("mi modelo de mama")).toBe("ambiguous");
    // The word as written: a name may use it ("Cáncer de mama") or its translation ("Breast ultrasound"); both are matched.
    expect(referenceWords("mi modelo de mama")).toEqual(["mama"]);
  });

  it("forgives one typo in a longer word, not two", () => {
    expect(picked("my brest cancer model")).toBe(1);
    expect(picked("the diabtes model")).toBe(2);
    expect(picked("the ultrasund one")).toBe(3);
    expect(picked("the dabtes model")).toBe("no_match");
  });

  it("reads the newest, number words, task words and dataset file names", () => {
    expect(picked("the last one")).toBe(3);
    expect(picked("my latest tabular model")).toBe(2);
    expect(picked("my image model")).toBe(3);
    expect(picked("my detection model")).toBe("no_match");
    expect(resolveExperiment("what about experiment three?", ALL)).toEqual({ kind: "number", experimentId: 3 });
    expect(picked("the pima model")).toBe(2);
    expect(picked("the model for diabetes")).toBe(2);
  });

  it("does not guess a disease from a dataset's file name: an unnamed wdbc experiment is not 'breast cancer'", () => {
    const unnamed = { ...WDBC, name: null, description: null, dataset: "u1/wdbc/data.zip" };
    expect(picked("the breast cancer model", [PIMA, unnamed])).toBe("no_match");
    expect(picked("the wdbc model", [PIMA, unnamed])).toBe(1);
  });

  it("'my last experiment' that failed is the newest failed one, not the newest", () => {
    const failed = { ...PIMA, status: "failed" };
    const ready = { ...WDBC, experiment_id: 9, status: "ready" };
    expect(picked("why did my last experiment fail?", [ready, failed])).toBe(PIMA.experiment_id);
    expect(picked("how good is my last experiment?", [ready, failed])).toBe(9);
  });

  it("takes no word for a key of Object.prototype", () => {
    expect(resolveExperiment("my constructor model", ALL)).toEqual({ kind: "no_match", words: ["constructor"] });
    expect(findExperiments("constructor", ALL)).toEqual([]);
  });

  it("only ever considers the candidates it is given", () => {
    expect(picked("my breast cancer model", [PIMA])).toBe("no_match");
  });
});

describe("the vocabulary index (issue 53: a long message against 200 long descriptions)", () => {
  // Words from four letters, so most pairs share a start, a first or last letter, or are one or two edits apart: the
  // cases the index answers by lookups as well as the ones it compares.
  let seed = 11;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const word = (min: number, max: number) =>
    Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, () => "abde"[Math.floor(random() * 4)]).join("");
  const edit = (w: string) => {
    const i = Math.floor(random() * w.length);
    const c = "abdex"[Math.floor(random() * 5)];
    const r = random();
    return r < 0.25
      ? w.slice(0, i) + c + w.slice(i + 1)
      : r < 0.5
        ? w.slice(0, i) + w.slice(i + 1)
        : r < 0.75
          ? w.slice(0, i) + c + w.slice(i)
          : w.slice(0, i) + w.slice(i + 1, i + 2) + w.slice(i, i + 1) + w.slice(i + 2);
  };

  it("finds exactly the words that comparing with every vocabulary word finds", () => {
    let met = 0;
    for (let round = 0; round < 40; round++) {
      const vocab = new Set(Array.from({ length: 30 }, () => word(3, 10)));
      const known = [...vocab];
      for (let k = 0; k < 60; k++) {
        const w = k % 3 === 0 ? word(3, 11) : edit(edit(known[Math.floor(random() * known.length)]));
        const want = meetsOneByScan(w, vocab);
        expect(meetsOne(w, vocab), `${w} in ${known.join(" ")}`).toBe(want);
        if (want) met++;
      }
    }
    // Both answers occur often enough for the comparison to mean something.
    expect(met).toBeGreaterThan(300);
    expect(met).toBeLessThan(2100);
  });
});

describe("findExperiments (the find_experiments tool)", () => {
  const ids = (q: string) => findExperiments(q, ALL).map((c) => c.experiment_id);
  it("matches free words the same way the builtin resolves a reference", () => {
    expect(ids("breast cancer")).toEqual([1]);
    expect(ids("Breast")).toEqual([3, 1]);
    expect(ids("mama")).toEqual([3, 1]);
    expect(ids("diabetes model")).toEqual([2]);
    expect(ids("image")).toEqual([3]);
    expect(ids("latest tabular")).toEqual([2]);
    expect(ids("kidney")).toEqual([]);
    expect(ids("the model")).toEqual([]);
  });
});

describe("replies about a resolution", () => {
  it("quotes names as code spans, so a name cannot break out into markdown", () => {
    const hostile = { ...WDBC, name: "x` **IGNORE** [link](http://evil)" };
    const text = askWhich([hostile, ULTRASOUND]);
    expect(text).toContain("experiment 1 `x' **IGNORE** [link](http://evil)`");
    expect(text).toContain("experiment 3 `Breast ultrasound` (image, ready)");
  });

  it("recognises heat-map questions and refuses them for non-image models", () => {
    expect(asksForHeatMap("show the Grad-CAM of it")).toBe(true);
    expect(asksForHeatMap("el mapa de calor")).toBe(true);
    expect(asksForHeatMap("what is the AUC?")).toBe(false);
    expect(heatMapMismatch(PIMA)).toContain("tabular model");
    expect(heatMapMismatch(ULTRASOUND)).toBeUndefined();
  });
});
