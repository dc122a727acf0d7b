import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import type { Config } from "../config.js";
import { MAX_XLSX_BYTES, spoolUpload } from "../datasets/table-upload.js";
import { ApiError, msg, detail, say, storedMessage, messageFromStore, type Message } from "../errors.js";
import type { Language } from "../i18n/index.js";
import type { ExperimentService } from "../experiments/service.js";
import { EventHub } from "../experiments/event-hub.js";
import { eventStream, type StreamItem } from "../experiments/event-stream.js";
import type { Logger } from "../logger.js";
import type { AuditActor } from "../audit/audit-log.js";
import type { PacsConnections } from "../pacs/connection.js";
import type { PacsSendBack, SendPlan } from "../pacs/send-back.js";
import { readSource } from "../pacs/source.js";
import type { Serving } from "../serving/index.js";
import type { LoadedModel } from "../serving/model-cache.js";
import { inputCheckOf } from "../serving/input-check.js";
import { JsonBytes } from "../serving/json-encode.js";
import { classNames, type ServedManifest } from "../serving/manifest.js";
import type { Bucket } from "../storage/bucket.js";
import { FairQueue } from "./fair-queue.js";
import {
  countZipImages,
  dataUri,
  MAX_ROW_CHARS,
  scanTable,
  tableRows,
  zipImages,
  type RowItem,
  type TableLimits,
  type ZipLimits,
} from "./input.js";
import { overlayClass, overlayPng, OverlayWriter } from "./overlays.js";
import { refusals, size } from "./refusals.js";
import { resultHeader, resultLines, ResultsFile, type OverlayCells } from "./results.js";
import { workbookToCsv } from "./workbook.js";
import type { BatchRepository, BatchRow, BatchSnapshot } from "./repository.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";
import type { ServingScope } from "../serving/index.js";

// Batch scoring (issue 38 item 3): a table of patients or a zip of images scored by a published model, one results
// line per input, a bad row failing alone. Every input goes through serving.predict, the very call /predict makes,
// so a batch's scores are /predict's. Batches run after the upload is stored, BATCH_CONCURRENCY at a time per process
// and one at a time per user (fair-queue.ts): the request answers 202 at once and the client follows
// GET /v1/batches/{id}. What a file may cost is bounded by the file itself: a table's cells (BATCH_MAX_CELLS) and
// rows (MAX_ROW_CHARS), an .xlsx's expansion (workbook.ts) and results.csv's size (refusals.ts: resultsLimit).

export type BatchInputKind = "table" | "xlsx" | "images";

export const BATCH_CONTENT_TYPES: Record<string, BatchInputKind> = {
  "text/csv": "table",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "application/zip": "images",
};

/** A runner that has not touched its batch for this long is gone (its process died): the batch is failed. */
const STALE_S = 120;
/** Inputs scored at once by one batch (in order of the input). */
const IN_FLIGHT = 4;

type Item = RowItem | { id: string; message: string; outOfRange: string[]; error?: string; bytes?: Buffer };
interface Scored {
  item: Item;
  answer?: Record<string, unknown>;
  /** The image's Grad-CAM overlay (a batch with overlays), and the class whose map it shows. */
  overlay?: { png: Buffer; classIndex?: string } | { failed: string };
  error?: string;
  /** A server-side failure (5xx): it stops the batch. */
  fatal?: Error;
}
const PROGRESS_EVERY_MS = 1000;

export interface BatchView {
  batch_id: string;
  file_name: string | null;
  experiment_id: number;
  model_version: number;
  input: BatchInputKind;
  status: string;
  total: number | null;
  done: number;
  failed: number;
  flagged: number;
  failure_reason: string | null;
  created_at: string;
  finished_at: string | null;
  results_url: string | null;
  overlays: boolean;
  overlays_url: string | null;
  /** Each DICOM's answer written back into the PACS as a structured report (and capture), and how many reached it. */
  send_back: boolean;
  pacs_sent: number;
  pacs_failed: number;
}

/** A batch's stream: its view at each change (`progress`), then `done` or `failed` (or `deleted`), then the end. */
export type BatchStreamItem =
  | { event: "progress" | "done" | "failed"; id: number; view: BatchView }
  | { event: "deleted"; id: number; batchId: string }
  | { keepAlive: true }
  | { lifetimeEnded: true };

