import fs from "node:fs";
import path from "node:path";
import { backbonesDir, chosenBackbone } from "../backbones/store.js";
import { assertJobSpec, assertManifest, ContractError } from "../contract/validate.js";
import type { Manifest } from "../contract/types.js";
import type { ModelRow } from "../experiments/repository.js";
import type { TerminalStatus } from "../experiments/state.js";
import { resolveZipPath } from "../datasets/zip-path.js";
import { loadPrepareDataset } from "./dataset-stage.js";
import { createEventSink } from "./event-sink.js";
import type { JobRun, TransitionSet } from "./job-run.js";
import { defaultPython, runPipeline } from "./pipeline-process.js";
import { positiveClassProblem } from "./positive-class.js";
import { publishModel } from "./publish.js";
import { slotEnv } from "./gpu-slots.js";
import { buildSpec, SEED } from "./spec.js";

// The job's stages, in order. Each one moves the experiment into its state and returns an explicit outcome: go on
// to the next stage, or end in a terminal state (with what to store). Infrastructure failures are thrown; a stop
// from outside is JobStop (see lease.ts). runExperimentJob (experiment-job.ts) runs them.

export type StageOutcome = { next: true } | { end: TerminalStatus; set?: TransitionSet; published?: ModelRow };
export type Stage = (run: JobRun) => Promise<StageOutcome>;

const NEXT: StageOutcome = { next: true };
const failed = (failureReason: string): StageOutcome => ({ end: "failed", set: { failureReason } });

/**
 * Added to budget × JOB_TIMEOUT_FACTOR before the hard kill: interpreter start-up, data loading, the bootstrap
 * intervals and ONNX export are outside the pipeline's training budget, and a busy host stretches all of them
 * (a 4 s tabular budget took 30 s of wall time on a loaded 2-core machine).
 */
const TIMEOUT_ALLOWANCE_S = 120;

/** Before any work: a cancel that came while queued, or a job interrupted too often; else a clean work folder. */
export const admit: Stage = async (run) => {
  const { row, deps } = run;
  if (row.cancelRequested) return { end: "cancelled" };
  if (row.attempts > deps.config.JOB_MAX_ATTEMPTS) {
    return failed(
      `the job was interrupted ${row.attempts - 1} times (its runner stopped or crashed) and was given up; post it again with a new experiment_id`,
    );
  }
  await fs.promises.rm(run.work, { recursive: true, force: true }); // a re-run starts clean
  await fs.promises.mkdir(run.work, { recursive: true });
  const { slot } = run;
  run.jobLog(
    `attempt ${row.attempts} on runner ${run.lease.owner}${slot ? `, slot ${slot.slot}: ${slot.gpu ? `GPU ${slot.gpu.index} (${slot.gpu.name}${slot.gpu.simulated ? ": trains on the CPU" : ""})` : "CPU"}, ${slot.threads} threads` : ""}`,
  );
  return NEXT;
};

/** fetching: the zip must be there (the datasets stage streams it itself); Retrospective downloads the model under test. */
export const fetch: Stage = async (run) => {
  await run.move("fetching");
  const zipPath = run.study.zip_path;
  // The workspace is checked again here, not only at submission: a row may predate that check or come from
  // elsewhere, and another workspace's zip must never be read. It fails exactly as a missing file does.
  if (!ownsZip(zipPath, await run.storagePrefix()) || !(await run.deps.bucket.stat(zipPath)))
    return failed(`no file at zip_gcloud ${zipPath}: upload it first (PUT /v1/files/${zipPath})`);
  if (run.study.command === "evaluate") {
    const fetched = await fetchSourceModel(run, path.join(run.work, "source_model"));
    if (typeof fetched === "string") return failed(fetched);
    run.state.source = fetched;
  }
  return NEXT;
};

function ownsZip(zipPath: string, storagePrefix: string): boolean {
  try {
    resolveZipPath(zipPath, storagePrefix);
    return true;
  } catch {
    return false;
  }
}

/** validating: the datasets stage checks the zip and makes the patient-grouped split. */
export const validate: Stage = async (run) => {
  const { deps, study } = run;
  await run.move("validating");
  const prepare = deps.prepareDataset ?? (await loadPrepareDataset());
  const prepared = await prepare(
    { bucket: deps.bucket, config: deps.config },
    {
      zipPath: study.zip_path,
      workDir: path.join(run.work, "dataset"),
      task: study.dataset,
      seed: SEED,
      split: run.state.source ? "all_test" : "train_val_test",
      signal: run.lease.signal,
    },
  );
  run.lease.throwIfStopped();
  if (!prepared.report.valid)
    return {
      end: "invalid_dataset",
      set: { datasetReport: prepared.report, failureReason: "the dataset did not pass its checks; see dataset_report.errors" },
    };
  const positive = positiveClassProblem(study.positive_class, prepared);
  if (positive) {
    const report = { ...prepared.report, valid: false, errors: [...prepared.report.errors, positive] };
    return { end: "invalid_dataset", set: { datasetReport: report, failureReason: positive.message } };
  }
  await deps.repo.update(run.uuid, run.lease.owner, { datasetReport: prepared.report, split: prepared.split });
  run.state.prepared = prepared;
  return NEXT;
};

