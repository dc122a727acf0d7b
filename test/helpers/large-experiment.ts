// A large experiment as the engine stores it, planted straight through the experiments repository (no training):
// for the chat's bounded reads (issue 48, finding 3) and bench/security/chat-stall.ts. The worst case is a table
// whose data column is an identifier: every row its own patient, so the split lists every id and the model's
// manifest codes every id (one entry per row).

const PATH = ["fetching", "validating", "training", "evaluating", "publishing"] as const;

/** The repository methods used here, structurally, so the bench can plant through another checkout's code. */
export interface PlantingRepo {
  insert(values: Record<string, unknown>): Promise<{ id: string } | null>;
  transition(id: string, status: never, opts?: { set?: Record<string, unknown> }): Promise<unknown>;
  insertModel(values: Record<string, unknown>): Promise<unknown>;
}

/** `n` identifier-like values, all different: what a patient-code column holds. */
export function identifiers(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `PAT-${String(i).padStart(7, "0")}-${((i * 2654435761) % 1e9).toString(36)}`);
}

export function largeExperiment(userId: string, experimentId: number, rows: number) {
  const ids = identifiers(rows);
  const cut1 = Math.floor(rows * 0.7);
  const cut2 = Math.floor(rows * 0.85);
  const request = {
    zip_gcloud: `${userId}/registry-${experimentId}/data.zip`,
    label_cols: ["outcome"],
    data_cols: ["age", "patient_code"],
    model_type: 0,
    optimization_type: 1,
    experiment_id: experimentId,
    user_id: userId,
    study_type: "Builder",
    task: "data",
    type_of_experiment: "classification",
    optimization_metric: "AUC",
  };
  const auc = { value: 0.812, ci_low: 0.801, ci_high: 0.823 };
  const counts = { train: cut1, val: cut2 - cut1, test: rows - cut2 };
  const report = {
    valid: true,
    errors: [],
    // More than the chat lists (10): it must count the rest, not read them.
    warnings: Array.from({ length: 30 }, (_, i) => ({
      severity: "warning",
      code: "identifier_like_column",
      message: `column patient_code looks like an identifier (warning ${i + 1})`,
      column: "patient_code",
    })),
    errors_omitted: 0,
    warnings_omitted: 170,
    summary: {
      rows,
      patients: rows,
      class_counts: { outcome: { no: rows - Math.floor(rows / 4), yes: Math.floor(rows / 4) } },
      features: [
        { name: "age", type: "numeric", min: 1, max: 99, missing: 0 },
        { name: "patient_code", type: "categorical", categories: rows, missing: 0 },
      ],
      split: counts,
      problem_counts: { identifier_like_column: 200 },
    },
  };
  const manifest = {
    schema_version: 1,
    kind: "tabular",
    problem: "binary",
    model_file: "model.onnx",
    input: {
      name: "input",
      columns: [
        { name: "age", type: "numeric", min: 1, max: 99 },
        { name: "patient_code", type: "categorical", codes: Object.fromEntries(ids.map((v, i) => [v, i])), fill: ids[0] },
      ],
    },
    outputs: { scores: "scores" },
    classes: [
      { index: 0, code: "no", name: "no" },
      { index: 1, code: "yes", name: "yes" },
    ],
    thresholds: [0.5, 0.42],
    threshold_rule: "youden",
    metric: "auc",
    metrics: { test: { auc } },
    figures: [],
    provenance: {
      dataset_sha256: null,
      seed: 0,
      split_counts: counts,
      code_version: "bench",
      time_taken_s: 60,
      created_at: new Date().toISOString(),
    },
  };
  const split = { seed: 0, train: ids.slice(0, cut1), val: ids.slice(cut1, cut2), test: ids.slice(cut2) };
  return { request, metrics: { auc }, report, manifest, split };
}

/** Plants a ready experiment `experimentId` of `rows` rows with its published model; returns its uuid. */
export async function plantLargeExperiment(repo: PlantingRepo, userId: string, experimentId: number, rows: number): Promise<string> {
  const e = largeExperiment(userId, experimentId, rows);
  const row = await repo.insert({
    userId,
    experimentId,
    name: "Registry outcome",
    description: "a large registry table with a patient code column",
    request: e.request,
    study: null,
    requestHash: `large-${experimentId}-${rows}`,
  });
  if (!row) throw new Error(`experiment ${experimentId} exists`);
  for (const status of PATH) await repo.transition(row.id, status as never);
  await repo.transition(row.id, "ready" as never, { set: { metrics: e.metrics, datasetReport: e.report, split: e.split } });
  await repo.insertModel({
    userId,
    experimentUuid: row.id,
    experimentId,
    version: 1,
    kind: "tabular",
    storePath: `models/${userId}/${experimentId}/v1/`,
    manifest: e.manifest,
  });
  return row.id;
}
