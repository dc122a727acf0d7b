import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Config } from "../config.js";
import { assertJobSpec, assertManifest, ContractError } from "../contract/validate.js";
import type { JobSpec, Manifest, PipelineEvent } from "../contract/types.js";
import type { ExperimentRepository, ExperimentRow } from "../experiments/repository.js";
import { experimentRequestSchema, withoutToken } from "../experiments/request.js";
import { parseStudy, studyOf, type Study } from "../experiments/study.js";
import { overallFraction, isTerminal, STAGE_START, type ExperimentStatus, type Progress } from "../experiments/state.js";
import type { Logger } from "../logger.js";
import type { Bucket } from "../storage/bucket.js";
import { loadPrepareDataset, type PrepareDataset } from "./dataset-stage.js";
import { defaultPython, runPipeline } from "./pipeline-process.js";
import { publishModel } from "./publish.js";
import { notifyTerminal } from "./notify.js";
import type { JobDeps, JobResult, StopReason } from "./deps.js";
import { logFileOf, logObjectOf } from "../experiments/log.js";

const SEED = 42;
/**
 * Added to budget × JOB_TIMEOUT_FACTOR before the hard kill: interpreter start-up, data loading, the bootstrap
 * intervals and ONNX export are outside the pipeline's training budget, and a busy host stretches all of them
 * (a 4 s tabular budget took 30 s of wall time on a loaded 2-core machine).
 */
const TIMEOUT_ALLOWANCE_S = 120;
const PROGRESS_WRITE_MS = 500;
/**
 * Every second (more often for leases under 4 s): one small UPDATE per running job. The beat also brings a cancel
 * posted to another process (BullMQ workers), so it must be well inside the 5 s a cancel is allowed.
 */
const HEARTBEAT_MS = (leaseS: number) => Math.max(200, Math.min(1000, (leaseS * 1000) / 4));

export const workDirOf = (config: Config, uuid: string) => path.join(config.dataDir, "work", uuid);

type TransitionSet = NonNullable<NonNullable<Parameters<ExperimentRepository["transition"]>[2]>["set"]>;

class JobStop extends Error {
  constructor(public readonly why: StopReason | "refused") {
    super(why);
  }
}

/**
 * Runs one experiment from its lease to a terminal state (or until stopped). The same code runs in the
 * in-process runner and in BullMQ workers. Every write is conditional on holding the lease, so if another
 * runner took over (this one was presumed dead), this one's writes are refused and it stops.
 */
