import fs from "node:fs";
import path from "node:path";
import { pipelineProblemText, type Message } from "../errors.js";
import { PIPELINES_DIR } from "../pipelines-python.js";

// The data problems a pipeline can stop on (pipelines/contract/data-problems.json: key -> the values its message
// names). A pipeline reports one as a key and its values on its last error event; this turns that into catalog words
// (locales/<lng>/problems.json, pipeline.<key>) so every reader gets it in their own language.

export const DATA_PROBLEMS_FILE = path.join(PIPELINES_DIR, "contract", "data-problems.json");

/** Every key with the names of its values, as the contract lists them. */
export const DATA_PROBLEMS: Readonly<Record<string, readonly string[]>> = (
  JSON.parse(fs.readFileSync(DATA_PROBLEMS_FILE, "utf8")) as { problems: Record<string, string[]> }
).problems;

/**
 * The catalog words of a reported problem; undefined for a key the contract does not list, or values that are not
 * exactly the ones it names (a pipeline newer or older than this server): the caller keeps the pipeline's English.
 */
export function dataProblemText(key: string | undefined, params: Record<string, string | number> | undefined): Message | undefined {
  if (!key || !Object.hasOwn(DATA_PROBLEMS, key)) return undefined;
  const given = Object.keys(params ?? {}).sort();
  const named = [...DATA_PROBLEMS[key]].sort();
  if (given.length !== named.length || given.some((n, i) => n !== named[i])) return undefined;
  return pipelineProblemText(key, params ?? {});
}
