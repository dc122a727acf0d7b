import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { and, desc, eq, sql } from "drizzle-orm";
import PQueue from "p-queue";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { files } from "../db/schema.js";
import { ApiError } from "../errors.js";
import type { Logger } from "../logger.js";
import { BucketLimitError, type Bucket } from "../storage/bucket.js";
import { listColumns, type ColumnsResult } from "./columns.js";
import { prepareDataset } from "./prepare.js";
import { DatasetFault, type DatasetReport } from "./report.js";
import type { DatasetTask } from "./types.js";
import { feedUpload, isClientAbort, notAZip, NotAZipError, uploadInterrupted, UploadInterruptedError, zipSignatureCheck } from "./upload-stream.js";
import { resolveZipPath } from "./zip-path.js";

export interface UploadResult {
  zip_gcloud: string;
  size: number;
  sha256: string;
}

/**
 * Uploads, validation and column listing. Validation decodes every image, so only a couple run at once;
 * the others wait their turn rather than starve the CPU that training and serving need.
 */
export class DatasetService {
  private readonly queue = new PQueue({ concurrency: 2 });

  constructor(private readonly deps: { bucket: Bucket; config: Config; db: Db; logger: Logger }) {}

  private tmpDir(kind: string): string {
    return path.join(this.deps.config.dataDir, "tmp", `${kind}-${Date.now()}-${randomBytes(4).toString("hex")}`);
  }

  /**
   * Streams `body` to the bucket at objectPath (already checked for the caller), never holding it in memory.
   * The size limit stops the write and nothing is left behind. `declaredLength` (Content-Length) is refused early.
   */
  async upload(userId: string, objectPath: string, body: Readable, declaredLength?: number): Promise<UploadResult> {
    const max = this.deps.config.MAX_UPLOAD_BYTES;
    if (declaredLength !== undefined && declaredLength > max) throw tooLarge(max);
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
    await this.deps.db
      .insert(files)
      .values({ userId, path: objectPath, size: result.size, sha256: result.sha256 })
      .onConflictDoUpdate({ target: files.path, set: { size: result.size, sha256: result.sha256, createdAt: sql`now()` } });
    return { zip_gcloud: objectPath, ...result };
  }

  async listFiles(userId: string) {
    const rows = await this.deps.db.select().from(files).where(eq(files.userId, userId)).orderBy(desc(files.createdAt));
    return rows.map((r) => ({ zip_gcloud: r.path, size: r.size, sha256: r.sha256, created_at: r.createdAt }));
  }

  async deleteFile(userId: string, objectPath: string): Promise<void> {
    const [row] = await this.deps.db.select().from(files).where(and(eq(files.userId, userId), eq(files.path, objectPath)));
    if (!row && !(await this.deps.bucket.stat(objectPath))) throw new ApiError(404, "not_found", `no file at ${objectPath}`);
    await this.deps.bucket.delete(objectPath);
    await this.deps.db.delete(files).where(eq(files.path, objectPath));
  }

  /** Runs every check on the zip (no training) and returns the report; nothing is kept. */
  async validate(userId: string, zipGcloud: string, task: DatasetTask): Promise<DatasetReport> {
    const zipPath = resolveZipPath(zipGcloud, userId);
    if (!(await this.deps.bucket.stat(zipPath))) throw new ApiError(404, "not_found", `no file at ${zipPath}; upload it first (PUT /v1/files/${zipPath})`);
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

  async columns(userId: string, zipGcloud: string): Promise<ColumnsResult> {
    const zipPath = resolveZipPath(zipGcloud, userId);
    if (!(await this.deps.bucket.stat(zipPath))) throw new ApiError(404, "not_found", `no file at ${zipPath}`);
    const dir = this.tmpDir("columns");
    const local = path.join(dir, "d.zip");
    try {
      await fs.promises.mkdir(dir, { recursive: true });
      await pipeline(await this.deps.bucket.read(zipPath), fs.createWriteStream(local));
      const { ZIP_MAX_ENTRIES, ZIP_MAX_UNCOMPRESSED_BYTES, ZIP_MAX_COMPRESSION_RATIO } = this.deps.config;
      return await listColumns(local, { maxEntries: ZIP_MAX_ENTRIES, maxUncompressedBytes: ZIP_MAX_UNCOMPRESSED_BYTES, maxCompressionRatio: ZIP_MAX_COMPRESSION_RATIO });
    } catch (err) {
      if (err instanceof DatasetFault) throw new ApiError(422, err.code, err.message);
      throw err;
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  }
}

function tooLarge(max: number): ApiError {
  return new ApiError(413, "payload_too_large", `the file is larger than the upload limit of ${max} bytes (MAX_UPLOAD_BYTES)`, undefined, { connection: "close" });
}
