import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import PQueue from "p-queue";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { FileRepository } from "./file.repository.js";
import { ApiError, msg, detail } from "../errors.js";
import type { Logger } from "../logger.js";
import { BucketLimitError, type Bucket } from "../storage/bucket.js";
import { listColumns, type ColumnsResult } from "./columns.js";
import { prepareDataset } from "./prepare.js";
import { DatasetFault, type DatasetReport } from "./report.js";
import type { DatasetTask } from "./types.js";
import { SAMPLES, writeSampleCsv } from "./sample-datasets.js";
import {
  checkCsvText,
  csvNameFor,
  MAX_XLSX_BYTES,
  spoolUpload,
  tableKindOf,
  xlsxFirstSheetToCsv,
  zipOneFile,
  zipPathFor,
} from "./table-upload.js";
import {
  feedUpload,
  isClientAbort,
  notAZip,
  NotAZipError,
  uploadInterrupted,
  UploadInterruptedError,
  zipSignatureCheck,
} from "./upload-stream.js";
import { resolveZipPath } from "./zip-path.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed, type Permission } from "../workspaces/permissions.js";

/** The experiments area, as deleting a dataset needs it (wired in services.ts; datasets do not import experiments). */
export interface DatasetUsers {
  /** The user's unfinished (queued or running) experiments reading `objectPath`, or a file under it when it ends in /. */
  unfinishedUsing(workspaceId: string, objectPath: string): Promise<Array<{ experimentId: number; name: string | null; status: string }>>;
  /** POST /v1/experiments/{id}/cancel. */
  cancel(scope: Scope, experimentId: number): Promise<unknown>;
}

export interface UploadResult {
  zip_gcloud: string;
  size: number;
  sha256: string;
  /** A bare .csv/.xlsx upload: the name it was sent as, and what was stored in its place (in plain words). */
  converted_from?: string;
  note?: string;
}

/**
 * Uploads, validation and column listing. Validation decodes every image, so only a couple run at once;
 * the others wait their turn rather than starve the CPU that training and serving need.
 */
export class DatasetService {
  private readonly queue = new PQueue({ concurrency: 2 });

  private readonly files: FileRepository;

  constructor(private readonly deps: { bucket: Bucket; config: Config; db: Db; logger: Logger; users?: DatasetUsers }) {
    this.files = new FileRepository(deps.db);
  }

  private tmpDir(kind: string): string {
    return path.join(this.deps.config.dataDir, "tmp", `${kind}-${Date.now()}-${randomBytes(4).toString("hex")}`);
  }

  /**
   * Streams `body` to the bucket at objectPath (already checked for the caller), never holding it in memory.
   * The size limit stops the write and nothing is left behind. `declaredLength` (Content-Length) is refused early.
   */
  async upload(scope: Scope, objectPath: string, body: Readable, declaredLength?: number): Promise<UploadResult> {
    this.allowed(scope, "dataset.upload", body);
    const max = this.deps.config.MAX_UPLOAD_BYTES;
    if (declaredLength !== undefined && declaredLength > max) throw tooLarge(max);
    if (tableKindOf(objectPath)) return this.uploadTable(scope, objectPath, body);
    // The body goes through the signature check, so a failed write never destroys the request itself (the route
    // can still answer 413/415), and a client that goes away mid-upload fails the write: no object is left.
    const checked = zipSignatureCheck();
    const detach = feedUpload(body, checked);
    let result: { size: number; sha256: string };
    try {
      result = await this.deps.bucket.write(objectPath, checked, { maxBytes: max, contentType: "application/zip" });
    } catch (err) {
      detach();
      body.resume(); // drain what the client still sends; the error answer closes the connection
      if (err instanceof BucketLimitError) throw tooLarge(max);
      if (err instanceof NotAZipError) throw notAZip();
      if (err instanceof UploadInterruptedError || isClientAbort(err)) throw uploadInterrupted();
      throw err;
    }
    detach();
    await this.recordFile(scope, objectPath, result);
    return { zip_gcloud: objectPath, ...result };
  }

  /** A zip Builder made (an import from the PACS) stored where an upload would be, under the same limit, and recorded. */
  async storeZip(scope: Scope, objectPath: string, zip: Readable): Promise<{ size: number; sha256: string }> {
    assertAllowed(scope.workspace, "dataset.upload");
    const max = this.deps.config.MAX_UPLOAD_BYTES;
    let result: { size: number; sha256: string };
    try {
      result = await this.deps.bucket.write(objectPath, zip, { maxBytes: max, contentType: "application/zip" });
    } catch (err) {
      if (err instanceof BucketLimitError) throw tooLarge(max);
      throw err;
    }
    await this.recordFile(scope, objectPath, result);
    return result;
  }

