import { translators, type Lang } from "../language.js";

// A warning's short title as the result page and the model card write it (locales/<lang>/model-card.json,
// warnings.title.<code>), so the chat names a warning with the dashboard's own words in either language. A code
// newer than the catalog is named by its code.

const cards = translators("model-card");

export function warningTitle(w: { code: string }, lang: Lang): string {
  const key = `warnings.title.${w.code}`;
  return cards[lang].has(key) ? cards[lang].t(key) : w.code;
}
