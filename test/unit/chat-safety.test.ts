import { describe, expect, it } from "vitest";
import { asksForDiagnosis } from "../../src/chat/safety.js";
import { generatedMessages } from "../helpers/generated-text.js";

// asksForDiagnosis used to be these nine patterns, run on every message. Their unbounded `.*` made a message of
// 8000 characters cost seconds of the event loop (issue 42, finding 2); the rewrite searches the same phrases
// one after the other. These are kept here, verbatim, as the reference the rewrite must agree with: on the short
// messages below they cost nothing.
const OLD_PATTERNS: RegExp[] = [
  /\bdiagnos(e|is|ing)\b.*\b(patient|him|her|them|this|my|case|lesion|image|scan|x-?ray)\b/i,
  /\b(patient|this|my|case|lesion|image|scan|x-?ray)\b.*\bdiagnos(e|is|ing)\b/i,
  /\b(does|has|do) (this|my|the|our) (patient|child|man|woman|baby|case)\b.*\b(have|has|got|suffer)/i,
  /\bwhat (disease|condition|illness|cancer) does\b/i,
  /\bis (this|it|the|my) (lesion|mole|nodule|tumou?r|mass|image|scan|x-?ray|patient|spot|finding|cell)\b.*\b(malignant|benign|cancer(ous)?|normal|abnormal|sick|healthy|positive|negative|dangerous|serious)\b/i,
  /\b(malignant|benign|cancer(ous)?) or (not|malignant|benign)\b/i,
  /\bshould (i|we) (treat|operate|biopsy|prescribe|discharge|admit|refer)\b/i,
  /\b(this|my|the|these|his|her|that) (image|scan|x-?rays?|ct|mri|slide|photo|radiograph|ecg|biopsy)\b.*\b(shows?|showing|indicates?|suggests?|reveals?|contains?)\b.*\b(pneumonia|cancer|tumou?r|malignan|fracture|disease|infection|lesion|melanoma|covid|nodule|abnormal)/i,
  /\b(read|interpret|judge|assess|look at|tell me what you see in) (this|my|the attached|these|that) (image|scan|x-?rays?|ct|mri|slide|photo|radiograph|ecg)\b/i,
];
const oldAsksForDiagnosis = (m: string) => OLD_PATTERNS.some((re) => re.test(m));

// Words of every pattern, pieces of words (so \b matters), near-misses and separators (so lines and order matter).
const WORDS = [
  "diagnose",
  "diagnosis",
  "diagnosing",
  "diagnosed",
  "diagnostic",
  "undiagnosed",
  "patient",
  "patients",
  "him",
  "her",
  "them",
  "this",
  "my",
  "case",
  "lesion",
  "image",
  "scan",
  "x-ray",
  "xray",
  "X-Rays",
  "x-rays",
  "does",
  "has",
  "do",
  "the",
  "our",
  "child",
  "man",
  "woman",
  "baby",
  "have",
  "got",
  "suffer",
  "suffers",
  "what",
  "disease",
  "condition",
  "illness",
  "cancer",
  "cancerous",
  "is",
  "it",
  "mole",
  "nodule",
  "tumor",
  "tumour",
  "mass",
  "spot",
  "finding",
  "cell",
  "malignant",
  "malignancy",
  "benign",
  "normal",
  "abnormal",
  "sick",
  "healthy",
  "positive",
  "negative",
  "dangerous",
  "serious",
  "or",
  "not",
  "should",
  "i",
  "we",
  "treat",
  "operate",
  "biopsy",
  "prescribe",
  "discharge",
  "admit",
  "refer",
  "these",
  "his",
  "that",
  "ct",
  "mri",
  "slide",
  "photo",
  "radiograph",
  "ecg",
  "show",
  "shows",
  "showing",
  "indicates",
  "suggest",
  "reveals",
  "contains",
  "pneumonia",
  "fracture",
  "infection",
  "melanoma",
  "covid",
  "read",
  "interpret",
  "judge",
  "assess",
  "look at",
  "tell me what you see in",
  "the attached",
  "experiment",
  "42",
  "model",
  "AUC",
  "please",
  "column",
  // Whole first phrases, so the later phrases (and their order) get tested often.
  "is this lesion",
  "is it x-ray",
  "does my child",
  "has the case",
  "this ct",
  "my x-rays",
  "her scan",
  "the image",
];
const GLUE = [" ", " ", " ", " ", "  ", ", ", ". ", "? ", "\n", "\r\n", "\u2028", "-", "_", "", "\t"];

describe("chat safety: asking for a diagnosis", () => {
  it("recognises exactly what the old patterns recognised, on 20000 generated messages", () => {
    let recognised = 0;
    for (const m of generatedMessages(42, 20_000, WORDS, GLUE)) {
      const expected = oldAsksForDiagnosis(m);
      if (expected) recognised++;
      expect(asksForDiagnosis(m), JSON.stringify(m)).toBe(expected);
    }
    // The generator must reach both answers often, or the comparison proves little.
    expect(recognised).toBeGreaterThan(2_000);
    expect(recognised).toBeLessThan(18_000);
  });

  it("keeps recognising the questions clinicians ask, and leaves ordinary questions alone", () => {
    const asks = [
      "Does this patient have pneumonia? Experiment 7 scored his X-ray.",
      "Is this lesion malignant?",
      "Experiment 16 says melanoma: should I biopsy this patient?",
      "Can you tell me if this X-ray shows pneumonia?",
      "my ct shows a nodule, is it cancer?",
      "please diagnose my patient",
      "what disease does she have",
      "benign or malignant?",
      "tell me what you see in this image",
      "Is the mole on my arm dangerous?",
    ];
    const ordinary = [
      "why was my dataset refused?",
      "what does the diagnosis column need to hold?",
      "how good is experiment 42?",
      "how do I call predict on an image?",
      "my ct\nshows the pneumonia", // the phrases of one request share a line, as `.` never crossed one
      "pneumonia shows my ct",
    ];
    for (const m of asks) expect([m, asksForDiagnosis(m)]).toEqual([m, true]);
    for (const m of ordinary) expect([m, asksForDiagnosis(m)]).toEqual([m, false]);
    for (const m of [...asks, ...ordinary]) expect([m, oldAsksForDiagnosis(m)]).toEqual([m, asksForDiagnosis(m)]);
  });

  it("answers the issue's attack, 8000 characters of 'my ct shows ', like the old patterns (without their cost)", () => {
    const attack = "my ct shows ".repeat(700).slice(0, 8000);
    expect(asksForDiagnosis(attack)).toBe(false);
    expect(asksForDiagnosis(`${attack} pneumonia`)).toBe(true);
  });
});
