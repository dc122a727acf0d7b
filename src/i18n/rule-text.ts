import type { CatalogValue, ErrorKey, ErrorValues } from "./error-keys.js";

// Validation words for schemas the dashboard bundles too (src/experiments/request-rules.ts): a catalog key of
// locales/<lng>/errors.json and its values, with no Node import, so Vite can bundle it. Who renders the key is
// installed by the side that loads the catalog: the server (src/errors.ts) says it in English and remembers the
// words, so the edge says them in the caller's language (as invalid() does); the dashboard (web/src/i18n) says it in
// the page's language. A schema's own messages are rendered when zod reports the issue, never at import, so the
// order in which modules load does not matter.

export type RuleValues = Readonly<Record<string, CatalogValue>>;

/** Words a cross-field rule puts on its issue (params.text): the edge says these, not the English message. */
export interface RuleText {
  key: string;
  values: RuleValues;
}

/**
 * Renders a key of the errors catalog (without its "errors:" namespace). `remember`: the text is a schema's own,
 * made from fixed values (a limit, a list of names), which the server may look up again by its English; a
 * cross-field issue naming a user's column is not remembered (it carries its words in params.text instead).
 */
export type RuleRenderer = (key: string, values: RuleValues, remember: boolean) => string;

// Until a side installs its renderer the key itself is shown (a test that forgot to load the catalog sees it).
let render: RuleRenderer = (key, values) => (Object.keys(values).length ? `errors:${key} ${JSON.stringify(values)}` : `errors:${key}`);

export function setRuleRenderer(renderer: RuleRenderer): void {
  render = renderer;
}

type ValuesArg<K extends ErrorKey> = keyof ErrorValues[K] extends never ? [] : [values: ErrorValues[K]];

/** A schema's own message for zod's `error` option (`.min(1, ruleError("validation.request.one_label"))`), worded when zod reports it. */
export function ruleError<K extends ErrorKey>(key: K, ...[values]: ValuesArg<K>): { error: () => string } {
  return { error: () => render(key, values ?? {}, true) };
}

/** The English (server) or page-language (dashboard) message of a cross-field issue, and its words for params.text. */
export function ruleIssue<K extends ErrorKey>(key: K, ...[values]: ValuesArg<K>): { message: string; text: RuleText } {
  const v = (values ?? {}) as RuleValues;
  return { message: render(key, v, false), text: { key, values: v } };
}
