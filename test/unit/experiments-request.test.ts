import { describe, expect, it } from "vitest";
import { experimentRequestSchema, requestHash, splitRequest, withoutToken } from "../../src/experiments/request.js";
import { containsPattern } from "../../src/experiments/repository.js";
import { pipelineKind } from "../../src/experiments/study.js";

const valid = {
  zip_gcloud: "user-1/wdbc/data.zip",
  label_cols: ["diagnosis"],
  data_cols: ["radius_mean", "texture_mean"],
  model_type: 0,
  optimization_type: 1,
  experiment_id: 3,
  user_token: "tok",
  user_id: "user-1",
  study_type: "BUILDER",
  task: "data",
  optimization_metric: "AUC",
};

describe("experiment request", () => {
  it("accepts the seed's structure, normalising study_type and defaulting type_of_experiment", () => {
    const r = experimentRequestSchema.parse(valid);
    expect(r.study_type).toBe("Builder");
    expect(r.type_of_experiment).toBe("classification");
    expect(pipelineKind(r)).toBe("tabular");
    expect(withoutToken(r)).not.toHaveProperty("user_token");
  });

  it("refuses a column in two roles, naming the column, the rule the dashboard translates and the catalog words the edge says", () => {
    const res = experimentRequestSchema.safeParse({ ...valid, label_cols: ["diagnosis", "radius_mean"], split_col: "texture_mean" });
    expect(res.success).toBe(false);
    const issues = res.error!.issues.map((i) => ({
      path: i.path.join("."),
      message: i.message,
      params: (i as { params?: unknown }).params,
    }));
    expect(issues).toEqual([
      {
        path: "data_cols",
        message: "'radius_mean' is both a label and a data column",
        params: {
          rule: "label_is_data",
          column: "radius_mean",
          text: { key: "validation.request.label_is_data", values: { column: "radius_mean" } },
        },
      },
      {
        path: "split_col",
        message: "'texture_mean' is both the split column and a data column",
        params: {
          rule: "split_is_data",
          column: "texture_mean",
          text: { key: "validation.request.split_is_data", values: { column: "texture_mean" } },
        },
      },
    ]);
    const vision = { ...valid, task: "vision", data_cols: null, images_col: "scan", label_cols: ["scan"] };
    expect(experimentRequestSchema.safeParse(vision).error!.issues.map((i) => i.message)).toEqual([
      "'scan' is both a label and the image column",
    ]);
    // A vision task's data_cols are not inputs, so naming the label there is no conflict (the seed's clients send both).
    expect(experimentRequestSchema.safeParse({ ...vision, label_cols: ["label"], data_cols: ["label"] }).success).toBe(true);
  });

  it("reports every bad field at once", () => {
    const res = experimentRequestSchema.safeParse({
      zip_gcloud: "../etc/passwd",
      label_cols: [],
      model_type: 2,
      optimization_type: "fast",
      experiment_id: -1,
      user_id: "",
      study_type: "Prospective",
      task: "audio",
      optimization_metric: "auc",
      type_of_experiment: "segmentation",
      surprise: true,
    });
    expect(res.success).toBe(false);
    const fields = new Set(res.error!.issues.map((i) => i.path.join(".") || (i as { keys?: string[] }).keys?.join(",")));
    for (const f of [
      "zip_gcloud",
      "label_cols",
      "model_type",
      "optimization_type",
      "experiment_id",
      "user_id",
      "study_type",
      "task",
      "optimization_metric",
      "type_of_experiment",
      "surprise",
    ]) {
      expect(fields).toContain(f);
    }
  });

  it("applies the cross-field rules: images_col for vision, data_cols for data, source for Retrospective", () => {
    const vision = experimentRequestSchema.safeParse({ ...valid, task: "vision", data_cols: undefined });
    expect(vision.error!.issues.map((i) => i.path.join("."))).toEqual(["images_col"]);
    const data = experimentRequestSchema.safeParse({ ...valid, data_cols: [] });
    expect(data.error!.issues.map((i) => i.path.join("."))).toEqual(["data_cols"]);
    const retro = experimentRequestSchema.safeParse({ ...valid, study_type: "Retrospective" });
    expect(retro.error!.issues.map((i) => i.path.join("."))).toEqual(["source_experiment_id"]);
    expect(pipelineKind({ task: "vision", type_of_experiment: "detection" })).toBe("detection");
    expect(pipelineKind({ task: "vision", type_of_experiment: "classification" })).toBe("vision_classification");
  });

  it("subgroup_cols: any column but a label, image or split column; classification with one label only; bins for listed columns", () => {
    const ok = experimentRequestSchema.parse({ ...valid, subgroup_cols: ["radius_mean", "sex"], subgroup_bins: { radius_mean: [10, 20] } });
    expect(ok.subgroup_cols).toEqual(["radius_mean", "sex"]); // a feature may also be a subgroup column
    const issues = (over: Record<string, unknown>) =>
      (experimentRequestSchema.safeParse({ ...valid, ...over }).error?.issues ?? []).map((i) => `${i.path.join(".")}: ${i.message}`);
    expect(issues({ subgroup_cols: ["diagnosis"] })).toEqual([
      "subgroup_cols: 'diagnosis' is a label column; a subgroup column describes the patients",
    ]);
    expect(issues({ subgroup_cols: ["sex", "sex"] })).toEqual(["subgroup_cols: must not name a column twice"]);
    expect(issues({ subgroup_cols: ["sex"], model_type: 1 })).toEqual([
      "subgroup_cols: are for classification, not regression (model_type 1)",
    ]);
    expect(issues({ subgroup_cols: ["sex"], label_cols: ["a", "b"] })[0]).toMatch(/one label column/);
    expect(
      issues({ subgroup_cols: ["sex"], task: "vision", images_col: "img", data_cols: undefined, type_of_experiment: "detection" }),
    ).toEqual(["subgroup_cols: are for classification, not detection"]);
    expect(issues({ subgroup_cols: ["sex"], subgroup_bins: { age: [40] } })).toEqual(["subgroup_bins: 'age' is not in subgroup_cols"]);
    expect(issues({ subgroup_cols: ["age"], subgroup_bins: { age: [] } })[0]).toMatch(
      /^subgroup_bins\.age: must list at least one cut point/,
    );
    expect(issues({ subgroup_cols: ["age"], subgroup_bins: { age: ["forty"] } })[0]).toMatch(/^subgroup_bins\.age\.0: must be numbers/);
  });

  it("hashes the normalised request: key order, case of study_type, token and nulls do not matter", () => {
    const a = withoutToken(experimentRequestSchema.parse(valid));
    const b = withoutToken(
      experimentRequestSchema.parse({
        ...Object.fromEntries(Object.entries(valid).reverse()),
        study_type: "builder",
        user_token: "other",
        images_col: null,
        type_of_experiment: "classification",
      }),
    );
    expect(requestHash(a)).toBe(requestHash(b));
    const c = withoutToken(experimentRequestSchema.parse({ ...valid, optimization_type: 0 }));
    expect(requestHash(c)).not.toBe(requestHash(a));
  });

  it("keeps name and description out of the stored request and its hash (labels are edited later, not trained)", () => {
    const plain = experimentRequestSchema.parse(valid);
    const named = experimentRequestSchema.parse({ ...valid, name: "  Breast cancer  ", description: "" });
    const { request, labels } = splitRequest(named);
    expect(labels).toEqual({ name: "Breast cancer", description: null });
    expect(request).not.toHaveProperty("name");
    expect(request).not.toHaveProperty("description");
    expect(requestHash(request)).toBe(requestHash(withoutToken(plain)));
  });

  it("escapes ILIKE's own characters so a search takes them literally", () => {
    expect(containsPattern("100%")).toBe("%100\\%%");
    expect(containsPattern("a_b")).toBe("%a\\_b%");
    expect(containsPattern("c:\\x")).toBe("%c:\\\\x%");
    expect(containsPattern("plain")).toBe("%plain%");
  });
});