  private async recordFile(scope: Scope, objectPath: string, result: { size: number; sha256: string }): Promise<void> {
    await this.files.record(scope.userId, scope.workspace.id, objectPath, result);
  }

  /** A refused upload still drains what the client sends, so the 403 reaches it (as a 413 does). */
  private allowed(scope: Scope, permission: Permission, body?: Readable): void {
    try {
      assertAllowed(scope.workspace, permission);
    } catch (err) {
      body?.resume();
      throw err;
    }
  }

  /** A sample table into the caller's folder `samples/`, as an upload of it would be stored. */
  async loadSample(scope: Scope, sampleId: string): Promise<UploadResult & { licence: string }> {
    assertAllowed(scope.workspace, "dataset.upload");
    const sample = SAMPLES.find((s) => s.id === sampleId);
    if (!sample) throw new ApiError(404, "not_found", msg("dataset.no_sample", { id: sampleId }));
    const work = this.tmpDir("sample");
    await fs.promises.mkdir(work, { recursive: true });
    try {
      const csv = path.join(work, `${sample.id}.csv`);
      const rows = await writeSampleCsv(sample, csv, this.deps.config.PYTHON_BIN);
      const zipPath = `${scope.workspace.storagePrefix}/samples/${sample.id}.zip`;
      const result = await this.deps.bucket.write(zipPath, zipOneFile(csv, `${sample.id}.csv`), {
        maxBytes: this.deps.config.MAX_UPLOAD_BYTES,
        contentType: "application/zip",
      });
      await this.recordFile(scope, zipPath, result);
      const note = `${sample.title}: ${rows} patients, label column “${sample.label_col}”, stored in your folder as samples/${sample.id}.zip`;
      return { zip_gcloud: zipPath, ...result, note, licence: sample.licence };
    } finally {
      await fs.promises.rm(work, { recursive: true, force: true });
    }
  }

  /**
   * A bare .csv or .xlsx (a data task's table): stored as a zip holding one CSV beside where it was sent
   * (`folder/pima.xlsx` becomes `folder/pima.zip` with `pima.csv`), which every later stage reads as any zip.
   */
  private async uploadTable(scope: Scope, tablePath: string, body: Readable): Promise<UploadResult> {
    const kind = tableKindOf(tablePath)!;
    const name = path.posix.basename(tablePath);
    const work = this.tmpDir("table");
    await fs.promises.mkdir(work, { recursive: true });
    try {
      const raw = path.join(work, `upload.${kind}`);
      await spoolUpload(
        body,
        raw,
        kind === "xlsx" ? Math.min(MAX_XLSX_BYTES, this.deps.config.MAX_UPLOAD_BYTES) : this.deps.config.MAX_UPLOAD_BYTES,
      );
      const csvName = csvNameFor(tablePath);
      let csv = raw;
      let note: string;
      if (kind === "xlsx") {
        csv = path.join(work, "table.csv");
        const sheet = await xlsxFirstSheetToCsv(raw, csv, name);
        const others = sheet.otherSheets.length
          ? `; the other sheets (${sheet.otherSheets.map((s) => `“${s}”`).join(", ")}) were not read`
          : "";
        note = `${name}: its first sheet, “${sheet.sheet}” (${sheet.rows - 1} rows below its header), was stored as ${csvName}${others}`;
      } else {
        await checkCsvText(raw, name);
        note = `${name} was stored as the dataset's table`;
      }
      const zipPath = zipPathFor(tablePath);
      const result = await this.deps.bucket.write(zipPath, zipOneFile(csv, csvName), {
        maxBytes: this.deps.config.MAX_UPLOAD_BYTES,
        contentType: "application/zip",
      });
      await this.recordFile(scope, zipPath, result);
      return { zip_gcloud: zipPath, ...result, converted_from: name, note: `${note}, zipped as ${path.posix.basename(zipPath)}` };
    } finally {
      await fs.promises.rm(work, { recursive: true, force: true });
    }
  }

  async listFiles(scope: Scope) {
    assertAllowed(scope.workspace, "experiment.read");
    const rows = await this.files.list(scope.workspace.id);
    return rows.map((r) => ({ zip_gcloud: r.path, size: r.size, sha256: r.sha256, created_at: r.createdAt }));
  }