const TERMINAL = new Set(["done", "failed"]);

/** Why a failed batch failed, in `lang`: its catalog words when it kept them, else its English (an older row). */
function failureIn(row: BatchRow, lang: Language): string | null {
  const text = messageFromStore(row.failureText);
  return text ? say(text, lang) : row.failureReason;
}

export class BatchService {
  private readonly queue: FairQueue;
  /**
   * Batches of this process, queued or running: touched every 30 s, so no replica's recover() takes one for dead while
   * it waits behind another or converts a large workbook before its first line.
   */
  private readonly alive = new Set<string>();
  private readonly keepAlive = setInterval(() => {
    if (this.alive.size) this.deps.repo.touch([...this.alive]).catch(() => undefined);
  }, 30_000).unref();

  /** One database read per batch per tick, shared by all its open streams in this process (event-hub.ts). */
  readonly eventHub: EventHub<BatchSnapshot>;

  constructor(
    private readonly deps: {
      repo: BatchRepository;
      bucket: Bucket;
      config: Config;
      logger: Logger;
      serving: Serving;
      experiments: ExperimentService;
      /** Send-back batches (?send_back=true): the user's PACS and the writer Try it and the auto-scorer use. */
      pacs?: { connections: PacsConnections; sendBack: PacsSendBack };
    },
  ) {
    this.queue = new FairQueue({ concurrency: deps.config.BATCH_CONCURRENCY, perUser: 1 });
    // A batch gone from the table (its experiment deleted) ends its streams as a finished one does.
    this.eventHub = new EventHub<BatchSnapshot>(deps.repo, (e) => !e.row || TERMINAL.has(e.row.status), { pollMs: 500 });
  }

  /** At start-up: batches whose process died while scoring are failed with the reason, not left running. */
  async recover(): Promise<void> {
    const n = await this.deps.repo.failStale(STALE_S, msg("batch.server_stopped"));
    if (n) this.deps.logger.warn({ batches: n }, "batches left running by a stopped process were failed");
  }

  /** A batch as the caller reads it, why it failed in `lang` (the API's language of Accept-Language). */
  view(row: BatchRow, lang: Language = "en"): BatchView {
    return {
      batch_id: row.id,
      file_name: row.fileName,
      experiment_id: row.experimentId,
      model_version: row.modelVersion,
      input: row.inputKind as BatchInputKind,
      status: row.status,
      total: row.total,
      done: row.done,
      failed: row.failed,
      flagged: row.flagged,
      failure_reason: failureIn(row, lang),
      created_at: row.createdAt.toISOString(),
      finished_at: row.finishedAt?.toISOString() ?? null,
      results_url: row.status === "done" ? `/v1/batches/${row.id}/results.csv` : null,
      overlays: row.overlays,
      overlays_url: row.status === "done" && row.overlays ? `/v1/batches/${row.id}/overlays.zip` : null,
      send_back: row.sendBack,
      pacs_sent: row.pacsSent,
      pacs_failed: row.pacsFailed,
    };
  }

  /**
   * Takes one of the user's open-stream slots, the same slots as experiments' streams (429 too_many_streams past
   * EVENT_STREAMS_PER_USER); the caller gives it back when its stream ends, however it ends.
   */
  openEventStream(userId: string): () => void {
    return this.deps.experiments.openEventStream(userId);
  }

  /**
   * The batch's progress as it changes: its view now, then at each change (the runner writes progress once a
   * second), until it is done or failed, the reader leaves, or EVENT_STREAM_MAX_S passes (then lifetimeEnded: the
   * client opens a new stream, which starts again from the batch's state then). Read through the shared poller of
   * the batch (eventStream); a write that changes nothing a reader sees (the 30 s keep-alive of a queued batch) is
   * not sent.
   */
  async *events(row: BatchRow, signal: AbortSignal, lang: Language = "en"): AsyncGenerator<BatchStreamItem> {
    let last = "";
    const items: AsyncGenerator<StreamItem<BatchSnapshot>> = eventStream(this.eventHub, this.deps.repo, row.id, 0, {
      signal,
      maxLifetimeMs: this.deps.config.EVENT_STREAM_MAX_S * 1000,
    });
    for await (const item of items) {
      if ("keepAlive" in item) yield item;
      else if ("lifetimeEnded" in item) yield { lifetimeEnded: true };
      else if (!item.event.row) yield { event: "deleted", id: item.event.seq, batchId: row.id };
      else {
        const view = this.view(item.event.row, lang);
        const seen = JSON.stringify(view);
        if (seen === last) continue;
        last = seen;
        const event = view.status === "done" ? "done" : view.status === "failed" ? "failed" : "progress";
        yield { event, id: item.event.seq, view };
      }
    }
  }

