// The one error type of the house, on the ground floor: domain code (auth, datasets, experiments, serving, net,
// cli) throws it without knowing about HTTP. It carries its status, as trigger.dev's ServiceValidationError does,
// because every caller (the HTTP edge, the admin socket, the CLI) answers with it; the wire body and the error
// `type` are the HTTP edge's business (src/http/errors.ts).
//
// Its words are a catalog key and the values the key names (msg(), typed from locales/en/errors.json by
// src/i18n/error-keys.ts), never a sentence: the edge says them in the caller's language (Accept-Language), and
// `message` keeps the English for logs, the CLI and the admin socket.
import type { CatalogValue, ErrorKey, ErrorValues } from "./i18n/error-keys.js";
import { translate, type Language } from "./i18n/index.js";
import { setRuleRenderer, type RuleText } from "./i18n/rule-text.js";

declare const fromCatalog: unique symbol;

/** Words from the catalog: a key of locales/<lng>/errors.json and the values it names. Made only by msg(). */
export interface Message {
  readonly key: string;
  readonly values: Readonly<Record<string, CatalogValue>>;
  readonly [fromCatalog]: true;
}

type ValuesArg<K extends ErrorKey> = keyof ErrorValues[K] extends never ? [] : [values: ErrorValues[K]];

/** The catalog's `errors:<key>` with every value its English and Spanish name (the compiler checks both). */
export function msg<K extends ErrorKey>(key: K, ...[values]: ValuesArg<K>): Message {
  return { key: `errors:${key}`, values: (values ?? {}) as Record<string, CatalogValue> } as unknown as Message;
}

/** A Message in `lng`; a value that is itself a message is said in `lng` first. */
export function say(text: Message, lng: Language): string {
  const values: Record<string, string | number> = {};
  for (const [name, v] of Object.entries(text.values)) values[name] = typeof v === "object" ? say(v as Message, lng) : v;
  return translate(lng, text.key, values);
}

/**
 * A schema's own validation message (zod's `.min(1, invalid("validation.not_empty"))`), from the catalog: its English
 * is what zod keeps in the issue (so logs, the CLI and any other reader of the schema see plain English), and the
 * words behind it are remembered by that exact text, which only this function writes, so the edge says them in the
 * caller's language (validationText, src/http/route.ts). No sentence is parsed: a text this did not make is unknown.
 */
const validationTexts = new Map<string, Message>();
export function invalid<K extends ErrorKey>(key: K, ...values: ValuesArg<K>): string {
  const text = msg(key, ...values);
  const english = say(text, "en");
  validationTexts.set(english, text);
  return english;
}

/** The catalog words of a validation message invalid() wrote, or undefined for any other text (zod's own, say). */
export function validationText(english: string): Message | undefined {
  return validationTexts.get(english);
}

// The schemas the dashboard bundles too (src/experiments/request-rules.ts) cannot import this file (it reads the
// catalog with node:fs): they name keys through src/i18n/rule-text.ts, which the server words here, as invalid() does.
setRuleRenderer((key, values, remember) => {
  const text = { key: `errors:${key}`, values } as unknown as Message;
  const english = say(text, "en");
  if (remember) validationTexts.set(english, text);
  return english;
});

/** The words a cross-field rule put on its zod issue (params.text, src/i18n/rule-text.ts), or undefined. */
export function ruleIssueText(params: unknown): Message | undefined {
  const text = (params as { text?: Partial<RuleText> } | undefined)?.text;
  if (!text || typeof text.key !== "string" || typeof text.values !== "object" || text.values === null) return undefined;
  return messageFromStore({ key: `errors:${text.key}`, values: text.values });
}

export interface ErrorDetail {
  field: string;
  message: string;
  [extra: string]: unknown;
}

/** The catalog words of a detail made by detail(), read by the edge to say it in the caller's language. */
const detailTexts = new WeakMap<object, Message>();

/** One `details` entry: the field it is about and what is wrong with it, from the catalog. */
export function detail(field: string, text: Message, extra: Record<string, unknown> = {}): ErrorDetail {
  const d: ErrorDetail = { field, message: say(text, "en"), ...extra };
  detailTexts.set(d, text);
  return d;
}

/** The catalog words of a detail, when detail() made it. */
export function detailText(d: object): Message | undefined {
  return detailTexts.get(d);
}

export function isMessage(x: unknown): x is Message {
  return typeof x === "object" && x !== null && "key" in x;
}

export class ApiError extends Error {
  /** The words, from the catalog; a bare string (only from an error that crossed a process, or not yet converted) has the code's sentence. */
  public readonly text: Message | undefined;

  constructor(
    public readonly status: number,
    public readonly code: string,
    text: Message | string,
    public readonly details?: ErrorDetail[] | Record<string, unknown>,
    public readonly headers?: Record<string, string>,
  ) {
    super(isMessage(text) ? say(text, "en") : text);
    this.text = isMessage(text) ? text : undefined;
  }
}

export const errors = {
  invalidRequest: (text: Message, details?: ErrorDetail[]) => new ApiError(400, "invalid_request", text, details),
  notFound: (text: Message) => new ApiError(404, "not_found", text),
  forbidden: (text: Message, code = "forbidden") => new ApiError(403, code, text),
  conflict: (text: Message, code = "conflict") => new ApiError(409, code, text),
  internal: () => new ApiError(500, "internal_error", msg("internal")),
};

/** The catalog words of a caught error (an ApiError's), or undefined for any other error. */
export function textOfError(err: unknown): Message | undefined {
  return err instanceof ApiError ? err.text : undefined;
}

/** A Message as kept in the database (a failed batch's failure_text): its key and values. */
export interface StoredMessage {
  key: string;
  values: Record<string, CatalogValue>;
}

export function storedMessage(text: Message): StoredMessage {
  return { key: text.key, values: { ...text.values } };
}

/** Namespaces a stored Message may come from: the API's errors, and the data problems a pipeline reported. */
const STORED_NAMESPACES = ["errors:", "problems:"];

/** A stored Message read back; undefined for anything that is not a key of the catalog's errors or problems. */
export function messageFromStore(stored: unknown): Message | undefined {
  const s = stored as Partial<StoredMessage> | null | undefined;
  if (!s || typeof s.key !== "string" || typeof s.values !== "object" || s.values === null) return undefined;
  if (!STORED_NAMESPACES.some((ns) => s.key!.startsWith(ns))) return undefined;
  return { key: s.key, values: s.values } as unknown as Message;
}

/**
 * A data problem a pipeline reported: problems:pipeline.<key> with its values. The key is one of
 * pipelines/contract/data-problems.json (src/contract/data-problems.ts checks it before calling this); both catalogs
 * have it with the same values (test/unit/pipeline-problem-keys.test.ts).
 */
export function pipelineProblemText(key: string, values: Readonly<Record<string, string | number>>): Message {
  return { key: `problems:pipeline.${key}`, values: { ...values } } as unknown as Message;
}
