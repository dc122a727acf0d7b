import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import i18n from "i18next";
// The dashboard's strings, as main.tsx loads them.
import "../../web/src/i18n";
import { ProgressMessage } from "../../web/src/components/ProgressMessage";

// The running experiment page's line under the bar: what the pipeline is doing, in the reader's language from the
// progress event's key and values (the event stream carries them as stored, with the pipeline's English beside).

const html = (progress: { message?: string; key?: string; params?: Record<string, string | number> }) =>
  renderToStaticMarkup(createElement(ProgressMessage, { progress }));

describe("the running experiment's progress message", () => {
  it("says a keyed progress in Spanish, with its values, and in English for an English reader", async () => {
    const progress = { message: "running the model on 12 images", key: "running_model_on_images", params: { images: 12 } };
    expect(html(progress)).toBe('<p class="muted small">running the model on 12 images</p>');
    await i18n.changeLanguage("es");
    try {
      expect(html(progress)).toBe('<p class="muted small">ejecutando el modelo en 12 imágenes</p>');
      expect(html({ message: "trying input sizes 160, 224 px", key: "trying_input_sizes", params: { sizes: "160, 224" } })).toContain(
        "probando tamaños de entrada de 160, 224 px",
      );
      // An older pipeline's sentence without a key, or a key this dashboard does not know: the English it sent.
      expect(html({ message: "reading the table" })).toBe('<p class="muted small">reading the table</p>');
      expect(html({ message: "warming up", key: "not_a_key_yet" })).toBe('<p class="muted small">warming up</p>');
      expect(html({})).toBe("");
    } finally {
      await i18n.changeLanguage("en");
    }
  });
});
