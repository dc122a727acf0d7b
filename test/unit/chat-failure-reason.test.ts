import { describe, expect, it } from "vitest";
import type { ExperimentFacts } from "../../src/chat/facts.js";
import { experimentReport, refusedReport, refusedSummary } from "../../src/chat/builtin/templates.js";
import { translate } from "../../src/i18n/index.js";

// A failed build's reason in the chat is said in the reader's language from the catalog words the job stored
// (failure_text: errors:build.timeout and its seconds), as GET /v1/experiments/{id} says failure_reason; a row from
// before catalog words has only its English sentence, which is quoted as it was.

const ENGLISH =
  "the training ran past its time limit of 300 s and was stopped; give it a larger time_budget_s or use optimization_type 1 (fastest)";

const facts = (over: Partial<ExperimentFacts>) =>
  ({
    found: true,
    experiment_id: 12,
    name: null,
    description: null,
    status: "failed",
    task: "data",
    study_type: "Builder",
    model_type: "classification",
    optimization_metric: "AUC",
    label_cols: ["label"],
    history: [
      { status: "training", at: "2026-01-01T00:00:00Z" },
      { status: "failed", at: "2026-01-01T00:05:00Z" },
    ],
    progress: null,
    failure_reason: ENGLISH,
    failure_text: { key: "errors:build.timeout", values: { seconds: 300 } },
    metrics: {},
    per_class: {},
    thresholds: null,
    threshold_rule: null,
    warnings: [],
    worse_subgroups: [],
    classes: null,
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
    ...over,
  }) as unknown as ExperimentFacts;

describe("chat: a failed build's reason in the reader's language", () => {
  const spanish = translate("es", "errors:build.timeout", { seconds: 300 });

  it("says the stored catalog words in Spanish to a Spanish reader, with no English sentence", () => {
    expect(spanish).toContain("superó su límite de tiempo de 300 s");
    for (const text of [experimentReport(facts({}), "es"), refusedReport(facts({}), {} as never, "es")]) {
      expect(text).toContain(spanish);
      expect(text).not.toContain("ran past its time limit");
    }
    expect(experimentReport(facts({}), "en")).toContain(ENGLISH);
  });

  it("a refused dataset's reason too", () => {
    const refused = facts({
      status: "invalid_dataset",
      failure_reason: "the dataset did not pass its checks; see dataset_report.errors",
      failure_text: { key: "errors:build.dataset_invalid", values: {} },
    });
    const text = refusedSummary(refused, undefined, "es");
    expect(text).toContain(translate("es", "errors:build.dataset_invalid"));
    expect(text).not.toContain("did not pass its checks");
  });

  it("a refused dataset's problems are said in the reader's language from their catalog words", () => {
    const keyed = {
      code: "image_not_found",
      message: "the image 'scans/a.png' is not in the zip",
      key: "problems:dataset.image_not_found",
      params: { image: "scans/a.png" },
      path: "scans/a.png",
    };
    const old = { code: "class_too_small", message: "class 'pos' has 1 patient", row: 3 };
    const refused = facts({
      status: "invalid_dataset",
      failure_text: { key: "errors:build.dataset_invalid", values: {} },
      problems: { errors: [keyed, old], warnings: [], errors_omitted: 0 },
    } as never);
    const text = refusedSummary(refused, undefined, "es");
    expect(text).toContain(translate("es", "problems:dataset.image_not_found", { image: "scans/a.png" }));
    expect(text).not.toContain("is not in the zip");
    // A problem stored before catalog words keeps the English it has.
    expect(text).toContain("class 'pos' has 1 patient");
    expect(refusedSummary(refused, undefined, "en")).toContain("is not in the zip");
  });

  it("quotes the stored English for a row from before catalog words (or with a key the catalog does not hold)", () => {
    expect(experimentReport(facts({ failure_text: null }), "es")).toContain(ENGLISH);
    const foreign = facts({ failure_text: { key: "chat:whatever", values: {} } as never });
    expect(experimentReport(foreign, "es")).toContain(ENGLISH);
  });
});
