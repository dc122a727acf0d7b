import os from "node:os";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { experimentRequestSchema, withoutToken } from "../../src/experiments/request.js";
import { parseStudy, studyOf } from "../../src/experiments/study.js";
import { storedStudy } from "../../src/jobs/spec.js";

// The one translation of the seed's wire values. Every other place (datasets stage, job spec) reads its output.

const config = parseConfig({ BUILDER_DATA_DIR: os.tmpdir(), FAST_BUDGET_S: "90", BEST_BUDGET_S: "900" });
const base = {
  zip_gcloud: "gs://bucket/u/e/data.zip",
  label_cols: ["y"],
  data_cols: ["a", "b"],
  model_type: 0,
  optimization_type: 1,
  experiment_id: 4,
  user_id: "u",
  study_type: "Builder",
  task: "data",
  optimization_metric: "Precision",
};
const request = (over: Record<string, unknown> = {}) => withoutToken(experimentRequestSchema.parse({ ...base, ...over }));

describe("study: the request translated once", () => {
  it("classification: selected on the requested metric, thresholds for the same metric", () => {
    const study = studyOf(request(), config);
    expect(study).toMatchObject({
      command: "train",
      kind: "tabular",
      family: "classification",
      metric: "precision",
      threshold_metric: "precision",
    });
    expect(study.zip_path).toBe("u/e/data.zip");
    expect(study.dataset).toEqual({
      family: "classification",
      inputs: "table",
      label_cols: ["y"],
      images_col: null,
      data_cols: ["a", "b"],
      split_col: null,
      subgroup_cols: [],
    });
    expect(study.subgroup_bins).toEqual({});
  });

  it("subgroup columns and bins travel to the study; a study stored before them parses with none", () => {
    const study = studyOf(request({ subgroup_cols: ["age", "site"], subgroup_bins: { age: [40, 60] } }), config);
    expect(study.dataset.subgroup_cols).toEqual(["age", "site"]);
    expect(study.subgroup_bins).toEqual({ age: [40, 60] });
    const { subgroup_bins: _bins, ...old } = studyOf(request(), config);
    const { subgroup_cols: _cols, ...oldDataset } = old.dataset;
    const parsed = parseStudy({ ...old, dataset: oldDataset });
    expect([parsed.dataset.subgroup_cols, parsed.subgroup_bins]).toEqual([[], {}]);
  });

  it("regression: optimization_metric is accepted and not used; selected on rmse with no thresholds", () => {
    for (const m of ["AUC", "F-macro", "Precision", "Recall"]) {
      const study = studyOf(request({ model_type: 1, optimization_metric: m }), config);
      expect([study.family, study.metric, study.threshold_metric, study.dataset.family]).toEqual([
        "regression",
        "rmse",
        null,
        "regression",
      ]);
    }
  });

  it("detection: selected on map50; the score threshold follows Precision/Recall, and F1 for F-macro and AUC", () => {
    const det = (m: string) =>
      studyOf(
        request({ task: "vision", images_col: "img", data_cols: undefined, type_of_experiment: "detection", optimization_metric: m }),
        config,
      );
    expect([det("Recall").metric, det("Recall").threshold_metric]).toEqual(["map50", "recall"]);
    expect(det("AUC").threshold_metric).toBe("f_macro");
    expect(det("F-macro").threshold_metric).toBe("f_macro");
    expect(det("AUC").dataset).toMatchObject({ family: "detection", inputs: "images", images_col: "img", data_cols: [] });
  });

  it("resolves the budget when accepted: the request's own, else the operator's default for the mode", () => {
    expect(studyOf(request(), config).budget).toEqual({ mode: "fast", time_budget_s: 90 });
    expect(studyOf(request({ optimization_type: 0 }), config).budget).toEqual({ mode: "best", time_budget_s: 900 });
    expect(studyOf(request({ time_budget_s: 12 }), config).budget).toEqual({ mode: "fast", time_budget_s: 12 });
  });

  it("Retrospective evaluates the source experiment's model", () => {
    const study = studyOf(request({ study_type: "Retrospective", source_experiment_id: 2 }), config);
    expect([study.command, study.source_experiment_id]).toEqual(["evaluate", 2]);
  });

  it("is parsed again by the job (a stored study survives JSON; a wrong one is refused naming the field)", () => {
    const study = studyOf(request(), config);
    expect(parseStudy(JSON.parse(JSON.stringify(study)))).toEqual(study);
    expect(() => parseStudy({ ...study, metric: "accuracy" })).toThrow(/metric/);
    expect(() => parseStudy({ ...study, dataset: { ...study.dataset, label_cols: [] } })).toThrow(/dataset\.label_cols/);
  });

  it("a row from before the study column is translated from its stored request by the same function", () => {
    const row = { request: request(), study: null };
    expect(storedStudy(config, row)).toEqual(studyOf(request(), config));
    expect(() => storedStudy(config, { request: { ...request(), model_type: 7 }, study: null })).toThrow(/model_type/);
  });
});
