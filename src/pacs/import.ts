import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { parse } from "csv-parse/sync";
import PQueue from "p-queue";
import yazl from "yazl";
import { ApiError, msg, detail, say, type Message } from "../errors.js";
import { DICOM_ACCEPT, firstMultipartPart } from "../net/dicomweb.js";
import type { OutboundGuard } from "../net/outbound-guard.js";
import { OutboundRefusal } from "../net/outbound-guard.js";
import type { PacsConnections, PacsTarget } from "./connection.js";
import { attributeName, deidentify, DeidentifyError, PROFILE, REPLACED } from "./deidentify.js";

/**
 * Build from the PACS (issue 51 item 2): a CSV of study, series or instance UIDs with their labels becomes a dataset
 * zip in today's layout (a CSV whose first column is the patient, an `image` column of .dcm paths, the CSV's other
 * columns as they were) holding the instances retrieved over WADO-RS, each de-identified (deidentify.ts) before it is
 * written anywhere. A study or series is expanded by QIDO-RS. Each UID that fails is named with the reason, and the
 * others are kept; nothing is stored when none succeeds. The source UIDs are in nothing stored: the CSV's UID column
 * is replaced by the image paths.
 */

export interface PacsImportRequest {
  csv: string;
  zip_gcloud: string;
  uid_col: string;
  patient_col?: string | null;
}

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
  store: (userId: string, objectPath: string, zip: Readable) => Promise<{ size: number; sha256: string }>;
}

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

export const IMAGE_COL = "image";
export const PATIENT_COL = "patient_id";

export class PacsImport {
  constructor(private readonly deps: PacsImportDeps) {}

  async run(userId: string, objectPath: string, req: PacsImportRequest): Promise<PacsImportResult> {
    const table = readCsv(req);
    const target = await this.deps.connections.target(userId);
    if (!target) throw new ApiError(404, "not_found", msg("pacs.not_configured"));
    const work = path.join(this.deps.dataDir, "tmp", `pacs-import-${Date.now()}-${randomBytes(4).toString("hex")}`);
    await fs.promises.mkdir(path.join(work, "images"), { recursive: true });
    try {
      return await this.build(userId, objectPath, target, table, work);
    } finally {
      await fs.promises.rm(work, { recursive: true, force: true });
    }
  }

  private async build(userId: string, objectPath: string, target: PacsTarget, table: CsvTable, work: string): Promise<PacsImportResult> {
    const failed: PacsImportFailure[] = [];
    const queue = new PQueue({ concurrency: this.deps.concurrency });
    // Expansion first, so the instance limit is known before anything is retrieved.
    const located = await Promise.all(
      table.rows.map((r, i) =>
        queue.add(async () => {
          try {
            return await this.locate(target, r.uid);
          } catch (err) {
            failed.push(failure(i + 1, r.uid, err));
            return [];
          }
        }),
      ),
    );
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
    await Promise.all(
      table.rows.flatMap((r, i) =>
        (located[i] ?? []).map((loc) =>
          queue.add(async () => {
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
              failed.push(failure(i + 1, which, err));
            }
          }),
        ),
      ),
    );
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
    out.sort((a, b) => a[1].localeCompare(b[1]));
    const csv = [[PATIENT_COL, IMAGE_COL, ...table.restHeader], ...out].map((line) => line.map(csvField).join(",")).join("\n") + "\n";
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from(csv, "utf8"), "dataset.csv");
    for (const line of out) zip.addFile(path.join(work, line[1]), line[1]);
    zip.end();
    const stored = await this.deps.store(userId, objectPath, zip.outputStream as Readable);
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

interface CsvTable {
  restHeader: string[];
  rows: Array<{ uid: string; patient: string | null; rest: string[] }>;
}

function bad(field: string, problem: Message): ApiError {
  return new ApiError(400, "invalid_request", msg("request.field_problem", { field, problem }), [detail(field, problem)]);
}

function readCsv(req: PacsImportRequest): CsvTable {
  let records: string[][];
  try {
    records = parse(req.csv.replace(/^\uFEFF/, ""), { relax_column_count: false, skip_empty_lines: true, trim: true });
  } catch (err) {
    throw bad("csv", msg("pacs.csv_unreadable", { why: (err as Error).message }));
  }
  if (records.length < 2) throw bad("csv", msg("pacs.csv_too_short"));
  const header = records[0];
  const uidAt = header.indexOf(req.uid_col);
  if (uidAt < 0) throw bad("uid_col", msg("pacs.no_uid_column", { column: req.uid_col, columns: header.join(", ") }));
  const patientAt = req.patient_col ? header.indexOf(req.patient_col) : -1;
  if (req.patient_col && patientAt < 0) throw bad("patient_col", msg("pacs.no_column", { column: req.patient_col }));
  for (const reserved of [PATIENT_COL, IMAGE_COL])
    if (header.some((h, i) => h === reserved && i !== uidAt && i !== patientAt))
      throw bad("csv", msg("pacs.reserved_column", { column: reserved }));
  const keep = header.map((_, i) => i).filter((i) => i !== uidAt && i !== patientAt);
  const rows = records.slice(1).map((r, i) => {
    const uid = r[uidAt];
    if (!uid) throw bad("csv", msg("pacs.empty_cell", { row: i + 1, column: req.uid_col }));
    const patient = patientAt >= 0 ? r[patientAt] || null : null;
    if (patientAt >= 0 && !patient) throw bad("csv", msg("pacs.empty_cell", { row: i + 1, column: req.patient_col ?? "" }));
    return { uid, patient, rest: keep.map((k) => r[k]) };
  });
  return { restHeader: keep.map((k) => header[k]), rows };
}

/** Without a pseudonym column, each source patient gets "pacs-patient-N" (in order of retrieval): grouped, not named. */
function pseudonym(patients: Map<string, string>, key: string): string {
  let p = patients.get(key);
  if (!p) patients.set(key, (p = `pacs-patient-${patients.size + 1}`));
  return p;
}

function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
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
