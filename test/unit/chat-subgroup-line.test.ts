import { describe, expect, it } from "vitest";
import type { ExperimentFacts } from "../../src/chat/facts.js";
import { experimentReport } from "../../src/chat/builtin/templates.js";

// The builtin assistant's experiment report names a subgroup the pipeline flagged clearly worse, in one line, with the
// column and label quoted (they come from the user's CSV).

const facts = (worse: ExperimentFacts["worse_subgroups"]) =>
  ({
    found: true,
    experiment_id: 7,
    name: null,
    description: null,
    status: "ready",
    task: "data",
    study_type: "Builder",
    model_type: "classification",
    optimization_metric: "AUC",
    label_cols: ["diagnosis"],
    history: [],
    progress: null,
    failure_reason: null,
    metrics: { auc: { value: 0.86, ci_low: 0.8, ci_high: 0.91 } },
    per_class: {},
    thresholds: [0.6, 0.4],
    threshold_rule: null,
    warnings: [],
    worse_subgroups: worse,
    classes: { 0: "B", 1: "M" },
    model: null,
    dataset: {
      zip_gcloud: null,
      valid: true,
      rows: 900,
      patients: 900,
      images: null,
      boxes: null,
      class_counts: null,
      split: null,
      problem_counts: null,
    },
    problems: { errors: [], warnings: [], errors_omitted: 0 },
    finished_at: null,
  }) as unknown as ExperimentFacts;

describe("chat: flagged subgroups in the experiment report", () => {
  it("one line naming the group, its AUC interval and the rest's AUC; nothing when none is flagged", () => {
    const text = experimentReport(
      facts([{ column: "site", label: "C`x", auc: { value: 0.52, ci_low: 0.41, ci_high: 0.63 }, rest_auc: 0.9 }]),
    );
    const lines = text.split("\n").filter((l) => l.startsWith("Subgroups:"));
    expect(lines).toEqual([
      "Subgroups: the model does clearly worse for `site` `C'x` (AUC 0.520, 95% CI 0.410–0.630, against 0.900 for the other test patients); see Subgroups on the result page.",
    ]);
    expect(experimentReport(facts([]))).not.toMatch(/Subgroups:/);
  });
});
