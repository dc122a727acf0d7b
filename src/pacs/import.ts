import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import PQueue from "p-queue";
import yazl from "yazl";
import { ApiError, msg, detail, say, type Message } from "../errors.js";
import { DICOM_ACCEPT, firstMultipartPart } from "../net/dicomweb.js";
import type { OutboundGuard } from "../net/outbound-guard.js";
import { OutboundRefusal } from "../net/outbound-guard.js";
import type { PacsConnections, PacsTarget } from "./connection.js";
import { csvField, IMAGE_COL, PATIENT_COL, readCsv, type CsvTable, type PacsImportRequest } from "./import-csv.js";
import { attributeName, deidentify, DeidentifyError, PROFILE, REPLACED } from "./deidentify.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";

/**
 * Build from the PACS (issue 51 item 2): a CSV of study, series or instance UIDs with their labels becomes a dataset
 * zip in today's layout (a CSV whose first column is the patient, an `image` column of .dcm paths, the CSV's other
 * columns as they were) holding the instances retrieved over WADO-RS, each de-identified (deidentify.ts) before it is
 * written anywhere. A study or series is expanded by QIDO-RS. Each UID that fails is named with the reason, and the
 * others are kept; nothing is stored when none succeeds. The source UIDs are in nothing stored: the CSV's UID column
 * is replaced by the image paths.
 */

export interface PacsImportFailure {
  /** The CSV's row number (1 = the first row below the header). */
  row: number;
  uid: string;
  /** In English; `text` has the catalog words, which the route says in Spanish too (reason_es). */
  reason: string;
  text: Message;
}

export interface PacsImportResult {
  zip_gcloud: string;
  size: number;
  sha256: string;
  rows: number;
  instances: number;
  failed: PacsImportFailure[];
  deidentification: {
    profile: string;
    replaced: Array<{ attribute: string; with: string; instances: number }>;
    removed: Array<{ attribute: string; instances: number }>;
    private_removed: number;
  };
}

export interface PacsImportDeps {
  connections: PacsConnections;
  guard: () => OutboundGuard;
  dataDir: string;
  maxInstanceBytes: number;
  maxPixels: number;
  /** Instances one import may hold (all rows' expansions together). */
  maxInstances: number;
  concurrency: number;
  /** Writes the zip where an upload would go and records it (DatasetService.storeZip). */
  /** Stored as an upload of the workspace (its permission checked there). */
  store: (scope: Scope, objectPath: string, zip: Readable) => Promise<{ size: number; sha256: string }>;
}

/**
 * How far an import is (docs/pacs.md#progress): `locating` runs over the CSV's rows (QIDO-RS), `retrieving` over the
 * instances they expand to (WADO-RS and de-identification), `storing` writes the zip. `failed` counts the failures
 * so far, each of which is also handed to onFailure as it happens.
 */
export interface PacsImportProgress {
  phase: "locating" | "retrieving" | "storing";
  done: number;
  total: number;
  failed: number;
}

export interface PacsImportWatch {
  onProgress?(p: PacsImportProgress): void;
  onFailure?(f: PacsImportFailure): void;
  /** Aborted when the caller is gone: the import stops and stores nothing. */
  signal?: AbortSignal;
}

/** The import was stopped because its caller left (the route answers nobody). */
export class PacsImportAborted extends Error {
  constructor() {
    super("the PACS import was cancelled");
  }
}

/** Progress is reported at most this often (the last step of a phase always): a 5000-instance import is not 5000 events. */
const PROGRESS_EVERY_MS = 250;

type Level = "instance" | "series" | "study";
interface Located {
  study: string;
  series: string;
  instance: string;
}

class RowFailure extends Error {
  constructor(public readonly text: Message) {
    super(say(text, "en"));
  }
}

export { IMAGE_COL, PATIENT_COL, type PacsImportRequest };

export class PacsImport {
  constructor(private readonly deps: PacsImportDeps) {}

  async run(scope: Scope, objectPath: string, req: PacsImportRequest, watch: PacsImportWatch = {}): Promise<PacsImportResult> {
    // Refused before anything is fetched from the PACS: an import is an upload into the workspace.
    assertAllowed(scope.workspace, "dataset.upload");
    const userId = scope.userId;
    const table = readCsv(req);
    const target = await this.deps.connections.target(userId);
    if (!target) throw new ApiError(404, "not_found", msg("pacs.not_configured"));
    const work = path.join(this.deps.dataDir, "tmp", `pacs-import-${Date.now()}-${randomBytes(4).toString("hex")}`);
    await fs.promises.mkdir(path.join(work, "images"), { recursive: true });
    try {
      return await this.build(scope, objectPath, target, table, work, watch);
    } finally {
      await fs.promises.rm(work, { recursive: true, force: true });
    }
  }

