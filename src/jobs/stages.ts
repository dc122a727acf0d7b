import fs from "node:fs";
import path from "node:path";
import { backbonesDir, chosenBackbone } from "../backbones/store.js";
import { assertJobSpec, assertManifest, ContractError } from "../contract/validate.js";
import type { Manifest } from "../contract/types.js";
import type { ModelRow } from "../experiments/repository.js";
import type { TerminalStatus } from "../experiments/state.js";
import { resolveZipPath } from "../datasets/zip-path.js";
import type { DatasetProblem } from "../datasets/report.js";
import { msg, say, storedMessage, type Message } from "../errors.js";
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
/** Why an experiment ended, in catalog words (said in each reader's language) and their English (the job log's). */
const failure = (text: Message, english = say(text, "en")): TransitionSet => ({ failureReason: english, failureText: storedMessage(text) });
const failed = (text: Message): StageOutcome => ({ end: "failed", set: failure(text) });

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
    return failed(msg("build.interrupted", { times: row.attempts - 1 }));
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
    return failed(msg("build.zip_missing", { path: zipPath }));
  if (run.study.command === "evaluate") {
    const fetched = await fetchSourceModel(run, path.join(run.work, "source_model"));
    if (!("dir" in fetched)) return failed(fetched);
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
      set: { datasetReport: prepared.report, ...failure(msg("build.dataset_invalid")) },
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
    return failed(msg("build.spec_refused", { detail: (err as ContractError).message }));
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
      errors: [...state.prepared!.report.errors, pipelineProblem(outcome.message, outcome.text)],
    };
    return { end: "invalid_dataset", set: { datasetReport: report, ...failure(outcome.text, outcome.message) } };
  }
  if (outcome.kind === "cancelled") return failed(msg("build.pipeline_failed", { detail: "the pipeline stopped" }));
  if (outcome.kind !== "ok") return { end: "failed", set: failure(outcome.text, outcome.message) };
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
    return failed(msg("build.manifest_invalid", { detail: (err as Error).message }));
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
  return {
    end: "ready",
    set: { metrics: state.manifest!.metrics.test, originalMetrics, failureReason: null, failureText: null },
    published: model,
  };
};

export const STAGES: Stage[] = [admit, fetch, validate, train, check, publish];

/**
 * The pipeline's data problem as a row of the dataset report: its key and values (the reader's language is chosen
 * when the report is read, src/experiments/view.ts), the English as the message, and the column it names.
 */
function pipelineProblem(english: string, text: Message): DatasetProblem {
  const params = text.values as Record<string, string | number>;
  const column = typeof params.column === "string" ? params.column : undefined;
  return {
    code: "pipeline_data_error",
    severity: "error",
    message: english,
    key: text.key,
    params: { ...params },
    ...(column !== undefined ? { column } : {}),
  };
}

async function fetchSourceModel(run: JobRun, dir: string): Promise<{ dir: string; manifest: Manifest } | Message> {
  const { deps, study } = run;
  const sourceId = study.source_experiment_id!;
  const model = await deps.repo.currentModel(run.row.workspaceId, sourceId);
  if (!model) return msg("build.source_not_ready", { id: sourceId });
  if (model.kind !== study.kind) return msg("build.source_other_kind", { id: sourceId, built: model.kind, asked: study.kind });
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
