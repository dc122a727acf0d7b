import { describe, expect, it } from "vitest";
import { conversationLanguage, detectLanguage } from "../../src/chat/language.js";
import { correctWord, editDistance, understand } from "../../src/chat/understand.js";
import { asksForDiagnosis } from "../../src/chat/safety.js";

// Issue 39: the language of each message, misspellings, and Spanish read as the builtin's English patterns.

const KNOWN = new Set(["models", "there", "ready", "model", "dataset", "status", "experiments"]);

describe("detectLanguage", () => {
  it("tells Spanish from English per message, accents or not", () => {
    expect(detectLanguage("¿Cómo va mi modelo de diabetes?")).toBe("es");
    expect(detectLanguage("como va mi modelo de diabetes")).toBe("es");
    expect(detectLanguage("borra el experimento 5")).toBe("es");
    expect(detectLanguage("hola")).toBe("es");
    expect(detectLanguage("How is my diabetes model doing?")).toBe("en");
    expect(detectLanguage("delete experiment 1")).toBe("en");
  });

  it("ignores identifiers and code spans, and falls back when the words do not tell", () => {
    expect(detectLanguage("what is `la_columna_de_edad`?")).toBe("en");
    expect(detectLanguage("class_too_small")).toBe("en");
    expect(detectLanguage("class_too_small", "es")).toBe("es");
    expect(detectLanguage("AUC?", "es")).toBe("es");
    expect(
      conversationLanguage([
        { role: "user", content: "¿qué tal el experimento 2?" },
        { role: "assistant", content: "The model" },
      ]),
    ).toBe("es");
  });
});

describe("misspellings", () => {
  it("measures edits with transpositions, and stops early", () => {
    expect(editDistance("modleo", "modelo", 2)).toBe(1);
    expect(editDistance("experimneto", "experimento", 2)).toBe(1);
    expect(editDistance("diabtes", "diabetes", 2)).toBe(1);
    expect(editDistance("abcdef", "uvwxyz", 2)).toBe(3);
  });

  it("corrects unknown words to one nearest keyword or user word, and leaves real words alone", () => {
    const targets = new Set(["experiment", "experimento", "model", "modelo", "diabetes", "threshold", "umbral"]);
    expect(correctWord("experimneto", targets, KNOWN)).toBe("experimento");
    expect(correctWord("diabtes", targets, KNOWN)).toBe("diabetes");
    expect(correctWord("umbrla", targets, KNOWN)).toBe("umbral");
    expect(correctWord("models", targets, KNOWN)).toBe("models");
    expect(correctWord("modelos", targets, KNOWN)).toBe("modelos");
    expect(correctWord("there", targets, KNOWN)).toBe("there");
    expect(correctWord("zzzzzz", targets, KNOWN)).toBe("zzzzzz");
  });
});

describe("understand", () => {
  it("reads Spanish questions in the patterns' English, keeping names and codes", () => {
    expect(understand("¿Por qué rechazaron el experimento 5?", KNOWN)).toContain("why refused the experiment 5");
    expect(understand("¿Qué significa class_too_small?", KNOWN)).toContain("class_too_small");
    expect(understand("mapa de calor del modelo de mama", KNOWN)).toBe("heat map of the model of mama");
    expect(understand("cambia el umbral del experimento 1", KNOWN)).toBe("change the threshold of the experiment 1");
    expect(understand("metricas del modleo de diabetis", KNOWN, ["Diabetes"])).toBe("metrics of the model of diabetes");
  });
});

describe("diagnosis requests in Spanish", () => {
  it("recognises a request to judge a patient or an image, not a question about a model", () => {
    expect(asksForDiagnosis("¿Este paciente tiene diabetes según el modelo?")).toBe(true);
    expect(asksForDiagnosis("¿Tiene cáncer esta paciente?")).toBe(true);
    expect(asksForDiagnosis("¿Es maligna esta lesión?")).toBe(true);
    expect(asksForDiagnosis("¿Esta radiografía muestra neumonía?")).toBe(true);
    expect(asksForDiagnosis("¿Es mi modelo de ecografía suficientemente bueno para la clínica?")).toBe(false);
    expect(asksForDiagnosis("¿cuántas imágenes tiene el modelo de radiografías?")).toBe(false);
    expect(asksForDiagnosis("¿Es normal que mi experimento tarde tanto?")).toBe(false);
  });
});
