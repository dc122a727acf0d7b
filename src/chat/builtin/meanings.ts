import type { Glossary } from "../glossary.js";
import { hasReply, reply, type Lang } from "../language.js";

// What metrics and the commonest problem codes mean, in the reply's language, from the catalog
// (locales/<lang>/chat-replies.json, metricMeaning.* and codeMeaning.*). The documentation's tables (glossary.ts) are
// English and stay the source of truth: the English catalog repeats them word for word (a unit test holds the two
// together), and a code the catalog does not list yet is explained with the documentation's text, marked as such
// in languages other than English by the catalog's own codeMeaning.fromDocs.

/** What a metric means in `lang`, or the documentation's meaning when the catalog does not list the metric. */
export const metricMeaning = (name: string, documented: string, lang: Lang): string =>
  hasReply(lang, `metricMeaning.${name}`) ? reply(lang, `metricMeaning.${name}`) : documented;

/** What a problem or error code means, in the reply's language; undefined when the documentation does not list it. */
export function codeMeaning(code: string, glossary: Glossary | undefined, lang: Lang): string | undefined {
  if (hasReply(lang, `codeMeaning.${code}`)) return reply(lang, `codeMeaning.${code}`);
  const documented = glossary?.codes.get(code)?.meaning;
  return documented ? reply(lang, "codeMeaning.fromDocs", { documented }) : undefined;
}
