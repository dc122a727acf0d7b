// Which language a message is in, decided per message (issue 39): Builder's first users write Spanish as often as
// English, sometimes both in one conversation. A few function words each language cannot do without, and the
// marks only Spanish writes (¿ ¡ ñ, accented vowels), are enough for a question; code spans and snake_case
// identifiers (column names, codes) say nothing about the writer's language and are left out.

export type Lang = "en" | "es";

const ES_WORDS = new Set(
  (
    "el la los las un una de del que qué por para con en es son está esta este mi mis tu su sus cómo como cuál cual cuánto " +
    "cuántos cuántas cuando dónde donde qué quiero puedo puedes tengo tiene hay muy más mas pero y o hola gracias modelo " +
    "modelos experimento experimentos muéstrame muestra lista borra elimina cambia reentrena significa sirve vale ya no sí"
  ).split(" "),
);
const EN_WORDS = new Set(
  (
    "the a an of to for with in is are was were my your its it this that what which how why when where who can could " +
    "would should do does did have has i you we please model models experiment experiments show list delete change " +
    "retrain mean means good enough hello hi thanks and or not"
  ).split(" "),
);

/** The language of one message; `fallback` (the conversation's, else English) when its words do not tell. */
export function detectLanguage(message: string, fallback: Lang = "en"): Lang {
  const text = message.replace(/`[^`]*`/g, " ").replace(/\b\w+_\w+\b/g, " ");
  let es = /[¿¡ñ]/i.test(text) ? 2 : 0;
  let en = 0;
  for (const w of text.toLowerCase().split(/[^a-záéíóúüñ]+/)) {
    if (!w) continue;
    if (/[áéíóú]/.test(w)) es += 1;
    // "no", "a" and "modelo" vs "model": counted once, for the language whose list has the word.
    if (ES_WORDS.has(w)) es += 1;
    if (EN_WORDS.has(w)) en += 1;
  }
  return es > en ? "es" : en > es ? "en" : fallback;
}

/** The language of the conversation so far: its newest user message that tells. */
export function conversationLanguage(history: ReadonlyArray<{ role: string; content: string }>): Lang {
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i].role !== "user") continue;
    const es = detectLanguage(history[i].content, "es");
    const en = detectLanguage(history[i].content, "en");
    if (es === en) return es;
  }
  return "en";
}

/** One sentence in the reply's language. */
export const say = (lang: Lang, en: string, es: string) => (lang === "es" ? es : en);