export async function runExperimentJob(deps: JobDeps, uuid: string, stop: AbortSignal): Promise<JobResult> {
  const { config, repo } = deps;
  const leaseS = config.JOB_LEASE_S;
  const row = await waitForLease(deps, uuid, stop);
  if (!row) return "skipped";
  const owner = deps.runnerId;
  const log = deps.logger.child({ experiment: uuid, experiment_id: row.experimentId, attempt: row.attempts });
  const study = storedStudy(config, row);
  const work = workDirOf(config, uuid);
  const logFile = logFileOf(config, uuid);
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const jobLog = (line: string) => fs.appendFileSync(logFile, `[builder ${new Date().toISOString()}] ${line}\n`);

  // Heartbeat: renews the lease and carries cancellation from the API (which may be another process).
  const local = new AbortController();
  const onOuterStop = () => local.abort(stop.reason ?? "shutdown");
  if (stop.aborted) onOuterStop();
  else stop.addEventListener("abort", onOuterStop, { once: true });
  const beat = setInterval(async () => {
    try {
      const r = await repo.renewLease(uuid, owner, leaseS);
      if (!r) local.abort("lease_lost");
      else if (r.cancelRequested) local.abort("cancel");
    } catch (err) {
      log.warn({ err }, "lease heartbeat failed");
    }
  }, HEARTBEAT_MS(leaseS));
  const signal = local.signal;

  let status: ExperimentStatus = row.status as ExperimentStatus;
  const move = async (to: ExperimentStatus, set: TransitionSet = {}) => {
    const updated = await repo.transition(uuid, to, { owner, set, attempt: row.attempts > 1 ? row.attempts : undefined, progress: { fraction: STAGE_START[to], stage: to, updated_at: new Date().toISOString() } });
    if (!updated) throw new JobStop("refused");
    status = to;
    jobLog(`status ${to}${set.failureReason ? `: ${set.failureReason}` : ""}`);
    if (isTerminal(to)) notifyTerminal(deps, updated);
    return updated;
  };
  const checkStop = () => {
    if (signal.aborted) throw new JobStop(signal.reason as StopReason);
  };

  try {
    if (row.cancelRequested) return (await move("cancelled"), "finished");
    if (row.attempts > config.JOB_MAX_ATTEMPTS) {
      await move("failed", { failureReason: `the job was interrupted ${row.attempts - 1} times (its runner stopped or crashed) and was given up; post it again with a new experiment_id` });
      return "finished";
    }
    fs.rmSync(work, { recursive: true, force: true }); // a re-run starts clean
    fs.mkdirSync(work, { recursive: true });
    jobLog(`attempt ${row.attempts} on runner ${owner}`);

    // fetching: the zip, and for Retrospective the published model under test.
    await move("fetching");
    // The datasets stage streams the zip from the bucket itself; here we only make sure it is there.
    const objectPath = study.zip_path;
    if (!(await deps.bucket.stat(objectPath))) {
      await move("failed", { failureReason: `no file at zip_gcloud ${objectPath}: upload it first (PUT /v1/files/${objectPath})` });
      return "finished";
    }
    let source: { dir: string; manifest: Manifest } | undefined;
    if (study.command === "evaluate") {
      const fetched = await fetchSourceModel(deps, row, study, path.join(work, "source_model"));
      if (typeof fetched === "string") return (await move("failed", { failureReason: fetched }), "finished");
      source = fetched;
    }
    checkStop();

    // validating: the datasets stage checks the zip and makes the patient-grouped split.
    await move("validating");
    const prepare = deps.prepareDataset ?? (await loadPrepareDataset());
    const prepared = await prepare(
      { bucket: deps.bucket, config },
      { zipPath: objectPath, workDir: path.join(work, "dataset"), task: study.dataset, seed: SEED, split: source ? "all_test" : "train_val_test", signal },
    );
    checkStop();
    if (!prepared.report.valid) {
      await move("invalid_dataset", { datasetReport: prepared.report, failureReason: "the dataset did not pass its checks; see dataset_report.errors" });
      return "finished";
    }
    await repo.update(uuid, owner, { datasetReport: prepared.report, split: prepared.split });

    const outDir = path.join(work, "out");
    fs.mkdirSync(outDir, { recursive: true });
    const spec = buildSpec(config, row, study, prepared, outDir, source?.dir);
    try {
      assertJobSpec(spec);
    } catch (err) {
      await move("failed", { failureReason: `internal error: Builder made a job spec the contract refuses (${(err as ContractError).message})` });
      return "finished";
    }
    const specPath = path.join(work, "spec.json");
    fs.writeFileSync(specPath, JSON.stringify(spec, null, 2));

    // training (evaluating directly for Retrospective): the Python process.
    await move(source ? "evaluating" : "training");
    let lastWrite = 0;
    // Event writes are chained (in order) and awaited before the next transition, so a late progress write
    // never lands on top of a later state.
    let writes: Promise<unknown> = Promise.resolve();
    const onEvent = (ev: PipelineEvent) => {
      if (ev.type === "log") jobLog(`pipeline ${ev.level}: ${ev.message}`);
      if (ev.type === "progress") {
        if ((ev.stage === "evaluating" || ev.stage === "exporting") && status === "training") {
          status = "evaluating"; // set before the write so later events do not race a second transition
          writes = writes.then(() => move("evaluating")).catch(() => local.abort("lease_lost"));
        }
        const now = Date.now();
        if (now - lastWrite < PROGRESS_WRITE_MS && ev.progress < 1) return;
        lastWrite = now;
        const progress: Progress = {
          fraction: overallFraction(ev.progress),
          stage: ev.stage,
          message: ev.message,
          epoch: ev.epoch,
          epochs: ev.epochs,
          trial: ev.trial,
          trials: ev.trials,
          best_metric: ev.best_metric,
          eta_s: ev.eta_s,
          updated_at: new Date().toISOString(),
        };
        writes = writes.then(() => repo.setProgress(uuid, owner, progress)).then(() => repo.addEvent(uuid, "progress", progress)).catch((err) => log.warn({ err }, "progress write failed"));
      } else if (ev.type === "metric") {
        writes = writes.then(() => repo.addEvent(uuid, "metric", ev)).catch(() => undefined);
      }
    };
    const budget = spec.budget.time_budget_s;
    const outcome = await runPipeline({
      python: defaultPython(config.PYTHON_BIN),
      command: spec.command,
      specPath,
      outDir,
      logFile,
      timeoutMs: (budget * config.JOB_TIMEOUT_FACTOR + TIMEOUT_ALLOWANCE_S) * 1000,
      signal,
      onEvent,
    });
    await writes;
    if (outcome.kind === "cancelled") checkStop();
    if (outcome.kind === "data_error") {
      const report = { ...prepared.report, valid: false, errors: [...prepared.report.errors, { code: "pipeline_data_error", severity: "error", message: outcome.message }] };
      await move("invalid_dataset", { datasetReport: report, failureReason: outcome.message });
      return "finished";
    }
    if (outcome.kind !== "ok") {
      const reason = "message" in outcome ? outcome.message : "the pipeline stopped";
      const prefix = outcome.kind === "contract_error" || outcome.kind === "spec_error" ? "internal error (pipeline contract): " : "";
      await move("failed", { failureReason: `${prefix}${reason}` });
      return "finished";
    }
    if (status === "training") await move("evaluating");

    // evaluating: the manifest must satisfy its schema before anything is published.
    let manifest: Manifest;
    try {
      manifest = assertManifest(JSON.parse(fs.readFileSync(path.resolve(outDir, outcome.manifest), "utf8")));
      if (!fs.existsSync(path.join(outDir, manifest.model_file))) throw new Error(`the manifest names ${manifest.model_file}, which the pipeline did not write`);
    } catch (err) {
      await move("failed", { failureReason: `internal error (pipeline contract): the result manifest is not valid: ${(err as Error).message}` });
      return "finished";
    }
    checkStop();

    // publishing: copy, then the models row, then ready.
    await move("publishing");
    const model = await publishModel(deps, row, manifest, outDir, owner);
    await move("ready", { metrics: manifest.metrics.test, originalMetrics: source ? source.manifest.metrics.test : null, failureReason: null });
    deps.events.emit("model:published", model);
    return "finished";
  } catch (err) {
    if (err instanceof JobStop || signal.aborted) {
      const why = err instanceof JobStop ? err.why : (signal.reason as StopReason);
      if (why === "cancel") {
        await repo.transition(uuid, "cancelled", { owner }).then((r) => r && (jobLog("status cancelled"), notifyTerminal(deps, r)));
        return "finished";
      }
      jobLog(`stopped (${why}); another runner picks it up`);
      return "stopped";
    }
    log.error({ err }, "experiment job failed");
    await move("failed", { failureReason: `internal error while ${status}: ${(err as Error).message}` }).catch(() => undefined);
    return "finished";
  } finally {
    clearInterval(beat);
    stop.removeEventListener("abort", onOuterStop);
    const after = await repo.byId(uuid).catch(() => undefined);
    if (after && isTerminal(after.status)) {
      fs.rmSync(work, { recursive: true, force: true });
      // A copy of the log in the bucket, so GET .../logs works when a worker on another host ran the job.
      await deps.bucket.uploadFile(logFile, logObjectOf(row)).catch((err) => log.warn({ err }, "could not copy the job log to the bucket"));
    } else await repo.releaseLease(uuid, owner).catch(() => undefined);
  }
}

