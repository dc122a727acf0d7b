import { describe, expect, it } from "vitest";
import { conversationLanguage, detectLanguage } from "../../src/chat/language.js";
import { asksForDiagnosis } from "../../src/chat/safety.js";

// Issue 39: the language of each message (learnt from the example questions since issue 53), and diagnosis requests
// in Spanish. The misspelling corrector and the Spanish→English rewrite this file also tested went with issue 53.

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
