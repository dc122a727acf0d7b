import path from "node:path";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import type { EventEmitter } from "node:events";
import type { Logger } from "../logger.js";
import { OutboundGuard } from "../net/outbound-guard.js";
import { fetchImageBytes } from "../net/image-fetch.js";
import { uriScheme, type Bucket } from "../storage/bucket.js";
import { ApiError, errors, msg, detail } from "../errors.js";
import { ModelNotPublished, PredictorClosed } from "./errors.js";
import type { JsonBytes } from "./json-encode.js";
import { ModelCache, ModelNotFound, type LoadedModel } from "./model-cache.js";
import { ModelCatalog } from "./model-catalog.js";
import { ModelRepository, type ModelRow } from "./model-repository.js";
import { predictImage, predictTabular } from "./predict.js";
import { observationOf, type PredictionObserver } from "./observe.js";
import { answersCaller } from "../workspaces/approval-rule.js";
import { WorkspaceRepository } from "../workspaces/workspace.repository.js";

/** Serving as the rest of the app sees it: models, the outbound guard, and predict. */
export interface Serving {
  cache: ModelCache;
  repo: ModelRepository;
  /** The model routes' views and the model file download. */
  catalog: ModelCatalog;
  guard: OutboundGuard;
  /**
   * The 201 body: an object (tabular) or JSON bytes made on a worker thread (images). An experiment of the user's
   * without a published model throws ModelNotPublished with its state; one the user does not have, a 404.
   */
  /**
   * opts.noMaps: no Grad-CAM maps (batch scoring writes scores only; the maps are most of an image answer's cost).
   * opts.requestId / keyId: what the monitoring record is kept under (default: the request's x-request-id).
   */
  predict(scope: ServingScope, experimentId: number, message: unknown, opts?: PredictOptions): Promise<Record<string, unknown> | JsonBytes>;
  model(scope: ServingScope, experimentId: number): Promise<LoadedModel>;
  close(): Promise<void>;
}

/**
 * Whom a prediction is for: the workspace whose model it is (its number names the model; a bucket image must lie
 * under its prefix) and the user (whose PACS answers a DICOMweb link). An AuthInfo is one.
 */
export interface ServingScope {
  userId: string;
  workspace: { id: string; storagePrefix: string };
}

/** The channel migration 0006's trigger announces removed model versions on: "<workspace_id>:<experiment_id>:<model id>" (0020). */
export const MODEL_REMOVED_CHANNEL = "builder_model_removed";
/** The channel migration 0010's trigger announces a version made current on: "<workspace_id>:<experiment_id>:<model id>" (0020). */
export const MODEL_CURRENT_CHANNEL = "builder_model_current";
/** The channel an account's erasure announces its end on (payload: the user id; AccountErasure): every replica sweeps its model cache. */
export const ACCOUNT_ERASED_CHANNEL = "builder_account_erased";

type Listen = (channel: string, onNotify: (payload: string) => void, onState: (listening: boolean) => void) => Promise<() => Promise<void>>;

export interface PredictOptions {
  noMaps?: boolean;
  /** Told the image as fetched, for whoever answers back with it (src/pacs/send-back.ts). */
  onSource?: (bytes: Buffer) => void;
  requestId?: string;
  keyId?: string | null;
  /**
   * The user whose API key asks (issue 50 item 4): where the version's workspace requires approval, an unapproved
   * version answers only its builder's keys. Unset (a dashboard session, a batch): not checked.
   */
  keyMadeBy?: string;
}