  /** Another workspace's batch is 404, as if it did not exist. */
  async get(scope: Scope, batchId: string): Promise<BatchRow> {
    assertAllowed(scope.workspace, "experiment.read");
    const row = /^[0-9a-f-]{36}$/i.test(batchId) ? await this.deps.repo.get(scope.workspace.id, batchId) : undefined;
    if (!row) throw new ApiError(404, "not_found", msg("batch.not_found", { id: batchId }));
    return row;
  }

  list(scope: Scope, experimentId: number): Promise<BatchRow[]> {
    assertAllowed(scope.workspace, "experiment.read");
    return this.deps.repo.listForExperiment(scope.workspace.id, experimentId);
  }

  /** The results CSV of a finished batch, from the bucket. */
  async results(scope: Scope, batchId: string): Promise<Readable> {
    const row = await this.get(scope, batchId);
    if (row.status !== "done") throw new ApiError(409, "batch_not_done", msg("batch.results_not_ready", { status: row.status }));
    return this.deps.bucket.read(resultsPath(scope.workspace.storagePrefix, row));
  }

  /** overlays.zip of a finished batch that asked for overlays, from the bucket, with its size. */
  async overlays(scope: Scope, batchId: string): Promise<{ stream: Readable; size: number | null }> {
    const row = await this.get(scope, batchId);
    if (!row.overlays) throw new ApiError(404, "not_found", msg("batch.no_overlays"));
    if (row.status !== "done") throw new ApiError(409, "batch_not_done", msg("batch.overlays_not_ready", { status: row.status }));
    const stat = await this.deps.bucket.stat(overlaysPath(scope.workspace.storagePrefix, row));
    return { stream: await this.deps.bucket.read(overlaysPath(scope.workspace.storagePrefix, row)), size: stat?.size ?? null };
  }

  /**
   * Stores the body as the batch's input and queues it. The model must be published (409 model_not_ready
   * otherwise, as /predict says); a table goes to a table model and a zip of images to an image model.
   */
  async create(
    scope: Scope,
    experimentId: number,
    kind: BatchInputKind,
    body: Readable,
    opts: { overlays?: boolean; fileName?: string; sendBack?: AuditActor } = {},
  ): Promise<BatchRow> {
    const userId = scope.userId;
    const experiment = await this.deps.experiments.get(scope, experimentId);
    assertAllowed(scope.workspace, "batch.run");
    const model = await this.deps.serving.model(scope, experimentId);
    const tableModel = model.manifest.kind === "tabular";
    if (opts.sendBack) await this.refuseSendBack(userId, kind, body);
    if (
      opts.overlays &&
      (model.manifest.kind !== "vision_classification" || model.manifest.problem === "regression" || !model.manifest.outputs.cam)
    ) {
      body.resume();
      throw new ApiError(
        400,
        "invalid_request",
        msg(
          model.manifest.kind === "detection"
            ? "batch.overlays_detection"
            : model.manifest.kind === "vision_classification" && model.manifest.outputs.cam && model.manifest.problem === "regression"
              ? "batch.overlays_regression"
              : model.manifest.kind === "vision_classification"
                ? "batch.overlays_no_cam"
                : "batch.overlays_table",
        ),
        [detail("overlays", msg("batch.overlays_only_images"))],
      );
    }
    if (tableModel !== (kind !== "images")) {
      body.resume();
      throw new ApiError(415, "unsupported_media_type", msg(tableModel ? "batch.table_model" : "batch.image_model"));
    }
    const work = path.join(this.deps.config.dataDir, "tmp", `batch-${Date.now()}-${randomBytes(4).toString("hex")}`);
    await fs.promises.mkdir(work, { recursive: true });
    const input = path.join(work, `input.${kind === "table" ? "csv" : kind === "xlsx" ? "xlsx" : "zip"}`);
    const maxBytes = kind === "xlsx" ? Math.min(MAX_XLSX_BYTES, this.deps.config.MAX_UPLOAD_BYTES) : this.deps.config.MAX_UPLOAD_BYTES;
    try {
      await spoolUpload(body, input, maxBytes);
    } catch (err) {
      await fs.promises.rm(work, { recursive: true, force: true });
      if (err instanceof ApiError && err.status === 413)
        throw new ApiError(
          413,
          "payload_too_large",
          msg(kind === "xlsx" ? "batch.workbook_too_large" : "batch.file_too_large", { max: size(maxBytes) }),
          undefined,
          err.headers,
        );
      throw err;
    }
    const cap = this.deps.config.BATCH_OVERLAYS_MAX_IMAGES;
    if (opts.overlays) {
      const images = await countZipImages(input, this.zipLimits());
      if (images > cap) {
        await fs.promises.rm(work, { recursive: true, force: true });
        throw new ApiError(413, "too_many_images", msg("batch.too_many_images", { images, max: cap }), { limit: cap, images });
      }
    }
    const row = await this.deps.repo.insert({
      userId,
      workspaceId: scope.workspace.id,
      experimentUuid: experiment.id,
      experimentId,
      modelVersion: model.row.version,
      inputKind: kind,
      overlays: opts.overlays ?? false,
      fileName: opts.fileName ?? null,
      sendBack: Boolean(opts.sendBack),
      status: "queued",
    });
    this.alive.add(row.id);
    this.queue.add(userId, () => this.run(row, input, work, model.manifest, scope, opts.sendBack).finally(() => this.alive.delete(row.id)));
    return row;
  }

