import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../logger.js";
import type { Bucket } from "../storage/bucket.js";
import { checkManifest, type ServedManifest } from "./manifest.js";
import type { ModelRepository, ModelRow } from "./model-repository.js";
import { openPredictor } from "./placement.js";
import type { Predictor } from "./predictor.js";
import type { ApprovalState } from "../workspaces/approval-rule.js";

/**
 * Loaded models, keyed by models row id (one id per published version).
 * - lazy: the first request for a version copies model.onnx + manifest.json from the bucket into a local
 *   cache folder and opens it where it runs (placement.ts); concurrent first requests share that one load;
 * - bounded: an LRU over the ONNX file sizes, at most MODEL_CACHE_MAX_MB; an evicted session is released
 *   after the requests already using it finish;
 * - fresh: which version is current (the one made current last: the newest published, or one made current
 *   again by rollback) is looked up in the database, remembered for a short while, and replaced at once when
 *   "model:published" or the models table's notification (builder_model_current) says so; the new version is
 *   loaded before the mapping switches, so a request never meets a half-loaded model;
 * - private: each replica copies into a folder of its own (model-cache/<host>-<pid>-<random>/<id>), because
 *   replicas may share one data folder and one replica's eviction removed a copy another was writing or about to
 *   open (bench/serve/notebook/2026-11-29-cache-race.md). Sweeps still look into every replica's folder, so an
 *   erased user's model leaves every copy on disk.
 */

export interface LoadedModel {
  row: ModelRow;
  manifest: ServedManifest;
  /** How requests reach the model (its placement: placement.ts). */
  predictor: Predictor;
  bytes: number;
  lastUsed: number;
}

export interface ModelCacheOptions {
  bucket: Bucket;
  repo: ModelRepository;
  cacheDir: string;
  maxBytes: number;
  intraOpThreads: number;
  /** SERVING_MAX_BATCH; undefined: by the execution provider that loaded the model (placement.ts). */
  maxBatch?: number;
  /** SERVING_THREADS_PER_MODEL: threads per image model on CPU (undefined: placement.ts's default). */
  threadsPerModel?: number;
  /** JPEG decoding on the image threads: libjpeg-turbo where the host has it ("auto"), or always sharp. */
  jpegDecoder?: "auto" | "sharp";
  logger: Logger;
  /** How long the newest-version lookup is trusted without the publish event (other processes may publish). */
  latestTtlMs?: number;
  /** Whether a workspace asks for approval before a version serves others' keys (issue 50 item 4); absent: never. */
  requireApproval?: (workspaceId: string) => Promise<boolean>;
}

export class ModelNotFound extends Error {}

/** A models row id, the name of its folder in the cache. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A replica's folder: host, process id, and a random part (two replicas may run in one process, as tests do). */
const REPLICA = /^(.+)-(\d+)-[0-9a-f]{8}$/;

