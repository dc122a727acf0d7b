import fs from "node:fs";
import { isIP } from "node:net";
import type { Config } from "../config.js";
import { ApiError, errors, msg, detail, textOfError } from "../errors.js";
import type { JobRunner } from "../jobs/runner.js";
import type { Bucket } from "../storage/bucket.js";
import { resolveZipPath } from "../datasets/zip-path.js";
import { notifyTerminal } from "../jobs/notify.js";
import { OutboundGuard } from "../net/outbound-guard.js";
import type { Logger } from "../logger.js";
import type { ExperimentRepository, ExperimentRow, ModelRow } from "./repository.js";
import { requestHash, splitRequest, type ExperimentLabels, type experimentRequestSchema } from "./request.js";
import { DELETING, isTerminal } from "./state.js";
import { ExperimentDeletion } from "./deletion.js";
import type { EventEmitter } from "node:events";
import { logFileOf, logObjectOf } from "./log.js";
import { studyOf } from "./study.js";
import { experimentEventStream, type StreamItem } from "./event-stream.js";
import { ExperimentEventHub } from "./event-hub.js";
import { StreamSlots } from "./stream-slots.js";
import type { Language } from "../i18n/index.js";
import { experimentSummary, experimentView } from "./view.js";
import { isInternalSplit } from "./warnings.js";
import { buildModelCard, type ModelCard } from "./model-card.js";
import type { Manifest } from "../contract/types.js";
import type { ExperimentStatus } from "./state.js";
import type { z } from "zod";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";

export type { ModelRow } from "./repository.js";

function tooManyExperiments(cap: number): ApiError {
  return new ApiError(
    429,
    "too_many_experiments",
    msg("experiment.too_many_active", { max: cap }),
    { limit: cap },
    { "retry-after": "60" },
  );
}

export class ExperimentService {
  private guard?: OutboundGuard;
  /** One database poll per experiment per tick, shared by all its open streams in this process. */
  readonly eventHub: ExperimentEventHub;
  private readonly streamSlots: StreamSlots;
  /** DELETE /v1/experiments/{id} and account erasure: the crash-safe steps (deletion.ts). */
  readonly deletion: ExperimentDeletion;
  constructor(
    private readonly deps: {
      repo: ExperimentRepository;
      runner: () => JobRunner | undefined;
      config: Config;
      logger: Logger;
      bucket: Bucket;
      events?: EventEmitter;
    },
  ) {
    this.eventHub = new ExperimentEventHub(deps.repo, { pollMs: 500 });
    this.streamSlots = new StreamSlots(deps.config.EVENT_STREAMS_PER_USER);
    this.deletion = new ExperimentDeletion(deps);
  }

  get repo() {
    return this.deps.repo;
  }

  /**
   * Creates and enqueues, or returns the existing experiment when the same body is posted again.
   * user_token is dropped here, before anything is stored or logged.
   */
  async create(scope: Scope, body: z.output<typeof experimentRequestSchema>): Promise<{ created: boolean; row: ExperimentRow }> {
    const { userId, workspace } = scope;
    // user_id is who builds (the seed's field, the caller); the workspace is the request's.
    if (body.user_id !== userId) throw errors.forbidden(msg("auth.user_mismatch"), "user_mismatch");
    assertAllowed(workspace, "experiment.build");
    const { request, labels } = splitRequest(body);
    if (request.callback_url && !this.deps.config.CALLBACK_SECRET) {
      throw errors.invalidRequest(msg("request.invalid_fields", { count: 1, fields: "callback_url" }), [
        detail("callback_url", msg("experiment.no_callback_secret")),
      ]);
    }
    if (request.callback_url) {
      // The form is checked now (scheme, credentials, metadata/localhost names) so a bad URL is a 400, not a
      // callback that silently never arrives; addresses are checked again at send time, after DNS.
      try {
        const guard = (this.guard ??= new OutboundGuard({ allowHosts: this.deps.config.FETCH_ALLOW_HOSTS }));
        const url = guard.checkUrl(request.callback_url);
        // An address literal needs no DNS: check its range now too (private/metadata unless allowed).
        if (isIP(url.hostname.replace(/^\[|\]$/g, ""))) await guard.pinnedAddress(url.hostname);
      } catch (err) {
        throw errors.invalidRequest(msg("request.invalid_fields", { count: 1, fields: "callback_url" }), [
          detail("callback_url", textOfError(err) ?? msg("net.invalid_url")),
        ]);
      }
    }
    // Another workspace's folder or experiment answers exactly as a missing one (404): its existence is not revealed.
    // The job checks the zip's prefix again before fetching (a row may come from an older server or a direct insert).
    resolveZipPath(request.zip_gcloud, workspace.storagePrefix);
    if (request.source_experiment_id !== undefined && !(await this.deps.repo.byNumber(workspace.id, request.source_experiment_id))) {
      throw new ApiError(404, "not_found", msg("experiment.no_source", { id: request.source_experiment_id }), [
        detail("source_experiment_id", msg("experiment.you_have_no", { id: request.source_experiment_id })),
      ]);
    }
    const hash = requestHash(request);
    // A re-post of an existing experiment is answered below whatever the cap; only new ones count against it.
    const before = await this.deps.repo.byNumber(workspace.id, request.experiment_id);
    const values = {
      userId,
      workspaceId: workspace.id,
      experimentId: request.experiment_id,
      request,
      ...labels,
      study: studyOf(request, this.deps.config),
      requestHash: hash,
    };
    const inserted = before ? null : await this.deps.repo.insertWithinCap(values, this.deps.config.MAX_ACTIVE_EXPERIMENTS_PER_USER);
    if (inserted === "over_cap") throw tooManyExperiments(this.deps.config.MAX_ACTIVE_EXPERIMENTS_PER_USER);
    if (inserted) {
      // The row is the durable record; a queue that does not answer (Redis down) must not fail the request:
      // the runner's sweep enqueues unfinished experiments again every JOB_LEASE_S.
      const enqueued = this.deps.runner()?.enqueue(inserted.id);
      if (enqueued) {
        await Promise.race([
          enqueued,
          new Promise((_, reject) => setTimeout(() => reject(new Error("enqueue timed out")), 5000).unref()),
        ]).catch((err) => this.deps.logger.warn({ err, experiment: inserted.id }, "could not enqueue now; the sweep will retry"));
      }
      return { created: true, row: inserted };
    }
    const existing = await this.deps.repo.byNumber(workspace.id, request.experiment_id);
    if (!existing) throw errors.internal();
    if (existing.requestHash !== hash) {
      throw new ApiError(409, "experiment_id_in_use", msg("experiment.id_in_use", { id: request.experiment_id }));
    }
    return { created: false, row: existing };
  }