  /** send_back=true needs a zip of images (DICOM: the answer goes into each file's study) and a configured PACS. */
  private async refuseSendBack(userId: string, kind: BatchInputKind, body: Readable): Promise<void> {
    const refuse = (why: Message) => {
      body.resume();
      throw new ApiError(400, "send_back_unavailable", msg("batch.send_back_refused", { why }), [detail("send_back", why)]);
    };
    if (kind !== "images") refuse(msg("batch.send_back_needs_dicom_zip"));
    if (!this.deps.pacs || !(await this.deps.pacs.connections.target(userId))) refuse(msg("batch.send_back_no_pacs"));
  }

  /**
   * Writes one DICOM's answer into the PACS, in its own study. The UIDs of the written objects derive from the user,
   * model, version and source instance, so sending the same file again (a batch run twice) gives the PACS the same
   * objects, which it keeps once. An image that is not DICOM, or a send that fails, counts as failed and is audited.
   */
  private async sendBack(plan: SendPlan, actor: AuditActor, answer: Record<string, unknown>, bytes: Buffer, model: LoadedModel) {
    let sop: string;
    try {
      sop = readSource(bytes).sopInstanceUid;
    } catch {
      sop = `sha256:${createHash("sha256").update(bytes).digest("hex")}`; // not DICOM: deliver() audits why nothing was sent
    }
    const seed = `batch:${plan.userId}:${plan.experimentId}:${model.row.version}:${sop}`;
    return this.deps.pacs!.sendBack.deliver(plan, actor, answer, bytes, model, seed);
  }

  private zipLimits(): ZipLimits {
    const c = this.deps.config;
    return { maxImageBytes: c.FETCH_MAX_BYTES, maxEntries: c.ZIP_MAX_ENTRIES, maxCompressionRatio: c.ZIP_MAX_COMPRESSION_RATIO };
  }

  private tableLimits(): TableLimits {
    return { maxRowChars: MAX_ROW_CHARS, maxCells: this.deps.config.BATCH_MAX_CELLS };
  }