/** Whether a replica folder's process is known to be gone: only a process of this host can be checked. */
function replicaIsDead(name: string): boolean {
  const m = REPLICA.exec(name);
  if (!m || m[1] !== os.hostname()) return false;
  try {
    process.kill(Number(m[2]), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** a was made current after b (the version served is the one made current last; version breaks a tie). */
function madeLater(a: ModelRow, b: ModelRow): boolean {
  const ta = new Date(a.madeCurrentAt).getTime();
  const tb = new Date(b.madeCurrentAt).getTime();
  return ta !== tb ? ta > tb : a.version > b.version;
}

export class ModelCache {
  private readonly loaded = new Map<string, LoadedModel>();
  private readonly loading = new Map<string, Promise<LoadedModel>>();
  private readonly latest = new Map<string, { row: ModelRow; at: number }>();
  /** Bumped per experiment when its current version changes: a lookup that started before is not remembered. */
  private readonly generation = new Map<string, number>();
  /** Versions unpublished (deleted) while this process runs: never loaded or served again. */
  private readonly removed = new Set<string>();
  /** A GPU device is there: CUDA is tried first (whether it runs is the predictor's `provider`). */
  private readonly tryCuda = fs.existsSync("/dev/nvidia0");
  /**
   * Per workspace, whether it asks for approval, remembered as long as the current version's row (latestTtlMs) and
   * dropped at once when this process changes it; another replica's change reaches here within that time.
   */
  private readonly approvalRequired = new Map<string, { on: boolean; at: number }>();
  /** LRU clock: a counter, not Date.now(), so two uses in the same millisecond still have an order. */
  private tick = 0;
  /** This replica's own folder under cacheDir: only this process writes or evicts in it. */
  readonly dir: string;

  constructor(private readonly o: ModelCacheOptions) {
    this.dir = path.join(o.cacheDir, `${os.hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`);
    fs.mkdirSync(this.dir, { recursive: true });
  }

  /** The current version of (workspace, experiment), loaded. Throws ModelNotFound when there is none. */
  async get(workspaceId: string, experimentId: number): Promise<LoadedModel> {
    const key = `${workspaceId}:${experimentId}`;
    const hit = this.latest.get(key);
    let row = hit && Date.now() - hit.at < (this.o.latestTtlMs ?? 2_000) ? hit.row : null;
    if (!row) {
      const gen = this.generation.get(key) ?? 0;
      row = await this.o.repo.current(workspaceId, experimentId);
      if (!row) throw new ModelNotFound(`no published model for experiment ${experimentId}`);
      const current = this.latest.get(key);
      if ((this.generation.get(key) ?? 0) !== gen) {
        // The current version changed while this lookup ran: ask again rather than remember what may be stale.
        row = (await this.o.repo.current(workspaceId, experimentId)) ?? row;
      } else if (!current || !madeLater(current.row, row)) this.latest.set(key, { row, at: Date.now() });
      // Never step back to a version made current before one already announced.
      else row = current.row;
    }
    return this.load(row);
  }

  /**
   * Called on "model:published" and on the models table's notification (a version made current: published, an
   * operating point saved, a rollback): load that version, then point the experiment at it and drop the old one.
   */
  async warm(row: ModelRow): Promise<void> {
    const key = `${row.workspaceId}:${row.experimentId}`;
    this.generation.set(key, (this.generation.get(key) ?? 0) + 1);
    const loaded = await this.load(row);
    const previous = this.latest.get(key);
    if (previous && madeLater(previous.row, row)) return; // a later change arrived first
    this.latest.set(key, { row, at: Date.now() });
    if (previous && previous.row.id !== row.id) void this.evict(previous.row.id);
    this.o.logger.info({ experiment_id: row.experimentId, version: row.version, bytes: loaded.bytes }, "model warmed");
  }

  /**
   * A process (this one or another) made a version current (builder_model_current): lookups stop trusting what they
   * remember at once, and where this replica serves the experiment, the version is loaded and switched to (warm).
   */
  async madeCurrent(workspaceId: string, experimentId: number, modelId: string): Promise<void> {
    const key = `${workspaceId}:${experimentId}`;
    this.generation.set(key, (this.generation.get(key) ?? 0) + 1);
    // Never served here: nothing to switch (the first request looks the current version up), and no replica
    // loads every model published anywhere.
    if (!this.latest.has(key)) return;
    const row = await this.o.repo.byId(modelId);
    if (!row || row.workspaceId !== workspaceId) return;
    const previous = this.latest.get(key);
    if (previous?.row.id === row.id && previous.row.madeCurrentAt.getTime() === row.madeCurrentAt.getTime()) return;
    if (previous && madeLater(previous.row, row)) return;
    // From here a request looks the current version up (and loads it, sharing warm's load) instead of serving the
    // version it remembers; the version replaced is unloaded once the new one serves.
    this.latest.delete(key);
    await this.warm(row);
    if (previous && previous.row.id !== this.latest.get(key)?.row.id) void this.evict(previous.row.id);
  }

  /**
   * A version was unpublished (its experiment or its user is being deleted; the models table's trigger announced
   * it): it is unloaded now, its local copy removed, and it is never loaded again here.
   */
  forget(workspaceId: string, experimentId: number, modelId: string): void {
    this.removed.add(modelId);
    const key = `${workspaceId}:${experimentId}`;
    if (this.latest.get(key)?.row.id === modelId) this.latest.delete(key);
    void this.evict(modelId);
    fs.promises.rm(path.join(this.dir, modelId), { recursive: true, force: true }).catch(() => undefined);
  }

  /**
   * What /predict needs to decide whom this version answers (approval-rule.ts): from the row served (its approval
   * is refreshed with it) and the workspace's setting, remembered beside it. No database work on a hit.
   */
  async approvalState(row: ModelRow): Promise<ApprovalState> {
    const state = { builderId: row.userId, approvedAt: row.approvedAt };
    if (!this.o.requireApproval || !row.workspaceId) return { required: false, ...state };
    const hit = this.approvalRequired.get(row.workspaceId);
    if (hit && Date.now() - hit.at < (this.o.latestTtlMs ?? 2_000)) return { required: hit.on, ...state };
    const on = await this.o.requireApproval(row.workspaceId);
    this.approvalRequired.set(row.workspaceId, { on, at: Date.now() });
    return { required: on, ...state };
  }

  /** A version was approved in this process: the rows remembered for it take the approval at once. */
  approved(row: ModelRow): void {
    const loaded = this.loaded.get(row.id);
    if (loaded) loaded.row = row;
    const key = `${row.workspaceId}:${row.experimentId}`;
    const latest = this.latest.get(key);
    if (latest?.row.id === row.id) latest.row = row;
  }

  /** A workspace's approval setting changed in this process: the next request reads it again. */
  approvalSettingChanged(workspaceId: string): void {
    this.approvalRequired.delete(workspaceId);
  }

  /**
   * Removes every local copy (and unloads every session) whose models row is gone: versions unpublished while this
   * process was down or killed (a kill -9 mid-erasure leaves the copies it had not removed yet), or whose
   * notification was lost. Run at start-up, when an account's erasure ends (builder_account_erased) and when the
   * notifications come back after a gap. It looks into every replica's folder, not only this one's, so a replica
   * that is down or gone cannot keep an erased user's model on disk; the folder of a replica of this host whose
   * process is gone is removed whole. The folders are listed before the rows are read, so a copy being made for a
   * version published meanwhile is kept (its row exists). Returns how many folders were removed.
   */
  async sweepOrphans(): Promise<number> {
    const own = path.basename(this.dir);
    const list = (dir: string) => fs.promises.readdir(dir).catch(() => [] as string[]);
    const top = await list(this.o.cacheDir);
    const copies: { folder: string; id: string; here: boolean }[] = [];
    let removed = 0;
    const remove = async (folder: string) => {
      await fs.promises.rm(folder, { recursive: true, force: true });
      removed++;
    };
    for (const name of top) {
      const folder = path.join(this.o.cacheDir, name);
      if (name !== own && replicaIsDead(name)) await remove(folder);
      else if (REPLICA.test(name)) {
        for (const id of await list(folder)) copies.push({ folder: path.join(folder, id), id, here: name === own });
      } else await remove(folder); // a copy in the layout before replica folders, or a stray file: not Builder's to keep
    }
    const loadedIds = [...this.loaded.keys()];
    const live = await this.o.repo.existingIds([...new Set([...copies.map((c) => c.id).filter((id) => UUID.test(id)), ...loadedIds])]);
    for (const id of loadedIds) {
      const m = this.loaded.get(id);
      if (m && !live.has(id)) this.forget(m.row.workspaceId, m.row.experimentId, id);
    }
    for (const c of copies) {
      if (live.has(c.id) || (c.here && this.loading.has(c.id))) continue;
      // Another replica's partial copy of a version published meanwhile is a UUID folder whose row exists: kept.
      await remove(c.folder);
    }
    if (removed) this.o.logger.info({ removed }, "model cache: removed local copies of unpublished models");
    return removed;
  }

  load(row: ModelRow): Promise<LoadedModel> {
    if (this.removed.has(row.id)) return Promise.reject(new ModelNotFound(`experiment ${row.experimentId}'s model was deleted`));
    const have = this.loaded.get(row.id);
    if (have) {
      // The row just looked up carries the version's approval as it is now (the same version's files never change).
      if (have.row !== row && !(have.row.approvedAt && !row.approvedAt)) have.row = row;
      have.lastUsed = ++this.tick;
      return Promise.resolve(have);
    }
    let p = this.loading.get(row.id);
    if (!p) {
      p = this.loadFromBucket(row).finally(() => this.loading.delete(row.id));
      this.loading.set(row.id, p);
    }
    return p;
  }

  private async loadFromBucket(row: ModelRow): Promise<LoadedModel> {
    const prefix = row.storePath.replace(/\/+$/, "");
    const manifest = checkManifest(row.manifest && Object.keys(row.manifest).length ? row.manifest : await this.readManifest(prefix));
    const dir = path.join(this.dir, row.id);
    const file = path.join(dir, "model.onnx");
    if (!fs.existsSync(file)) {
      // Written aside and renamed, so a crash mid-copy never leaves a truncated model.onnx to open next time.
      const tmp = `${file}.${Date.now()}.partial`;
      await this.o.bucket.downloadTo(`${prefix}/${manifest.model_file || "model.onnx"}`, tmp);
      await fs.promises.rename(tmp, file);
    }
    const bytes = (await fs.promises.stat(file)).size;
    const predictor = await openPredictor(file, manifest, {
      intraOpThreads: this.o.intraOpThreads,
      maxBatch: this.o.maxBatch,
      threads: this.o.threadsPerModel,
      jpegDecoder: this.o.jpegDecoder,
      cuda: this.tryCuda,
    });
    this.o.logger.info(
      {
        model: row.id,
        placement: predictor.placement,
        provider: predictor.provider,
        max_batch: predictor.maxBatch,
        threads: predictor.threads,
        jpeg_decoder: predictor.jpegDecoder,
      },
      "model session opened",
    );
    if (this.removed.has(row.id)) {
      // Unpublished while it was loading: it must not serve.
      await predictor.close();
      await fs.promises.rm(dir, { recursive: true, force: true });
      throw new ModelNotFound(`experiment ${row.experimentId}'s model was deleted`);
    }
    const entry: LoadedModel = { row, manifest, predictor, bytes, lastUsed: ++this.tick };
    this.loaded.set(row.id, entry);
    this.enforceLimit(row.id);
    return entry;
  }

  private async readManifest(prefix: string): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const c of await this.o.bucket.read(`${prefix}/manifest.json`)) chunks.push(c as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  }

  private enforceLimit(keep: string): void {
    let total = [...this.loaded.values()].reduce((s, m) => s + m.bytes, 0);
    const byAge = [...this.loaded.values()].sort((a, b) => a.lastUsed - b.lastUsed);
    for (const m of byAge) {
      if (total <= this.o.maxBytes) break;
      if (m.row.id === keep) continue; // the model just asked for stays even when it alone exceeds the bound
      total -= m.bytes;
      void this.evict(m.row.id);
    }
  }

  /** Resolves once the local copy is removed (close() waits for it; the request path does not). */
  private evict(id: string): Promise<void> {
    const m = this.loaded.get(id);
    if (!m) return Promise.resolve();
    this.loaded.delete(id);
    void m.predictor.close();
    return fs.promises.rm(path.join(this.dir, id), { recursive: true, force: true }).catch(() => undefined);
  }

  stats() {
    return { models: this.loaded.size, bytes: [...this.loaded.values()].reduce((s, m) => s + m.bytes, 0), ids: [...this.loaded.keys()] };
  }

  async close(): Promise<void> {
    await Promise.all([...this.loaded.keys()].map((id) => this.evict(id)));
    await fs.promises.rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