export async function createServing(deps: {
  /** Told of every prediction served (monitoring's recorder); must not throw nor wait. */
  observe?: PredictionObserver;
  config: Config;
  db: Db;
  bucket: Bucket;
  events: EventEmitter;
  logger: Logger;
  listen?: Listen;
  /** The Authorization header for a DICOMweb link under the user's PACS (src/pacs), or undefined. */
  authorizationFor?: (userId: string, url: string) => Promise<string | undefined>;
}): Promise<Serving> {
  const { config, bucket, logger } = deps;
  const repo = new ModelRepository(deps.db);
  const cache = new ModelCache({
    bucket,
    repo,
    cacheDir: path.join(config.dataDir, "model-cache"),
    maxBytes: config.MODEL_CACHE_MAX_MB * 1024 * 1024,
    intraOpThreads: config.ORT_INTRA_OP_THREADS,
    maxBatch: config.SERVING_MAX_BATCH,
    threadsPerModel: config.SERVING_THREADS_PER_MODEL,
    jpegDecoder: config.JPEG_DECODER,
    logger,
    requireApproval: (workspaceId) => new WorkspaceRepository(deps.db).requireApproval(workspaceId),
  });
  const guard = new OutboundGuard({
    allowHosts: config.FETCH_ALLOW_HOSTS,
    maxBytes: config.FETCH_MAX_BYTES,
    timeoutMs: config.FETCH_TIMEOUT_MS,
    maxRedirects: 3,
  });
  const onPublished = (row: ModelRow) => {
    cache.warm(row).catch((err) => logger.error({ err, experiment_id: row.experimentId, version: row.version }, "model warm-up failed"));
  };
  deps.events.on("model:published", onPublished);
  // An unpublished version is unloaded here at once ("model:removed", from this process's own deletion) and on
  // every other replica through the database's notification (as API-key revocations travel, migration 0001).
  const onRemoved = (row: Pick<ModelRow, "workspaceId" | "experimentId" | "id">) => cache.forget(row.workspaceId, row.experimentId, row.id);
  deps.events.on("model:removed", onRemoved);
  // The local copies whose versions are gone (removed while this replica was down or missed the notification) are
  // removed: an erased account's models must not stay on any replica's disk.
  const sweep = (why: string) =>
    cache.sweepOrphans().catch((err) => logger.warn({ err, why }, "model cache sweep failed; it runs again at the next erasure or start"));
  let removalsLost = false;
  const stopListening = deps.listen
    ? await deps.listen(
        MODEL_REMOVED_CHANNEL,
        (payload) => {
          const [workspaceId, experimentId, id] = payload.split(":");
          if (workspaceId && id && /^\d+$/.test(experimentId ?? "")) cache.forget(workspaceId, Number(experimentId), id);
        },
        (listening) => {
          if (!listening) {
            removalsLost = true;
            logger.warn("model removal notifications lost; a deleted model may serve on this replica until its row lookup expires (2 s)");
          } else if (removalsLost) {
            removalsLost = false;
            void sweep("notifications back");
          }
        },
      )
    : async () => {};
  const stopListeningErased = deps.listen
    ? await deps.listen(
        ACCOUNT_ERASED_CHANNEL,
        () => void sweep("account erased"),
        () => undefined,
      )
    : async () => {};
  await sweep("start");

  // A version made current (published, an operating point saved, a rollback) on any replica: switch at once.
  const stopListeningCurrent = deps.listen
    ? await deps.listen(
        MODEL_CURRENT_CHANNEL,
        (payload) => {
          const [workspaceId, experimentId, id] = payload.split(":");
          if (workspaceId && id && /^\d+$/.test(experimentId ?? ""))
            cache
              .madeCurrent(workspaceId, Number(experimentId), id)
              .catch((err) => logger.error({ err, experiment_id: Number(experimentId) }, "switching to the current model version failed"));
        },
        (listening) => {
          if (!listening)
            logger.warn("model version notifications lost; a new current version reaches this replica when its row lookup expires (2 s)");
        },
      )
    : async () => {};

  const model = async (scope: ServingScope, experimentId: number) => {
    try {
      return await cache.get(scope.workspace.id, experimentId);
    } catch (err) {
      if (!(err instanceof ModelNotFound)) throw err;
      // The experiment's state makes the answer: "wait" or "it failed" (409 at the edge) apart from "wrong id" (404).
      const status = await repo.experimentStatus(scope.workspace.id, experimentId);
      if (status === null) throw errors.notFound(msg("experiment.not_found", { id: experimentId }));
      throw new ModelNotPublished(experimentId, status);
    }
  };

  const once = async (scope: ServingScope, experimentId: number, message: unknown, opts: PredictOptions) => {
    const start = performance.now();
    const m = await model(scope, experimentId);
    if (opts.keyMadeBy !== undefined && !answersCaller(await cache.approvalState(m.row), opts.keyMadeBy)) {
      throw new ApiError(403, "model_version_not_approved", msg("workspace.not_approved", { id: experimentId, version: m.row.version }));
    }
    const seen: { row?: Float32Array } | undefined = deps.observe ? {} : undefined;
    const body = await answer(m, scope, message, opts, seen);
    if (deps.observe) {
      try {
        deps.observe(m, observationOf(m, body, performance.now() - start, opts, seen?.row));
      } catch (err) {
        logger.warn({ err }, "a prediction could not be recorded for monitoring");
      }
    }
    return body;
  };

  const answer = async (m: LoadedModel, scope: ServingScope, message: unknown, opts: PredictOptions, seen?: { row?: Float32Array }) => {
    if (m.manifest.kind === "tabular") return predictTabular(m, message, seen);
    if (typeof message !== "string") {
      throw new ApiError(400, "invalid_request", msg("net.message_not_uri_schemes", { scheme: uriScheme(bucket) }), [
        detail("message", msg("serving.message_not_string")),
      ]);
    }
    const authorizationFor = deps.authorizationFor && ((url: string) => deps.authorizationFor!(scope.userId, url));
    const { bytes } = await fetchImageBytes(message, {
      storagePrefix: scope.workspace.storagePrefix,
      bucket,
      guard,
      maxBytes: config.FETCH_MAX_BYTES,
      authorizationFor,
    });
    // The image as fetched, for whoever answers back with it (src/pacs/send-back.ts); the model may take the bytes' memory.
    opts.onSource?.(Buffer.from(bytes));
    return predictImage(m, bytes, {
      maxPixels: config.FETCH_MAX_PIXELS,
      gradcamMaxSide: config.GRADCAM_MAX_SIDE,
      noMaps: opts.noMaps ?? false,
    });
  };

  return {
    cache,
    repo,
    catalog: new ModelCatalog({ repo, bucket }),
    guard,
    model,
    async predict(scope, experimentId, message, opts = {}) {
      try {
        return await once(scope, experimentId, message, opts);
      } catch (err) {
        // A new version was swapped in between lookup and run: the next lookup finds it.
        if (err instanceof PredictorClosed) return once(scope, experimentId, message, opts);
        throw err;
      }
    },
    async close() {
      deps.events.off("model:published", onPublished);
      deps.events.off("model:removed", onRemoved);
      await stopListening();
      await stopListeningErased();
      await stopListeningCurrent();
      await cache.close();
      await guard.close();
    },
  };
}
