import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsImport from "ajv-formats";
import type { JobSpec, Manifest, PipelineEvent } from "./types.js";

// The JSON Schemas in pipelines/contract are the single source of truth between TypeScript and Python.
// They are read at run time (never copied), so a schema change is seen by both sides at once.

export const CONTRACT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../pipelines/contract");

export type ContractName = "job-spec" | "manifest" | "event";

const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const compiled = new Map<ContractName, ValidateFunction>();
const views = new Map<string, ValidateFunction>();

export function loadSchema(name: ContractName): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(CONTRACT_DIR, `${name}.schema.json`), "utf8")) as Record<string, unknown>;
}

function validator(name: ContractName): ValidateFunction {
  let fn = compiled.get(name);
  if (!fn) {
    fn = ajv.compile(loadSchema(name));
    compiled.set(name, fn);
  }
  return fn;
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map(
    (e) =>
      `${e.instancePath || "(root)"}: ${e.message ?? "invalid"}${e.params && "additionalProperty" in e.params ? ` (${String(e.params.additionalProperty)})` : ""}`,
  );
}

/** Every violation as `path: message`; empty when the document satisfies the schema. */
export function contractErrors(name: ContractName, document: unknown): string[] {
  const fn = validator(name);
  return fn(document) ? [] : describe(fn.errors);
}

export class ContractError extends Error {
  constructor(
    public readonly contract: ContractName,
    public readonly problems: string[],
  ) {
    super(
      `${contract} does not satisfy pipelines/contract/${contract}.schema.json: ${problems.slice(0, 5).join("; ")}${problems.length > 5 ? ` (+${problems.length - 5} more)` : ""}`,
    );
  }
}

function check<T>(name: ContractName, document: unknown): T {
  const problems = contractErrors(name, document);
  if (problems.length) throw new ContractError(name, problems);
  return document as T;
}

/**
 * The schema cut down to some of its top-level fields: the same definitions, only those fields required (where the
 * schema requires them, less `optional`) and checked, the rest let through. A reader that needs only part of a document (serving
 * reads a manifest's inputs and outputs, not its metrics) checks that part by the contract, and keeps reading
 * documents written before a later rule about the other parts.
 */
export function viewErrors(name: ContractName, fields: readonly string[], document: unknown, optional: readonly string[] = []): string[] {
  const key = `${name}:${fields.join(",")}:${optional.join(",")}`;
  let fn = views.get(key);
  if (!fn) {
    const schema = loadSchema(name) as { required?: string[]; properties: Record<string, unknown>; $defs?: unknown; $id?: string };
    fn = ajv.compile({
      $defs: schema.$defs,
      type: "object",
      required: (schema.required ?? []).filter((f) => fields.includes(f) && !optional.includes(f)),
      properties: Object.fromEntries(fields.filter((f) => f in schema.properties).map((f) => [f, schema.properties[f]])),
    });
    views.set(key, fn);
  }
  return fn(document) ? [] : describe(fn.errors);
}

export const assertJobSpec = (doc: unknown): JobSpec => check<JobSpec>("job-spec", doc);
export const assertManifest = (doc: unknown): Manifest => check<Manifest>("manifest", doc);
export const assertEvent = (doc: unknown): PipelineEvent => check<PipelineEvent>("event", doc);