  /** The version of the workspace's experiment served now (the one made current last), or undefined. */
  latestModel(scope: Scope, experimentId: number): Promise<ModelRow | undefined> {
    return this.deps.repo.currentModel(scope.workspace.id, experimentId);
  }

  /** The API view of one experiment, with its published model when this run of it made one. */
  async view(row: ExperimentRow, lang: Language = "en") {
    const latest = await this.deps.repo.currentModel(row.workspaceId, row.experimentId);
    const model = latest && latest.experimentUuid === row.id ? latest : undefined;
    // A Builder study's model beside the Retrospective studies run on it (their figures are the better guide to new patients).
    const retrospectives =
      model && isInternalSplit(row.request) ? await this.deps.repo.readyRetrospectivesOf(row.workspaceId, row.experimentId) : [];
    return { ...experimentView(row, model, retrospectives, lang), built_by: await this.deps.repo.builderEmail(row.userId) };
  }

  /**
   * The model card of a ready experiment (model-card.ts), with its Retrospective studies beside it. 404 when the
   * experiment is another user's, or has no model of its own yet (the same rule as its report).
   */
  async modelCard(scope: Scope, experimentId: number): Promise<ModelCard> {
    const row = await this.get(scope, experimentId);
    const model = await this.deps.repo.currentModel(row.workspaceId, experimentId);
    if (!model || model.experimentUuid !== row.id) {
      throw new ApiError(404, "not_found", msg("experiment.no_model_card_yet", { id: experimentId, status: row.status }));
    }
    const retrospectives = [];
    for (const r of await this.deps.repo.readyRetrospectivesOf(row.workspaceId, experimentId)) {
      const m = await this.deps.repo.currentModel(row.workspaceId, r.experimentId);
      retrospectives.push({ row: r, manifest: m && m.experimentUuid === r.id ? (m.manifest as Manifest) : undefined });
    }
    return buildModelCard({ row, model, retrospectives, generatedAt: new Date(), approval: await this.deps.repo.approvalOf(model) });
  }

  /** The caller's experiments, newest first, one page; `q` narrows them to those whose name, description, zip or label columns hold it. */
  async list(scope: Scope, page: { status?: ExperimentStatus[]; q?: string; limit: number; offset: number }, lang: Language = "en") {
    assertAllowed(scope.workspace, "experiment.read");
    const { rows, total } = await this.deps.repo.list(scope.workspace.id, page);
    return {
      data: rows.map((r) => ({ ...experimentSummary(r, lang), built_by: r.builtBy })),
      total,
      limit: page.limit,
      offset: page.offset,
      has_more: page.offset + rows.length < total,
    };
  }