  private async build(
    scope: Scope,
    objectPath: string,
    target: PacsTarget,
    table: CsvTable,
    work: string,
    watch: PacsImportWatch,
  ): Promise<PacsImportResult> {
    const failed: PacsImportFailure[] = [];
    const fail = (f: PacsImportFailure) => {
      failed.push(f);
      watch.onFailure?.(f);
    };
    const queue = new PQueue({ concurrency: this.deps.concurrency });
    // A caller that left stops the import: queued steps return at once (clearing the queue would leave their
    // promises pending), and nothing is stored.
    const gone = () => watch.signal?.aborted === true;
    const cancelled = () => {
      if (gone()) throw new PacsImportAborted();
    };
    const report = progressReporter(watch, () => failed.length);
    // Expansion first, so the instance limit is known before anything is retrieved.
    let rowsDone = 0;
    report("locating", 0, table.rows.length);
    const located = await Promise.all(
      table.rows.map((r, i) =>
        queue.add(async () => {
          if (gone()) return [];
          try {
            return await this.locate(target, r.uid);
          } catch (err) {
            fail(failure(i + 1, r.uid, err));
            return [];
          } finally {
            report("locating", ++rowsDone, table.rows.length);
          }
        }),
      ),
    );
    cancelled();
    const total = located.reduce((n, l) => n + (l?.length ?? 0), 0);
    if (total > this.deps.maxInstances)
      throw new ApiError(422, "too_many_instances", msg("pacs.too_many_instances", { total, max: this.deps.maxInstances }));
    const uids = new Map<string, string>();
    const patients = new Map<string, string>();
    const replaced = new Map<string, number>();
    const removed = new Map<string, number>();
    let privateRemoved = 0;
    const out: string[][] = [];
    let n = 0;
    let retrieved = 0;
    report("retrieving", 0, total);
    await Promise.all(
      table.rows.flatMap((r, i) =>
        (located[i] ?? []).map((loc) =>
          queue.add(async () => {
            if (gone()) return;
            try {
              const bytes = await this.retrieve(target, loc);
              const d = deidentify(bytes, uids, this.deps.maxPixels);
              const name = `images/${String(++n).padStart(6, "0")}.dcm`;
              await fs.promises.writeFile(path.join(work, name), d.bytes);
              for (const t of d.replaced) replaced.set(t, (replaced.get(t) ?? 0) + 1);
              for (const t of d.removed) {
                // Private attributes (odd groups) are counted, not named: their meaning is the vendor's.
                if (parseInt(t.slice(3, 4), 16) % 2 === 1) privateRemoved++;
                else removed.set(t, (removed.get(t) ?? 0) + 1);
              }
              out.push([r.patient ?? pseudonym(patients, d.patientKey), name, ...r.rest]);
            } catch (err) {
              const which = located[i]!.length > 1 ? `instance ${loc.instance} of ${r.uid}` : r.uid;
              fail(failure(i + 1, which, err));
            } finally {
              report("retrieving", ++retrieved, total);
            }
          }),
        ),
      ),
    );
    cancelled();
    failed.sort((a, b) => a.row - b.row || a.uid.localeCompare(b.uid));
    if (out.length === 0)
      throw new ApiError(
        422,
        "pacs_import_empty",
        msg("pacs.import_empty", { failures: failureList(failed.slice(0, 5)) }),
        failed
          .slice(0, 100)
          .map((f) => detail("csv", msg("pacs.row_failure", { row: f.row, uid: f.uid, reason: f.text }), { row: f.row, uid: f.uid })),
      );
    report("storing", 0, out.length);
    out.sort((a, b) => a[1].localeCompare(b[1]));
    const csv = [[PATIENT_COL, IMAGE_COL, ...table.restHeader], ...out].map((line) => line.map(csvField).join(",")).join("\n") + "\n";
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from(csv, "utf8"), "dataset.csv");
    for (const line of out) zip.addFile(path.join(work, line[1]), line[1]);
    zip.end();
    const stored = await this.deps.store(scope, objectPath, zip.outputStream as Readable);
    report("storing", out.length, out.length);
    return {
      zip_gcloud: objectPath,
      ...stored,
      rows: table.rows.length,
      instances: out.length,
      failed,
      deidentification: {
        profile: PROFILE,
        replaced: [...replaced].map(([t, k]) => ({ attribute: REPLACED[t].keyword, with: REPLACED[t].how, instances: k })),
        removed: [...removed].sort().map(([t, k]) => ({ attribute: attributeName(t), instances: k })),
        private_removed: privateRemoved,
      },
    };
  }

  private headers(target: PacsTarget, accept: string): Record<string, string> {
    return { accept, ...(target.authorization ? { authorization: target.authorization } : {}) };
  }

  /** QIDO-RS: GET {root}/{path}; the answer's JSON list. */
  private async qido(target: PacsTarget, pathAndQuery: string): Promise<Array<Record<string, { Value?: string[] }>>> {
    const res = await this.deps.guard().fetch(`${target.root}/${pathAndQuery}`, {
      headers: this.headers(target, "application/dicom+json"),
      maxRedirects: 0,
      maxBytes: 16 * 1024 * 1024,
    });
    if (res.status === 204 || res.status === 404) return [];
    if (res.status !== 200) throw new RowFailure(httpReason(res.status, "search"));
    if (res.body.length === 0) return [];
    let found: unknown;
    try {
      found = JSON.parse(res.body.toString("utf8"));
    } catch {
      found = undefined;
    }
    if (!Array.isArray(found)) throw new RowFailure(msg("pacs.search_not_json"));
    return found as Array<Record<string, { Value?: string[] }>>;
  }

  /** The instances a UID stands for: an instance, the instances of a series, or of a study (tried in that order). */
  private async locate(target: PacsTarget, uid: string): Promise<Located[]> {
    if (!/^[0-9]+(\.[0-9]+)*$/.test(uid) || uid.length > 64) throw new RowFailure(msg("pacs.not_a_uid"));
    const v = (o: Record<string, { Value?: string[] }>, tag: string) => o[tag]?.Value?.[0] ?? "";
    const tries: Array<[Level, string]> = [
      ["instance", `instances?SOPInstanceUID=${uid}&includefield=0020000D&includefield=0020000E`],
      ["series", `series?SeriesInstanceUID=${uid}&includefield=0020000D`],
      ["study", `studies/${uid}/instances?includefield=0020000E`],
    ];
    for (const [level, query] of tries) {
      const found = await this.qido(target, query);
      if (!found.length) continue;
      if (level === "instance") return found.map((o) => ({ study: v(o, "0020000D"), series: v(o, "0020000E"), instance: uid }));
      if (level === "series") {
        const study = v(found[0], "0020000D");
        const inst = await this.qido(target, `studies/${study}/series/${uid}/instances`);
        if (!inst.length) throw new RowFailure(msg("pacs.empty_series"));
        return inst.map((o) => ({ study, series: uid, instance: v(o, "00080018") }));
      }
      return found.map((o) => ({ study: uid, series: v(o, "0020000E"), instance: v(o, "00080018") }));
    }
    throw new RowFailure(msg("pacs.uid_not_found"));
  }

  /** WADO-RS: the instance as stored (transfer-syntax=*), at most maxInstanceBytes. */
  private async retrieve(target: PacsTarget, loc: Located): Promise<Buffer> {
    if (!loc.study || !loc.series || !loc.instance) throw new RowFailure(msg("pacs.search_lacks_uid"));
    const url = `${target.root}/studies/${loc.study}/series/${loc.series}/instances/${loc.instance}`;
    const res = await this.deps.guard().fetch(url, {
      headers: this.headers(target, DICOM_ACCEPT),
      maxRedirects: 0,
      maxBytes: this.deps.maxInstanceBytes,
    });
    if (res.status !== 200) throw new RowFailure(httpReason(res.status, "retrieval"));
    const ct = res.headers["content-type"];
    return firstMultipartPart(res.body, Array.isArray(ct) ? ct[0] : ct);
  }
}

