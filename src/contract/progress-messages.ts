import fs from "node:fs";
import path from "node:path";
import { PIPELINES_DIR } from "../pipelines-python.js";

// What a pipeline says while it runs (pipelines/contract/progress-messages.json: key -> the values its words name).
// A progress event carries the key and its values beside its English; the words a reader sees come from the catalog
// (locales/<lng>/progress.json, pipeline.<key>), in the dashboard and in the API's view of an experiment.

export const PROGRESS_MESSAGES_FILE = path.join(PIPELINES_DIR, "contract", "progress-messages.json");

/** Every key with the names of its values, as the contract lists them. */
export const PROGRESS_MESSAGES: Readonly<Record<string, readonly string[]>> = (
  JSON.parse(fs.readFileSync(PROGRESS_MESSAGES_FILE, "utf8")) as { messages: Record<string, string[]> }
).messages;

/** The catalog key (namespace:key) of a progress message. */
export const progressCatalogKey = (key: string) => `progress:pipeline.${key}`;

/**
 * The key and values of a progress event, kept when the contract lists the key with exactly these values; undefined
 * otherwise (a pipeline newer or older than this server): the reader then gets the pipeline's English.
 */
export function progressWords(
  key: string | undefined,
  params: Record<string, string | number> | undefined,
): { key: string; params?: Record<string, string | number> } | undefined {
  if (!key || !Object.hasOwn(PROGRESS_MESSAGES, key)) return undefined;
  const given = Object.keys(params ?? {}).sort();
  const named = [...PROGRESS_MESSAGES[key]].sort();
  if (given.length !== named.length || given.some((n, i) => n !== named[i])) return undefined;
  return given.length ? { key, params } : { key };
}
