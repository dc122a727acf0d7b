import os from "node:os";
import type { Config } from "../config.js";
import type { BackboneSpec, JobSpec } from "../contract/types.js";
import type { ExperimentRow } from "../experiments/repository.js";
import { experimentRequestSchema, withoutToken } from "../experiments/request.js";
import { parseStudy, studyOf, type Study } from "../experiments/study.js";
import type { PreparedDataset } from "./dataset-stage.js";
import { trainingDevice, type DeviceSlot } from "./gpu-slots.js";

/** Every job trains and splits with this seed: the same data and request give the same model. */
export const SEED = 42;

/** The job spec, from the study and the prepared dataset only. */
export function buildSpec(
  config: Config,
  row: Pick<ExperimentRow, "id">,
  study: Study,
  prepared: PreparedDataset,
  outDir: string,
  sourceDir?: string,
  slot?: DeviceSlot,
  backbone?: { spec: BackboneSpec; file: string } | null,
): JobSpec {
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
      ...(study.dataset.subgroup_cols.length ? { subgroup_cols: study.dataset.subgroup_cols } : {}),
      ...(Object.keys(study.subgroup_bins).length ? { subgroup_bins: study.subgroup_bins } : {}),
      class_name_col: prepared.classNameCol ?? null,
      sha256: prepared.sha256,
    },
    split: prepared.split!,
    metric: study.metric,
    threshold_metric: study.threshold_metric,
    budget: study.budget,
    seed: SEED,
    // The slot's device: a GPU slot's process sees only its GPU (as cuda:0); a CPU slot's sees none (nor does a
    // simulated GPU's: it trains on the CPU).
    device: slot ? trainingDevice(slot) : "auto",
    out_dir: outDir,
    source_model: sourceDir ? { dir: sourceDir } : null,
    positive_class: study.positive_class ?? null,
    options: {
      threads: slot?.threads ?? Math.max(1, Math.floor(os.availableParallelism() / (config.BUILDER_GPU_SLOTS ?? 1))),
      // How DICOM images are rendered (dicom_window, dicom_frames); absent: the pipeline's defaults (file window, first frame).
      ...(study.dicom ? { dicom: study.dicom } : {}),
      // An installed pretrained backbone (./builder backbones install): image classification fine-tunes it; the
      // pipeline checks the file's SHA-256 against this pin before loading it.
      ...(backbone && study.kind === "vision_classification" && !sourceDir
        ? { pretrained_weights: backbone.file, backbone: backbone.spec }
        : {}),
    },
  };
}

/** The study stored with the row, parsed; rows from before migration 0003 have none and are translated now. */
export function storedStudy(config: Config, row: Pick<ExperimentRow, "study" | "request">): Study {
  return row.study ? parseStudy(row.study) : studyOf(withoutToken(experimentRequestSchema.parse(row.request)), config);
}