/** Reports a phase's progress at most every PROGRESS_EVERY_MS, and always its first and last step. */
function progressReporter(watch: PacsImportWatch, failedSoFar: () => number) {
  let last = 0;
  return (phase: PacsImportProgress["phase"], done: number, total: number) => {
    if (!watch.onProgress) return;
    const now = Date.now();
    if (done !== 0 && done !== total && now - last < PROGRESS_EVERY_MS) return;
    last = now;
    watch.onProgress({ phase, done, total, failed: failedSoFar() });
  };
}

/** Without a pseudonym column, each source patient gets "pacs-patient-N" (in order of retrieval): grouped, not named. */
function pseudonym(patients: Map<string, string>, key: string): string {
  let p = patients.get(key);
  if (!p) patients.set(key, (p = `pacs-patient-${patients.size + 1}`));
  return p;
}

function httpReason(status: number, what: "search" | "retrieval"): Message {
  if (status === 401 || status === 403) return msg("pacs.credentials_refused", { status });
  if (status === 404) return msg("pacs.no_such_instance");
  return msg(what === "search" ? "pacs.search_http" : "pacs.retrieval_http", { status });
}

function failure(row: number, uid: string, err: unknown): PacsImportFailure {
  const text = reasonOf(err);
  return { row, uid, reason: say(text, "en"), text };
}

function reasonOf(err: unknown): Message {
  if (err instanceof RowFailure || err instanceof DeidentifyError) return err.text;
  if (err instanceof OutboundRefusal && err.text) return err.text;
  return msg("pacs.unexpected", { why: (err as Error).message });
}

/** "row 3 (1.2.3): reason; row 5 (...)": the first failures, each in the language the whole is said in. */
function failureList(failed: PacsImportFailure[]): Message {
  return failed
    .map((f) => msg("pacs.row_failure", { row: f.row, uid: f.uid, reason: f.text }))
    .reduce((list, next) => msg("join", { list, next }));
}