  private async run(
    row: BatchRow,
    input: string,
    work: string,
    manifest: ServedManifest,
    scope: ServingScope,
    sendBackActor?: AuditActor,
  ): Promise<void> {
    const { repo, bucket, logger } = this.deps;
    const out = path.join(work, "results.csv");
    const overlays = row.overlays ? new OverlayWriter(path.join(work, "overlays")) : undefined;
    let done = 0;
    let failed = 0;
    let flagged = 0;
    let pacsSent = 0;
    let pacsFailed = 0;
    let lastProgress = 0;
    let results: ResultsFile | undefined;
    // The work folder goes before the batch reads as finished (done or failed), so whoever sees the final status
    // never finds its half-written files still there; the finally below only catches what returned early.
    const removeWork = async () => {
      results?.destroy();
      await fs.promises.rm(work, { recursive: true, force: true });
    };
    try {
      // The total first (a zip's central directory, a table's first pass), so progress reads "done of total"; the
      // first pass also refuses a table past its limits before anything is scored.
      const inputBytes = (await fs.promises.stat(input)).size;
      let csv = input;
      if (row.inputKind === "xlsx") {
        csv = path.join(work, "input.csv");
        await workbookToCsv(input, csv, {
          maxCompressionRatio: this.deps.config.ZIP_MAX_COMPRESSION_RATIO,
          maxCells: this.tableLimits().maxCells,
        });
      }
      const total =
        row.inputKind === "images"
          ? await countZipImages(input, this.zipLimits())
          : (await scanTable(csv, manifest, this.tableLimits())).rows;
      const shape = { images: row.inputKind === "images", overlays: row.overlays };
      ResultsFile.refuseEarly(manifest, shape, inputBytes, total);
      await repo.update(row.id, { status: "running", total });
      // The PACS and the model as they are now: the answers of this batch go where its settings said when it began.
      // The PACS connection is its starter's: a batch whose starter's account was erased has none to send to.
      const target = sendBackActor && row.userId ? await this.deps.pacs!.connections.target(row.userId) : null;
      if (sendBackActor && !target) throw new ApiError(409, "send_back_unavailable", msg("batch.send_back_pacs_removed"));
      const sendPlan =
        target && row.userId ? { userId: row.userId, workspaceId: row.workspaceId, experimentId: row.experimentId, target } : null;
      const sendModel = sendPlan ? await this.deps.serving.model(scope, row.experimentId) : null;
      results = new ResultsFile(out, inputBytes);
      const write = (text: string) => results!.write(text);
      await write(resultHeader(manifest, shape));
      // A few inputs in flight, written in input order: an image model's threads and the image decoding overlap
      // (one at a time left them idle between images), while the results stay line for line with the input.
      const window: Array<Promise<Scored>> = [];
      // Each row's monitoring record is kept as batch-<batch id>-<n> (n counts the inputs from 1): never the row's own id.
      let sent = 0;
      const predictOne = async (item: Item): Promise<Scored> => {
        const requestId = `batch-${row.id}-${++sent}`;
        if (item.error) return { item, error: item.error };
        try {
          const r = await this.deps.serving.predict(scope, row.experimentId, item.message, { noMaps: !overlays, requestId });
          const answer = (r instanceof JsonBytes ? r.toJSON() : r) as Record<string, unknown>;
          answer.input_check = inputCheckOf(r); // results.csv's input_check column (src/serving/input-check.ts)
          // Parsed into our own objects: the thread's answer memory goes back to it for the next answer (placement-threads.ts).
          if (r instanceof JsonBytes) r.release?.();
          if (sendPlan && "bytes" in item && item.bytes) {
            const sent = await this.sendBack(sendPlan, sendBackActor!, answer, item.bytes, sendModel!);
            if (sent.ok) pacsSent++;
            else pacsFailed++;
          }
          if (!overlays || !("bytes" in item) || !item.bytes) return { item, answer };
          const classIndex = overlayClass(answer);
          const maps = answer.gradients as Record<string, number[][]> | undefined;
          delete answer.gradients; // the map goes into the picture; results.csv never carried it
          try {
            const png = await overlayPng(
              item.bytes,
              { columnas: answer.columnas as number, filas: answer.filas as number },
              classIndex !== undefined ? maps?.[classIndex] : undefined,
              this.deps.config.FETCH_MAX_PIXELS,
            );
            return { item, answer, overlay: { png, classIndex } };
          } catch (err) {
            // The image was scored; only its picture failed (an image sharp cannot draw): its line says so, the batch goes on.
            this.deps.logger.warn({ err, batch_id: row.id }, "a batch overlay could not be drawn");
            return { item, answer, overlay: { failed: "(none: the image could not be drawn)" } };
          }
        } catch (err) {
          if (err instanceof ApiError && err.status < 500) return { item, error: err.message };
          return { item, fatal: err instanceof Error ? err : new Error(String(err)) };
        }
      };
      const names = classNames(manifest);
      const record = async ({ item, answer, error, fatal, overlay }: Scored) => {
        if (fatal) throw fatal;
        if (error) failed++;
        if (item.outOfRange.length) flagged++;
        done++;
        let cells: OverlayCells | undefined;
        if (overlays) {
          cells = { file: "", className: "" };
          if (overlay && "failed" in overlay) cells.file = overlay.failed;
          else if (overlay) {
            cells.file = await overlays.add(item.id, overlay.png);
            cells.className = overlay.classIndex !== undefined ? (names[overlay.classIndex] ?? overlay.classIndex) : "";
          }
        }
        await write(resultLines(manifest, item.id, answer, item.outOfRange, error, cells));
        if (Date.now() - lastProgress > PROGRESS_EVERY_MS) {
          lastProgress = Date.now();
          await repo.update(row.id, { done, failed, flagged, pacsSent, pacsFailed });
        }
      };
      const score = async (item: Item) => {
        window.push(predictOne(item));
        if (window.length >= IN_FLIGHT) await record(await window.shift()!);
      };

      if (row.inputKind === "images") {
        // The count is known only at the end: progress shows done / null until then.
        for await (const { name, bytes } of zipImages(input, this.zipLimits())) {
          await score({ id: name, message: dataUri(bytes), outOfRange: [], bytes: overlays || sendPlan ? bytes : undefined });
        }
        if (done + window.length === 0) throw refusals.noImages();
      } else {
        for await (const item of tableRows(csv, manifest, this.tableLimits())) await score(item);
      }
      while (window.length) await record(await window.shift()!);
      await results.end();
      if (overlays) {
        // Uploaded before results.csv, so a batch whose results are there has its overlays too.
        const zipFile = path.join(work, "overlays.zip");
        await overlays.zip(zipFile);
        await bucket.uploadFile(zipFile, overlaysPath(scope.workspace.storagePrefix, row));
      }
      await bucket.uploadFile(out, resultsPath(scope.workspace.storagePrefix, row));
      // Its experiment was deleted while it ran (the row went by cascade): its results must not stay behind.
      if (!(await repo.get(row.workspaceId, row.id))) {
        await bucket.delete(resultsPath(scope.workspace.storagePrefix, row));
        if (overlays) await bucket.delete(overlaysPath(scope.workspace.storagePrefix, row));
        await bucket.removeEmptyFolders?.(batchResultsFolder(scope.workspace.storagePrefix, row));
        return;
      }
      await removeWork();
      await repo.update(row.id, { status: "done", total: done, done, failed, flagged, pacsSent, pacsFailed, finishedAt: new Date() });
    } catch (err) {
      // An ApiError without catalog words (one that crossed a process as text) keeps its English alone.
      const reason = err instanceof ApiError ? err.text : msg("batch.internal_stop");
      if (!(err instanceof ApiError)) logger.error({ err, batch_id: row.id }, "batch failed");
      await removeWork().catch(() => undefined);
      await repo
        .update(row.id, {
          status: "failed",
          done,
          failed,
          flagged,
          pacsSent,
          pacsFailed,
          failureReason: reason ? say(reason, "en") : (err as ApiError).message,
          failureText: reason ? storedMessage(reason) : null,
          finishedAt: new Date(),
        })
        .catch(() => undefined);
    } finally {
      await removeWork();
    }
  }

  /** Waits for the batches queued in this process (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue.onIdle();
  }

  close(): void {
    clearInterval(this.keepAlive);
  }
}

// A batch's files live under its workspace's storage prefix (a personal workspace's is its owner's user id, so the
// seed's `<user>/batches/<id>/` is unchanged); batch ids are unique, so a folder never holds two batches.
export function resultsPath(storagePrefix: string, row: Pick<BatchRow, "id">): string {
  return `${batchResultsFolder(storagePrefix, row)}results.csv`;
}

export function overlaysPath(storagePrefix: string, row: Pick<BatchRow, "id">): string {
  return `${batchResultsFolder(storagePrefix, row)}overlays.zip`;
}

/** Everything stored for one batch lives under this folder (deleted with its experiment). */
export function batchResultsFolder(storagePrefix: string, row: Pick<BatchRow, "id">): string {
  return `${storagePrefix}/batches/${row.id}/`;
}
