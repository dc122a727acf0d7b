import type { DatasetSummary } from "../datasets/report.js";
import type { Manifest, Metrics } from "../contract/types.js";
import type { ExperimentRow, ModelRow } from "./repository.js";
import { baselineOf } from "../monitoring/baseline.js";
import type { ApprovalView } from "../workspaces/approval-rule.js";
import { DRIFT_RULES } from "../monitoring/drift.js";
import { isInternalSplit, warningsOf, type ResultWarning, type WarningCode, type WarningFacts } from "./warnings.js";

// The model card (issue 37 item 8): what a reviewer, an ethics board or a paper's methods section asks of a
// diagnostic model, organised after the TRIPOD+AI (2024) items. Built only from what is already stored (the request,
// the dataset report's summary, the published manifest and the warnings), never from rows: no patient id, no raw value,
// no dataset problem list (those name rows and values). GET /v1/experiments/{id}/model-card serves this object and
// report.html renders the same object (src/reports/model-card/, in the reader's language), so the two cannot disagree.
// Beside each English sentence the card keeps the facts it was made from (codes, counts, column names), which the
// page words in Spanish or English from its catalogs: the sentences here are the JSON card's, not the page's.

export const MODEL_CARD_VERSION = 1;

/** One figure of the card: the metric's plain name, its value and 95% interval (null where not computed). */
export interface CardFigure {
  name: string;
  label: string;
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

/** Plain names; macro averages are labelled as such, never as "sensitivity" (issue 37 item 1). */
const FIGURE_LABELS: Array<[keyof Metrics, string]> = [
  ["auc", "AUC (area under the ROC curve)"],
  ["sensitivity", "Sensitivity (positive class)"],
  ["specificity", "Specificity (positive class)"],
  ["ppv", "PPV (positive predictive value)"],
  ["npv", "NPV (negative predictive value)"],
  ["prevalence", "Prevalence (share of patients in the positive class)"],
  ["accuracy", "Accuracy"],
  ["f_macro", "F1 (macro average over classes)"],
  ["precision", "Precision (macro average over classes)"],
  ["recall", "Recall (macro average over classes)"],
  ["rmse", "RMSE"],
  ["mae", "MAE"],
  ["r2", "R²"],
  ["map50", "mAP@0.5"],
  ["map50_95", "mAP@0.5:0.95"],
];

function figures(metrics: Metrics | undefined): CardFigure[] {
  if (!metrics) return [];
  const out: CardFigure[] = [];
  for (const [name, label] of FIGURE_LABELS) {
    const m = metrics[name];
    if (m) out.push({ name, label, value: m.value, ci_low: m.ci_low, ci_high: m.ci_high });
  }
  return out;
}

/** A Retrospective study of this model, as the card lists it beside the internal figures. */
export interface RetrospectiveInput {
  row: ExperimentRow;
  manifest?: Manifest;
}

export interface ModelCardInput {
  row: ExperimentRow;
  model: ModelRow;
  retrospectives: RetrospectiveInput[];
  generatedAt: Date;
  /** The version's approval (issue 50 item 4, a second pair of eyes); absent: not shown. */
  approval?: ApprovalView;
}

const LIMITATION_INTERNAL_SPLIT =
  "The test patients come from the same source, period and site as the training patients (an internal split): performance on new patients, another period or another site is usually lower than shown here.";
const LIMITATION_RETROSPECTIVE =
  "Before any clinical use, test the model on patients from another period or another site (a Retrospective study in Builder: Test on new data) and compare those figures with these.";
const LIMITATION_RETROSPECTIVE_DONE =
  "Retrospective studies of this model on other data are listed at the end of this card: their figures, not the internal ones, are the better guide to performance on new patients.";
const LIMITATION_THIS_RETROSPECTIVE =
  "These figures are the model's performance on the data of this Retrospective study only; they hold for patients like these (same period, site and way of recording), and say more about new patients the more this data differs from the training data.";
const LIMITATION_ASSOCIATION =
  "The model learns associations in these data; it has not been tested prospectively and does not replace clinical judgement.";

export type LimitationCode = "internal_split" | "retrospective_advised" | "retrospective_done" | "this_retrospective" | "association";
const LIMITATIONS: Record<LimitationCode, string> = {
  internal_split: LIMITATION_INTERNAL_SPLIT,
  retrospective_advised: LIMITATION_RETROSPECTIVE,
  retrospective_done: LIMITATION_RETROSPECTIVE_DONE,
  this_retrospective: LIMITATION_THIS_RETROSPECTIVE,
  association: LIMITATION_ASSOCIATION,
};

export type NotComputedCode = "calibration_slope" | "decision_curve" | "subgroups";
const NOT_COMPUTED: Record<NotComputedCode, string> = {
  calibration_slope: "calibration slope and intercept",
  decision_curve: "a decision curve",
  subgroups: "figures by subgroup (name the columns in the request's subgroup_cols)",
};

/**
 * What watches the model once it serves (issue 49, docs/monitoring.md), from its manifest: the baseline the drift
 * tests compare with, their rules, and the unfamiliar-input check with its calibrated threshold. The results so far
 * are not the model's but its use's: the page adds them from the monitoring figures (src/reports/model-card).
 */
function monitoringPlan(manifest: Manifest) {
  const baseline = baselineOf(manifest);
  const check = manifest.input_check;
  const table = check?.table as { quantile?: number; test_flagged_rate?: number } | undefined;
  const image = check?.image as { quantile?: number; test_flagged_rate?: number } | undefined;
  const rule = table ?? image;
  return {
    baseline: baseline
      ? {
          source: baseline.source,
          patients_or_rows: baseline.n,
          columns: (baseline.columns ?? []).map((c) => c.name),
          score: Boolean(baseline.score),
        }
      : null,
    drift_rules: DRIFT_RULES,
    input_check: check
      ? {
          kind: check.table ? "table" : "image",
          mode: check.mode,
          quantile: typeof rule?.quantile === "number" ? rule.quantile : null,
          test_flagged_rate: typeof rule?.test_flagged_rate === "number" ? rule.test_flagged_rate : null,
        }
      : null,
  };
}

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : null);
const fileName = (zip: unknown) => (typeof zip === "string" ? zip.replace(/^.*\//, "") : null);

/** What the pipeline used to choose the published model, in its own words (report.json's selection reason). */
function modelFamily(manifest: Manifest) {
  const s = (manifest.model_summary ?? {}) as Record<string, unknown>;
  if (manifest.kind === "tabular") {
    const selection = s.selection as { rule?: string } | undefined;
    return {
      family: typeof s.model === "string" ? s.model : null,
      selection_reason: typeof s.selection_reason === "string" ? s.selection_reason : null,
      selection_rule: selection?.rule ?? null,
      validation:
        typeof s.cv_folds === "number"
          ? `${s.cv_folds}-fold patient-grouped cross-validation${typeof s.cv_repeats === "number" && s.cv_repeats > 1 ? `, repeated ${s.cv_repeats} times` : ""}`
          : null,
      candidates_tried: typeof s.trials === "number" ? s.trials : null,
      cross_validation:
        typeof s.cv_folds === "number" ? { folds: s.cv_folds, repeats: typeof s.cv_repeats === "number" ? s.cv_repeats : 1 } : null,
    };
  }
  const members = Array.isArray(s.members) ? (s.members as Array<{ architecture?: string }>) : [];
  const architectures = [...new Set(members.map((m) => m.architecture).filter((a): a is string => typeof a === "string"))];
  const selection = s.selection as { method?: string; rule?: string; validation?: string; plan?: string } | undefined;
  const family = architectures.length
    ? `${members.length > 1 ? `ensemble of ${members.length}: ` : ""}${architectures.join(", ")}`
    : typeof s.model === "string"
      ? s.model
      : null;
  return {
    family,
    // issue 52: the pretrained weights the model was fine-tuned from (name, SHA-256, licence), or null: from scratch
    backbone: backboneUsed(s.backbone),
    selection_reason: selection
      ? [selection.method, selection.rule].filter(Boolean).join(": ")
      : typeof s.selection_reason === "string"
        ? s.selection_reason
        : null,
    selection_rule: selection?.plan ?? null,
    validation: selection?.validation ?? null,
    candidates_tried: Array.isArray(s.trials) ? s.trials.length : null,
    cross_validation: null,
  };
}

function backboneUsed(b: unknown) {
  if (!b || typeof b !== "object" || typeof (b as { name?: unknown }).name !== "string") return null;
  const { name, sha256, licence, source } = b as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  return { name: name as string, sha256: text(sha256), licence: text(licence), source: text(source) };
}

/** 0.00392156862745098 reads as 1/255 (8-bit pixels to 0-1). */
const scaleWords = (scale: number) =>
  Math.abs(scale * 255 - 1) < 1e-9 ? "1/255" : Math.abs(scale * 65535 - 1) < 1e-12 ? "1/65535" : String(scale);

function preprocessing(manifest: Manifest) {
  const image = manifest.input.image;
  if (image) {
    return {
      images: {
        width: image.width,
        height: image.height,
        channels: image.channels,
        resize: image.resize,
        interpolation: image.interpolation,
        scale: image.scale,
        mean: image.mean,
        std: image.std,
      },
      description: `Each image is resized to ${image.width}×${image.height} (${image.resize === "letterbox" ? "aspect ratio kept, padded" : "stretched"}, ${image.interpolation}), read as ${image.channels === 1 ? "grey levels" : "RGB"}, its pixel values scaled by ${scaleWords(image.scale)} and normalised per channel (mean ${image.mean.join(", ")}; standard deviation ${image.std.join(", ")}); the same steps run at prediction time (they travel in the model's manifest).`,
    };
  }
  const columns = manifest.input.columns ?? [];
  const numeric = columns.filter((c) => c.type === "numeric");
  const categorical = columns.filter((c) => c.type === "categorical");
  const withMissing = numeric.filter((c) => c.missing);
  return {
    columns: columns.map((c) => ({ name: c.name, type: c.type, missing_allowed: c.type === "numeric" ? Boolean(c.missing) : undefined })),
    description:
      `${columns.length} input columns (${numeric.length} numeric, ${categorical.length} categorical). Categorical values are coded as the training data wrote them; ` +
      (withMissing.length
        ? `${withMissing.length} numeric column(s) had missing values, which the model takes as missing (not imputed with a made-up number).`
        : "no numeric column had missing values in the training data."),
  };
}

function dataSection(row: ExperimentRow, manifest: Manifest) {
  const request = row.request as Record<string, unknown>;
  const summary = (row.datasetReport as { summary?: DatasetSummary } | null)?.summary ?? {};
  return {
    file_name: fileName(request.zip_gcloud),
    submitted_at: iso(row.createdAt),
    dataset_sha256: manifest.provenance.dataset_sha256,
    inputs: request.task === "vision" ? "images" : "table",
    label_columns: Array.isArray(request.label_cols) ? (request.label_cols as string[]) : [],
    rows: summary.rows ?? null,
    patients: summary.patients ?? null,
    images: summary.images ?? null,
    class_counts: summary.class_counts ?? null,
  };
}

function splitSection(row: ExperimentRow, manifest: Manifest) {
  const whole = (row.request as Record<string, unknown>).task === "vision" ? "all images of a patient" : "all rows of a patient";
  const split = ((row.datasetReport as { summary?: DatasetSummary } | null)?.summary?.split ?? null) as DatasetSummary["split"] | null;
  const from = split?.from_column;
  const request = row.request as Record<string, unknown>;
  if (request.study_type === "Retrospective") {
    return {
      patients: split ? { train: split.train, validation: split.val, test: split.test } : null,
      rows: { train: 0, validation: 0, test: manifest.provenance.split_counts.test },
      method: `a Retrospective study, where every patient is a test patient of the model built in experiment #${String(request.source_experiment_id)}`,
      internal: false,
      how: {
        kind: "retrospective" as const,
        source_experiment_id: Number(request.source_experiment_id),
        column: null,
        seed: null,
        unit: null,
      },
    };
  }
  return {
    patients: split ? { train: split.train, validation: split.val, test: split.test } : null,
    rows: {
      train: manifest.provenance.split_counts.train,
      validation: manifest.provenance.split_counts.val,
      test: manifest.provenance.split_counts.test,
    },
    method: from
      ? `as the team's column '${from}' assigned each patient`
      : `by patient (${whole} in the same part; about 70 % train, 15 % validation, 15 % test, stratified by class), random seed ${manifest.provenance.seed}`,
    internal: true,
    how: from
      ? { kind: "column" as const, column: from, source_experiment_id: null, seed: null, unit: null }
      : {
          kind: "by_patient" as const,
          seed: manifest.provenance.seed,
          unit: request.task === "vision" ? "images" : "rows",
          column: null,
          source_experiment_id: null,
        },
  };
}

export type ModelCard = ReturnType<typeof buildModelCard>;

/** A metric's value and interval as the card prints it, or null where the model has none (or an empty value). */
function interval(m: { value: number | null; ci_low?: number | null; ci_high?: number | null } | undefined) {
  return m && typeof m.value === "number" ? { value: m.value, ci_low: m.ci_low ?? null, ci_high: m.ci_high ?? null } : null;
}

export function buildModelCard({ row, model, retrospectives, generatedAt, approval }: ModelCardInput) {
  const manifest = model.manifest as Manifest;
  const warnings: ResultWarning[] = warningsOf(
    manifest,
    row.datasetReport,
    isInternalSplit(row.request) ? { retrospectiveStudies: retrospectives.length } : undefined,
    true,
  );
  const clinical = manifest.clinical;
  const retroRows = retrospectives.map(({ row: r, manifest: m }) => ({
    experiment_id: r.experimentId,
    name: r.name,
    file_name: fileName((r.request as Record<string, unknown>).zip_gcloud),
    finished_at: iso(r.finishedAt),
    patients: (r.datasetReport as { summary?: DatasetSummary } | null)?.summary?.patients ?? null,
    test: figures(r.metrics ?? m?.metrics.test),
    confusion_matrix: m?.clinical?.confusion_matrix ?? null,
  }));
  const ece = manifest.metrics.test.ece;
  const split = splitSection(row, manifest);
  const limitationCodes: LimitationCode[] = split.internal
    ? ["internal_split", retroRows.length ? "retrospective_done" : "retrospective_advised", "association"]
    : ["this_retrospective", "association"];
  const notComputed: NotComputedCode[] = [
    ...(manifest.metrics.test.calibration_slope ? [] : (["calibration_slope"] as const)),
    ...(clinical?.decision_curve ? [] : (["decision_curve"] as const)),
    ...(clinical?.subgroups?.length ? [] : (["subgroups"] as const)),
  ];
  const calibrationMethod = ((manifest.model_summary ?? {}) as { calibration?: unknown }).calibration;
  return {
    card_version: MODEL_CARD_VERSION,
    experiment_id: row.experimentId,
    title: row.name ?? `Experiment #${row.experimentId}`,
    description: row.description,
    model_version: model.version,
    generated_at: generatedAt.toISOString(),
    guideline: "TRIPOD+AI (2024): items on intended use, data, participants, outcome, model, performance and limitations",
    intended_use: { text: row.intendedUse ?? null, written_by: "the team (PATCH /v1/experiments/{id} intended_use)" },
    // Who approved this version for use, when and for what; null where the workspace asks for none and none was given.
    approval:
      approval && (approval.required || approval.approved)
        ? {
            required: approval.required,
            approved: approval.approved,
            approved_by: approval.approved_by,
            former_member: approval.former_member,
            approved_at: approval.approved_at ? approval.approved_at.toISOString() : null,
            intended_use: approval.intended_use,
          }
        : null,
    data: dataSection(row, manifest),
    split,
    preprocessing: preprocessing(manifest),
    model: {
      kind: manifest.kind,
      problem: manifest.problem,
      ...modelFamily(manifest),
      selection_metric: manifest.metric,
      built_at: iso(manifest.provenance.created_at),
      training_time_s: manifest.provenance.time_taken_s,
      code_version: manifest.provenance.code_version,
      classes: manifest.classes.map((c) => c.name),
    },
    performance: {
      set: "test" as const,
      positive_class: clinical?.positive_class ?? null,
      operating_point: manifest.thresholds
        ? {
            thresholds: manifest.thresholds,
            // Binary: serving calls class 1 when its score reaches thresholds[1] (src/serving/postprocess.ts).
            decision:
              manifest.problem === "binary" && manifest.classes[1]
                ? { class: manifest.classes[1].name, score_at_least: manifest.thresholds[1] }
                : null,
            rule: manifest.threshold_rule ?? null,
            chosen_on: "validation (never the test set)",
            // Set when this version was published by saving an operating point (POST /v1/models/{id}/operating-point).
            saved: savedOperatingPoint(manifest, model.version),
          }
        : null,
      test: figures(manifest.metrics.test),
      validation: figures(manifest.metrics.validation),
      confusion_matrix: clinical?.confusion_matrix ?? null,
      test_patients_per_class: clinical?.test_patients_per_class ?? null,
      intervals: "95% intervals from a bootstrap over test patients (all of a patient's rows drawn together)",
    },
    calibration: {
      ece: ece ? { value: ece.value, ci_low: ece.ci_low, ci_high: ece.ci_high } : null,
      method: typeof calibrationMethod === "string" ? calibrationMethod : null,
      figure: manifest.figures.find((f) => /calibration/i.test(f.name))?.name ?? null,
      slope: interval(manifest.metrics.test.calibration_slope),
      intercept: interval(manifest.metrics.test.calibration_intercept),
      decision_curve: clinical?.decision_curve
        ? (manifest.figures.find((f) => f.name === "decision_curve")?.name ?? "decision_curve")
        : null,
      // What Builder does not compute for this model: said, not left for the reader to wonder about.
      not_yet: notComputed.map((c) => NOT_COMPUTED[c]),
      not_computed: notComputed,
    },
    subgroups: clinical?.subgroups?.length ? clinical.subgroups : null,
    monitoring: monitoringPlan(manifest),
    warnings: warnings.map(({ code, severity, title, message }) => ({ code, severity, title, message })),
    // What each warning's message says in numbers and names, for the page to word it in the reader's language.
    warning_facts: Object.fromEntries(warnings.map((w) => [w.code, w.facts ?? {}])) as Partial<Record<WarningCode, WarningFacts>>,
    limitations: limitationCodes.map((c) => LIMITATIONS[c]),
    limitation_codes: limitationCodes,
    retrospective: retroRows,
  };
}

/** The saved operating point this version carries (rule, target, threshold, when), or null for a pipeline's own. */
function savedOperatingPoint(manifest: Manifest, version: number) {
  const op = (
    manifest as Manifest & {
      operating_point?: { rule: string; target: number | null; threshold: number; from_version: number; created_at: string };
    }
  ).operating_point;
  return op
    ? { version, rule: op.rule, target: op.target, threshold: op.threshold, from_version: op.from_version, saved_at: op.created_at }
    : null;
}
