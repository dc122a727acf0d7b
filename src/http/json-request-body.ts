import type { IncomingMessage, ServerResponse } from "node:http";
import express from "express";
import type { Config } from "../config.js";
import { ApiError, msg, detail } from "../errors.js";

/**
 * JSON request bodies, read by the route builder (route.ts) and the /predict lane (predict-lane.ts) only AFTER
 * the caller is authenticated and counted against its rate limit: an unauthenticated body is never read.
 *
 * The steps, each bounded so that no body can hold the event loop for long:
 * 1. express.text reads the body (inflating gzip/deflate/br) up to `maxBytes`, decoding its charset chunk by chunk
 *    as it arrives (decoding 27 MB at once after the last byte is one more ~17 ms stall); its limit, abort and charset errors
 *    keep the shapes toApiError maps. A body whose content-encoding does not decode is 400, not a 500.
 * 2. The text is scanned natively: more than `maxValues` JSON values (counted by their separators ',' '[' '{',
 *    with a stop at the cap) is refused before JSON.parse; a 27 MB array of zeros took
 *    ~350 ms to parse, a 27 MB string ~40 ms (bench/security/README.md).
 * 3. JSON.parse without a reviver. A reviver runs JS for every value (7 s for a 27 MB array of zeros); U+0000 is
 *    found instead by one search of the raw text for the escape "\u0000" after a successful parse (so invalid
 *    JSON stays invalid_json, as it was), since JSON forbids an unescaped control character in a string.
 */

export interface JsonBodyLimits {
  maxBytes: number;
  /** The most JSON values (separators) a body may hold; unbounded when absent. */
  maxValues?: number;
}

/** Every route's JSON body unless the route says otherwise (RouteDef.jsonBody). */
export const DEFAULT_JSON_LIMITS: JsonBodyLimits = { maxBytes: 1024 * 1024 };

/**
 * The most values in a /predict `message` array: a tabular row has one value per data column. Clinical tables
 * have tens to hundreds of columns; 10,000 leaves room for wide (omics) tables and parses in well under 1 ms.
 */
export const MAX_MESSAGE_VALUES = 10_000;

/** The most JSON values in a /predict body: message's, and 64 spare for experiment_id and the braces. */
export const MAX_PREDICT_BODY_VALUES = MAX_MESSAGE_VALUES + 64;

/**
 * The /predict body. Why the image limit for every body rather than a tabular one when the model is tabular:
 * the seed form names its experiment inside the body, so the model's kind is unknown before reading it, and
 * looking it up first would cost a database or cache lookup per request. The image bound (base64 of
 * FETCH_MAX_BYTES; serving checks the decoded size) is therefore the byte limit, and the value cap bounds what
 * a tabular row (or anything else) can make JSON.parse build.
 */
export function predictBodyLimits(config: Config): JsonBodyLimits {
  return { maxBytes: Math.ceil((config.FETCH_MAX_BYTES * 4) / 3) + 64 * 1024, maxValues: MAX_PREDICT_BODY_VALUES };
}

export type JsonBodyReader = (req: IncomingMessage, res: ServerResponse, log: () => import("pino").Logger) => Promise<unknown>;

/** A reader for one set of limits: resolves the parsed body (undefined for no body or a non-JSON content type). */
export function createJsonBodyReader(limits: JsonBodyLimits): JsonBodyReader {
  const readText = express.text({ type: "application/json", limit: limits.maxBytes, defaultCharset: "utf-8" });
  return async (req, res, log) => {
    const holder = req as IncomingMessage & { body?: unknown };
    refuseNonUnicodeCharset(req);
    try {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes the caught error on unchanged (truthiness narrows `unknown` to `{}`)
      await new Promise<void>((resolve, reject) => readText(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
    } catch (err) {
      throw undecodableBody(req, err, log) ?? err;
    }
    if (typeof holder.body !== "string") return holder.body; // no body, or not JSON: the route's schema answers
    const value = parseJson(holder.body, limits.maxValues);
    holder.body = value;
    return value;
  };
}

/**
 * A decompression failure (truncated gzip, bad deflate or brotli): zlib's errors carry an errno and no
 * body-parser `type`. The client's mistake, so a 400 logged at info, not a 500 with a stack.
 */
function undecodableBody(req: IncomingMessage, err: unknown, log: () => import("pino").Logger): ApiError | undefined {
  const encoding = String(req.headers["content-encoding"] ?? "identity").toLowerCase();
  const e = err as { type?: string; errno?: unknown; message?: string };
  if (encoding === "identity" || e?.type !== undefined || typeof e?.errno !== "number") return undefined;
  log().info({ err: e.message, encoding }, "the request body does not decode with its content-encoding");
  return new ApiError(400, "invalid_body_encoding", msg("request.body_encoding", { encoding, why: e.message ?? "" }));
}

/** JSON is Unicode (RFC 8259): as express.json did, any UTF charset is decoded and every other refused unread. */
function refuseNonUnicodeCharset(req: IncomingMessage): void {
  const contentType = req.headers["content-type"] ?? "";
  if (!/^\s*application\/json\s*(;|$)/i.test(contentType)) return;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)?.[1]?.toLowerCase();
  if (charset !== undefined && !charset.startsWith("utf-")) {
    throw Object.assign(new Error(`unsupported charset "${charset.toUpperCase()}"`), { type: "charset.unsupported" });
  }
}

function parseJson(text: string, maxValues: number | undefined): unknown {
  if (maxValues !== undefined && countSeparatorsBeyond(text, maxValues)) {
    throw new ApiError(413, "too_many_values", msg("request.too_many_values", { max: maxValues, row: MAX_MESSAGE_VALUES }));
  }
  const first = /\S|$/.exec(text)![0];
  if (first === "") return {}; // an empty body, as body-parser answered it
  if (first !== "{" && first !== "[") throw new ApiError(400, "invalid_json", msg("request.json_not_container"));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, "invalid_json", msg("request.json_invalid", { why: (err as Error).message }));
  }
  // PostgreSQL text and jsonb cannot hold U+0000, so a NUL anywhere in a body would fail deep in an insert as a
  // 500 (the fuzzer found one in an API key's name). Refused here for every route, keys included.
  if (hasNulEscape(text))
    throw new ApiError(400, "invalid_request", msg("request.nul_character"), [detail("(body)", msg("request.nul_character"))]);
  return value;
}

/** Whether ',' '[' and '{' together occur more than `max` times; each search stops once the count is past it. */
function countSeparatorsBeyond(text: string, max: number): boolean {
  let count = 0;
  for (const ch of [",", "[", "{"]) {
    for (let i = text.indexOf(ch); i !== -1; i = text.indexOf(ch, i + 1)) if (++count > max) return true;
  }
  return false;
}

/**
 * Whether the (valid) JSON text holds the escape \u0000: a match is an escape when an even number of
 * backslashes precede its own (an odd number would make its backslash a literal one, as in "\\u0000").
 */
function hasNulEscape(text: string): boolean {
  for (let i = text.indexOf("\\u0000"); i !== -1; i = text.indexOf("\\u0000", i + 1)) {
    let backslashes = 0;
    for (let j = i - 1; j >= 0 && text.charCodeAt(j) === 92; j--) backslashes++;
    if (backslashes % 2 === 0) return true;
  }
  return false;
}