/**
 * Takes the experiment's lease, waiting while another live runner holds it (the queue may hand a job out twice
 * after a stall; the lease makes sure only one runs it). Null when it reached a terminal state meanwhile.
 */
async function waitForLease(deps: JobDeps, uuid: string, stop: AbortSignal): Promise<ExperimentRow | null> {
  for (;;) {
    const row = await deps.repo.acquireLease(uuid, deps.runnerId, deps.config.JOB_LEASE_S);
    if (row) return row;
    const current = await deps.repo.byId(uuid);
    if (!current || isTerminal(current.status) || stop.aborted) return null;
    await new Promise((r) => setTimeout(r, Math.min(1000, deps.config.JOB_LEASE_S * 250)));
  }
}

async function fetchSourceModel(deps: JobDeps, row: ExperimentRow, study: Study, dir: string): Promise<{ dir: string; manifest: Manifest } | string> {
  const sourceId = study.source_experiment_id!;
  const model = await deps.repo.latestModel(row.userId, sourceId);
  if (!model) return `experiment ${sourceId} has no published model yet; wait until it is ready`;
  if (model.kind !== study.kind) return `experiment ${sourceId} built a ${model.kind} model, but this request is for ${study.kind}`;
  fs.mkdirSync(dir, { recursive: true });
  for (const object of await deps.bucket.list(`${model.storePath}/`)) {
    const rel = object.slice(model.storePath.length + 1);
    const target = path.join(dir, rel);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    await deps.bucket.downloadTo(object, target);
  }
  return { dir, manifest: model.manifest as Manifest };
}

/** The job spec, from the study and the prepared dataset only. */
export function buildSpec(config: Config, row: Pick<ExperimentRow, "id">, study: Study, prepared: Awaited<ReturnType<PrepareDataset>>, outDir: string, sourceDir?: string): JobSpec {
  return {
    schema_version: 1,
    job_id: row.id,
    command: study.command,
    kind: study.kind,
    problem: prepared.problem!,
    data: {
      root: prepared.root!,
      table: prepared.table!,
      id_col: prepared.idCol!,
      images_col: prepared.imagesCol ?? null,
      label_cols: prepared.labelCols ?? study.dataset.label_cols,
      ...(prepared.dataCols?.length ? { data_cols: prepared.dataCols } : {}),
      class_name_col: prepared.classNameCol ?? null,
      sha256: prepared.sha256,
    },
    split: prepared.split!,
    metric: study.metric,
    threshold_metric: study.threshold_metric,
    budget: study.budget,
    seed: SEED,
    device: "auto",
    out_dir: outDir,
    source_model: sourceDir ? { dir: sourceDir } : null,
    options: { threads: Math.max(1, Math.floor(os.availableParallelism() / config.BUILDER_GPU_SLOTS)) },
  };
}

/** The study stored with the row, parsed; rows from before migration 0003 have none and are translated now. */
export function storedStudy(config: Config, row: Pick<ExperimentRow, "study" | "request">): Study {
  return row.study ? parseStudy(row.study) : studyOf(withoutToken(experimentRequestSchema.parse(row.request)), config);
}