/** training (evaluating directly for Retrospective): the spec, then the Python process with its events. */
export const train: Stage = async (run) => {
  const { deps, state } = run;
  await fs.promises.mkdir(run.outDir, { recursive: true });
  const backbone = run.study.kind === "vision_classification" ? await chosenBackbone(backbonesDir(deps.config.dataDir)) : null;
  const spec = buildSpec(deps.config, run.row, run.study, state.prepared!, run.outDir, state.source?.dir, run.slot, backbone);
  try {
    assertJobSpec(spec);
  } catch (err) {
    return failed(`internal error: Builder made a job spec the contract refuses (${(err as ContractError).message})`);
  }
  await fs.promises.writeFile(run.specPath, JSON.stringify(spec, null, 2));
  state.spec = spec;
  await run.move(state.source ? "evaluating" : "training");
  const sink = createEventSink(run);
  const outcome = await runPipeline({
    python: defaultPython(deps.config.PYTHON_BIN),
    command: spec.command,
    specPath: run.specPath,
    outDir: run.outDir,
    logFile: run.logFile,
    timeoutMs: (spec.budget.time_budget_s * deps.config.JOB_TIMEOUT_FACTOR + TIMEOUT_ALLOWANCE_S) * 1000,
    signal: run.lease.signal,
    onEvent: sink.onEvent,
    env: run.slot ? slotEnv(run.slot) : undefined,
  });
  await sink.flush();
  if (outcome.kind === "cancelled") run.lease.throwIfStopped();
  if (outcome.kind === "data_error") {
    const report = {
      ...state.prepared!.report,
      valid: false,
      errors: [...state.prepared!.report.errors, { code: "pipeline_data_error", severity: "error" as const, message: outcome.message }],
    };
    return { end: "invalid_dataset", set: { datasetReport: report, failureReason: outcome.message } };
  }
  if (outcome.kind !== "ok") {
    const reason = "message" in outcome ? outcome.message : "the pipeline stopped";
    const prefix = outcome.kind === "contract_error" || outcome.kind === "spec_error" ? "internal error (pipeline contract): " : "";
    return failed(`${prefix}${reason}`);
  }
  state.manifestFile = outcome.manifest;
  return NEXT;
};

/** evaluating: the manifest must satisfy its schema, and name a model file that is there, before anything is published. */
export const check: Stage = async (run) => {
  if (run.status === "training") await run.move("evaluating");
  try {
    const manifest = assertManifest(JSON.parse(await fs.promises.readFile(path.resolve(run.outDir, run.state.manifestFile!), "utf8")));
    if (
      !(await fs.promises.access(path.join(run.outDir, manifest.model_file)).then(
        () => true,
        () => false,
      ))
    )
      throw new Error(`the manifest names ${manifest.model_file}, which the pipeline did not write`);
    run.state.manifest = manifest;
  } catch (err) {
    return failed(`internal error (pipeline contract): the result manifest is not valid: ${(err as Error).message}`);
  }
  return NEXT;
};

/** publishing: the model, its manifest and the resolved spec.json go to the store, then the models row, then ready. */
export const publish: Stage = async (run) => {
  const { state } = run;
  await run.move("publishing");
  // The resolved spec stays with the model (as timm keeps a run's resolved config): which data, split, metric and
  // budget made it. The work folder holding the original is removed when the experiment ends.
  await fs.promises.copyFile(run.specPath, path.join(run.outDir, "spec.json"));
  const model = await publishModel(run.deps, run.row, state.manifest!, run.outDir, run.lease.owner, await run.storagePrefix());
  const originalMetrics = state.source ? state.source.manifest.metrics.test : null;
  return { end: "ready", set: { metrics: state.manifest!.metrics.test, originalMetrics, failureReason: null }, published: model };
};

export const STAGES: Stage[] = [admit, fetch, validate, train, check, publish];

async function fetchSourceModel(run: JobRun, dir: string): Promise<{ dir: string; manifest: Manifest } | string> {
  const { deps, study } = run;
  const sourceId = study.source_experiment_id!;
  const model = await deps.repo.currentModel(run.row.workspaceId, sourceId);
  if (!model) return `experiment ${sourceId} has no published model yet; wait until it is ready`;
  if (model.kind !== study.kind) return `experiment ${sourceId} built a ${model.kind} model, but this request is for ${study.kind}`;
  await fs.promises.mkdir(dir, { recursive: true });
  for (const object of await deps.bucket.list(`${model.storePath}/`)) {
    const target = path.join(dir, object.slice(model.storePath.length + 1));
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await deps.bucket.downloadTo(object, target);
  }
  // A version published by saving an operating point shares its files with the version it came from; its own
  // manifest (new thresholds) is the row's.
  await fs.promises.writeFile(path.join(dir, "manifest.json"), JSON.stringify(model.manifest));
  return { dir, manifest: model.manifest as Manifest };
}