  /**
   * Deletes one uploaded file, or (objectPath ending in /) a whole folder of them. While an unfinished experiment
   * reads one of them it is refused with 409 naming the experiments, unless `force`: they are cancelled first, and
   * their extracted copies (in their work folders, the only copies derived from an upload) go with their jobs.
   * The experiments that finished keep their reports and models: DELETE /v1/experiments/{id} removes those.
   */
  async deleteUploads(
    scope: Scope,
    objectPath: string,
    opts: { force?: boolean } = {},
  ): Promise<{ deleted: string[]; cancelled_experiments: number[] }> {
    assertAllowed(scope.workspace, "dataset.delete");
    const folder = objectPath.endsWith("/");
    const rows = await this.files.at(scope.workspace.id, objectPath);
    const objects = folder ? await this.deps.bucket.list(objectPath) : (await this.deps.bucket.stat(objectPath)) ? [objectPath] : [];
    const paths = [...new Set([...rows.map((r) => r.path), ...objects])].sort();
    if (paths.length === 0)
      throw new ApiError(
        404,
        "not_found",
        folder ? msg("dataset.no_folder", { path: objectPath.slice(0, -1) }) : msg("dataset.no_file", { path: objectPath }),
      );
    const using = (await this.deps.users?.unfinishedUsing(scope.workspace.id, objectPath)) ?? [];
    if (using.length && !opts.force) throw datasetInUse(objectPath, using);
    for (const e of using) await this.deps.users!.cancel(scope, e.experimentId).catch(() => undefined); // one that just ended is fine
    for (const p of paths) {
      await this.deps.bucket.delete(p);
      await this.files.delete(scope.workspace.id, p);
    }
    if (folder) await this.deps.bucket.removeEmptyFolders?.(objectPath);
    else await this.deps.bucket.removeEmptyFolders?.(objectPath.slice(0, objectPath.lastIndexOf("/") + 1));
    return { deleted: paths, cancelled_experiments: using.map((e) => e.experimentId) };
  }

  /** Runs every check on the zip (no training) and returns the report; nothing is kept. */
  async validate(scope: Scope, zipGcloud: string, task: DatasetTask): Promise<DatasetReport> {
    assertAllowed(scope.workspace, "experiment.read");
    const zipPath = resolveZipPath(zipGcloud, scope.workspace.storagePrefix);
    if (!(await this.deps.bucket.stat(zipPath)))
      throw new ApiError(404, "not_found", msg("dataset.no_file_upload_first", { path: zipPath }));
    return this.queue.add(async () => {
      const workDir = this.tmpDir("validate");
      try {
        const out = await prepareDataset(this.deps, { zipPath, workDir, task, seed: 0, split: "train_val_test", samples: true });
        return out.report;
      } finally {
        await fs.promises.rm(workDir, { recursive: true, force: true });
      }
    }) as Promise<DatasetReport>;
  }

  async columns(scope: Scope, zipGcloud: string): Promise<ColumnsResult> {
    assertAllowed(scope.workspace, "experiment.read");
    const zipPath = resolveZipPath(zipGcloud, scope.workspace.storagePrefix);
    if (!(await this.deps.bucket.stat(zipPath))) throw new ApiError(404, "not_found", msg("dataset.no_file", { path: zipPath }));
    const dir = this.tmpDir("columns");
    const local = path.join(dir, "d.zip");
    try {
      await fs.promises.mkdir(dir, { recursive: true });
      await pipeline(await this.deps.bucket.read(zipPath), fs.createWriteStream(local));
      const { ZIP_MAX_ENTRIES, ZIP_MAX_UNCOMPRESSED_BYTES, ZIP_MAX_COMPRESSION_RATIO } = this.deps.config;
      return await listColumns(local, {
        maxEntries: ZIP_MAX_ENTRIES,
        maxUncompressedBytes: ZIP_MAX_UNCOMPRESSED_BYTES,
        maxCompressionRatio: ZIP_MAX_COMPRESSION_RATIO,
      });
    } catch (err) {
      if (err instanceof DatasetFault) throw new ApiError(422, err.code, err.text);
      throw err;
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  }
}

function datasetInUse(objectPath: string, using: Array<{ experimentId: number; name: string | null; status: string }>): ApiError {
  const what = objectPath.endsWith("/") ? msg("dataset.the_folder", { path: objectPath.slice(0, -1) }) : objectPath;
  const named = using.map((e) =>
    e.name
      ? msg("dataset.user_named", { id: e.experimentId, name: e.name, status: e.status })
      : msg("dataset.user", { id: e.experimentId, status: e.status }),
  );
  return new ApiError(
    409,
    "dataset_in_use",
    msg("dataset.in_use", { count: using.length, what, users: named.reduce((list, next) => msg("join", { list, next })) }),
    using.map((e) =>
      detail("experiment_id", msg("dataset.reader", { id: e.experimentId, status: e.status }), {
        experiment_id: e.experimentId,
        status: e.status,
      }),
    ),
  );
}

function tooLarge(max: number): ApiError {
  return new ApiError(413, "payload_too_large", msg("dataset.upload_too_large", { max }), undefined, {
    connection: "close",
  });
}