  /**
   * Takes one of the user's open-stream slots (429 too_many_streams past EVENT_STREAMS_PER_USER); the caller
   * gives it back when its stream ends, however it ends.
   */
  openEventStream(userId: string): () => void {
    return this.streamSlots.acquire(userId);
  }

  /** Its events after `afterSeq` (Last-Event-ID) until the terminal state or EVENT_STREAM_MAX_S; see experimentEventStream. */
  events(row: ExperimentRow, afterSeq: number, signal: AbortSignal): AsyncGenerator<StreamItem> {
    return experimentEventStream(this.eventHub, this.deps.repo, row, afterSeq, {
      signal,
      maxLifetimeMs: this.deps.config.EVENT_STREAM_MAX_S * 1000,
    });
  }

  /** Another workspace's experiment is 404, as if it did not exist. */
  async get(scope: Scope, experimentId: number): Promise<ExperimentRow> {
    assertAllowed(scope.workspace, "experiment.read");
    const row = await this.deps.repo.byNumber(scope.workspace.id, experimentId);
    if (!row) throw errors.notFound(msg("experiment.not_found", { id: experimentId }));
    return row;
  }

  /** Sets or clears (null) the owner's name and description; absent fields are left as they are. */
  async editLabels(scope: Scope, experimentId: number, labels: ExperimentLabels): Promise<ExperimentRow> {
    const row = await this.get(scope, experimentId);
    // A name or description is the builders' label; the intended use is what a reviewer writes (the permissions table).
    if (labels.name !== undefined || labels.description !== undefined) assertAllowed(scope.workspace, "experiment.build");
    if (labels.intended_use !== undefined) assertAllowed(scope.workspace, "intended_use.write");
    return (await this.deps.repo.setLabels(row.id, labels)) ?? row;
  }

  /**
   * Deletes the experiment: marked `deleting` and unpublished before this returns (no replica serves its model
   * from here on: /predict answers 404), its job cancelled; the files go in the background (deletion.ts).
   */
  async delete(scope: Scope, experimentId: number): Promise<ExperimentRow> {
    const row = await this.get(scope, experimentId);
    assertAllowed(scope.workspace, "experiment.delete");
    const marked = await this.beginDeletion(row.id);
    if (!marked) throw errors.notFound(msg("experiment.not_found", { id: experimentId }));
    void this.deletion.finish(row.id);
    return marked;
  }

  /** Marks `deleting`, unpublishes (unloaded here now, elsewhere by notification) and stops a job running here. */
  async beginDeletion(uuid: string): Promise<ExperimentRow | undefined> {
    const marked = await this.deps.repo.markDeleting(uuid);
    if (!marked) return undefined;
    for (const model of await this.deps.repo.deleteModels(uuid)) this.deps.events?.emit("model:removed", model);
    this.deps.runner()?.cancelLocal(uuid);
    return marked;
  }

  async cancel(scope: Scope, experimentId: number): Promise<ExperimentRow> {
    const row = await this.get(scope, experimentId);
    assertAllowed(scope.workspace, "experiment.build");
    if (row.status === DELETING) throw new ApiError(409, "experiment_deleting", msg("experiment.being_deleted", { id: experimentId }));
    if (isTerminal(row.status))
      throw new ApiError(409, "experiment_finished", msg("experiment.already_finished", { id: experimentId, status: row.status }));
    // Still queued: cancelled at once (the runner's lease acquisition then finds a terminal row and skips it).
    const direct = await this.deps.repo.transition(row.id, "cancelled", { fromStatus: ["queued"], set: { cancelRequested: true } });
    if (direct) {
      notifyTerminal(this.deps, direct);
      return direct;
    }
    await this.deps.repo.requestCancel(row.id);
    this.deps.runner()?.cancelLocal(row.id);
    return (await this.deps.repo.byId(row.id))!;
  }

  /** The local log (this host ran or runs the job), else the copy a worker on another host left in the bucket. */
  async readLog(row: ExperimentRow, tailBytes: number, storagePrefix: string): Promise<string> {
    const file = logFileOf(this.deps.config, row.id);
    const handle = await fs.promises.open(file, "r").catch(() => null);
    if (handle) {
      try {
        const size = (await handle.stat()).size;
        const start = Math.max(0, size - tailBytes);
        const buf = Buffer.alloc(size - start);
        await handle.read(buf, 0, buf.length, start);
        return buf.toString("utf8");
      } finally {
        await handle.close();
      }
    }
    const object = logObjectOf(storagePrefix, row);
    if (!(await this.deps.bucket.stat(object))) return "";
    const chunks: Buffer[] = [];
    for await (const chunk of await this.deps.bucket.read(object)) chunks.push(chunk as Buffer);
    const all = Buffer.concat(chunks);
    return all.subarray(Math.max(0, all.length - tailBytes)).toString("utf8");
  }
}
