import type { Readable } from "node:stream";
import { ApiError, msg } from "../errors.js";
import { BucketNotFoundError, uriScheme, type Bucket } from "../storage/bucket.js";
import { ModelNotPublished } from "./errors.js";
import { checkManifest, classNames, type ColumnSpec } from "./manifest.js";
import type { ExperimentLabelsRow, ModelRepository, ModelRow } from "./model-repository.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";

/**
 * A categorical column's values are data from the training table, and a clinical table may hold identifiers
 * (names, record numbers): they are never shown, only how many there are. A caller who has a value sends it as
 * written in the CSV; the codes are 0..n-1 in the sorted order of the values, which reveals nothing more.
 */
function publicColumn(c: ColumnSpec) {
  // Listed field by field: `fill` (what Retrospective studies use for unseen values) is not part of calling /predict.
  if (c.type !== "categorical") return { name: c.name, type: c.type, min: c.min, max: c.max, ...(c.missing ? { missing: true } : {}) };
  return { name: c.name, type: c.type, categories: Object.keys(c.codes ?? {}).length };
}

/** What a caller needs to call /predict: kind, inputs (data_cols or image spec), classes, thresholds, metrics, version. */
/** `linkScheme`: how the deployment's own objects are linked in an image's message (gs, or s3 on S3). */
export function modelView(row: ModelRow, labels: ExperimentLabelsRow, linkScheme: "gs" | "s3" = "gs") {
  const m = checkManifest(row.manifest);
  return {
    experiment_id: row.experimentId,
    name: labels.name,
    description: labels.description,
    version: row.version,
    kind: m.kind,
    problem: m.problem,
    created_at: row.createdAt,
    inputs: {
      name: m.input.name,
      ...(m.input.image
        ? {
            image: m.input.image,
            message: `an image URI: https://, http://, data:image/...;base64, data:application/dicom;base64, a DICOMweb instance URL, or ${linkScheme}://<bucket>/<your path>`,
          }
        : {}),
      ...(m.input.columns
        ? {
            data_cols: m.input.columns.map((c) => c.name),
            columns: m.input.columns.map(publicColumn),
            message:
              "an array in data_cols order: a number for each numeric column (null where the value is unknown, for a column marked missing: true); for a categorical column, the value as written in the training CSV (a string) or its integer code",
          }
        : {}),
    },
    classes: classNames(m),
    thresholds: m.thresholds ?? null,
    threshold_rule: m.threshold_rule ?? null,
    metric: m.metric ?? null,
    metrics: m.metrics,
    ...(m.detection ? { detection: m.detection } : {}),
    outputs: m.outputs,
  };
}

/** The caller's published models as the API shows them, and the ONNX file of one. Another user's model is 404. */
export class ModelCatalog {
  constructor(private readonly deps: { repo: ModelRepository; bucket: Bucket }) {}

  private async latest(scope: Scope, experimentId: number): Promise<ModelRow> {
    assertAllowed(scope.workspace, "experiment.read");
    const row = await this.deps.repo.current(scope.workspace.id, experimentId);
    if (!row) throw new ModelNotPublished(experimentId);
    return row;
  }

  /** The current version of each experiment. One unreadable manifest must not hide the others: it is listed with what the row knows. */
  async list(scope: Scope) {
    assertAllowed(scope.workspace, "experiment.read");
    const rows = await this.deps.repo.listLatest(scope.workspace.id);
    return rows.map((row) => {
      try {
        return modelView(row, row.labels, uriScheme(this.deps.bucket));
      } catch (err) {
        return {
          experiment_id: row.experimentId,
          ...row.labels,
          version: row.version,
          kind: row.kind,
          created_at: row.createdAt,
          error: (err as Error).message,
        };
      }
    });
  }

  async describe(scope: Scope, experimentId: number) {
    const row = await this.latest(scope, experimentId);
    return modelView(row, await this.deps.repo.labelsOf(row.experimentUuid), uriScheme(this.deps.bucket));
  }

  /** The current version's model file, opened for streaming, with its size and a download name. */
  async openModelFile(scope: Scope, experimentId: number): Promise<{ stream: Readable; size: number; filename: string }> {
    const row = await this.latest(scope, experimentId);
    const objectPath = `${row.storePath.replace(/\/+$/, "")}/${checkManifest(row.manifest).model_file}`;
    const missing = () => new ApiError(404, "not_found", msg("serving.model_file_missing"));
    const st = await this.deps.bucket.stat(objectPath);
    if (!st) throw missing();
    try {
      const stream = await this.deps.bucket.read(objectPath);
      return { stream, size: st.size, filename: `experiment-${row.experimentId}-v${row.version}.onnx` };
    } catch (err) {
      if (err instanceof BucketNotFoundError) throw missing();
      throw err;
    }
  }
}
