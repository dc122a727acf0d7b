import type { ClinicalSection, Manifest, MetricValue } from "../contract/types.js";

// Warnings that stop a reader trusting a result more than its test set allows. Computed here and only here, from what
// the pipeline stored (the manifest's metrics and its `clinical` facts) and the dataset report: GET /v1/experiments/{id},
// the dashboard's badge and verdict box, and the chat all read this list. docs/metrics.md ("Warnings") states each rule;
// change both together.

export type WarningSeverity = "severe" | "caution" | "info";
export type WarningCode =
  | "no_better_than_chance"
  | "test_set_too_small"
  | "overfitting"
  | "poor_calibration"
  | "class_imbalance"
  | "perfect_score_check_leakage"
  | "subgroup_worse"
  | "internal_test_only";
export interface ResultWarning {
  code: WarningCode;
  severity: WarningSeverity;
  /** A few words for a badge ("not better than chance"). */
  title: string;
  /** Plain words for a clinician: what was seen, what it means, what to do. */
  message: string;
  /** The figures and names the message was made from, for a page that words it in another language (the model card). */
  facts?: WarningFacts;
}

/** Per warning, what its message says in numbers and names (no patient data: counts, figures, class and column names). */
export interface WarningFacts {
  auc?: { value: number; low: number; high: number };
  perfect_auc?: number;
  leaking_column?: { name: string; auc: number };
  few_per_class?: Array<{ class: string; patients: number }>;
  regression_patients?: number;
  flat?: Array<{ metric: string; value: number }>;
  overfit?: { metric: string; validation: number; test: number; lower_is_better: boolean };
  ece?: number;
  worse_groups?: Array<{ column: string; label: string; auc: number | null; low: number | null; high: number | null; rest: number | null }>;
  rare?: { class: string; rows: number; total: number };
  retrospective_studies?: number;
}

/** The thresholds of the rules below (docs/metrics.md repeats them). */
export const RULES = {
  /** Fewer test patients than this in a class: its figures rest on too few people. */
  minTestPatientsPerClass: 10,
  /** Regression: fewer test patients than this in all. */
  minTestPatientsRegression: 20,
  /** Validation figure above the test figure by more than this (AUC, F1, precision, recall). */
  overfitGap: 0.1,
  /** Regression: test RMSE above validation RMSE times this. */
  overfitRmseRatio: 1.5,
  /** Expected calibration error above this. */
  maxEce: 0.1,
  /** The rarest class below this share of the labelled rows. */
  minClassShare: 0.1,
  /** Test AUC at or above this counts as perfect. */
  perfectAuc: 0.999,
  /** One feature alone separating the classes this well (training rows). */
  leakingFeatureAuc: 0.99,
};

export interface WarningInputs {
  problem: Manifest["problem"];
  /** The selection metric (the manifest's metric). */
  metric?: string;
  test: Partial<Record<string, MetricValue>>;
  validation?: Partial<Record<string, MetricValue>>;
  clinical?: ClinicalSection;
  /** The dataset report's class counts of the label column (every row). */
  classCounts?: Record<string, number>;
  /** Test patients in all (the dataset report's split). */
  testPatients?: number;
  /**
   * Set for a Builder study, whose test patients are an internal split of the training data (absent for a Retrospective
   * study, whose data is new to the model): with the count of ready Retrospective studies of its model, when known.
   */
  internalSplit?: { retrospectiveStudies?: number };
}

const f = (v: number | null | undefined, digits = 2) => (typeof v === "number" ? v.toFixed(digits) : "?");
const METRIC_WORDS: Record<string, string> = {
  auc: "AUC",
  f_macro: "F1 (macro average)",
  precision: "precision (macro average)",
  recall: "recall (macro average)",
  rmse: "RMSE",
  r2: "R²",
  sensitivity: "sensitivity",
  specificity: "specificity",
  ppv: "PPV",
  npv: "NPV",
  map50: "mAP@0.5",
};

/** The warnings of a result, in English (what the API, the dashboard and the chat show). */
export function resultWarnings(x: WarningInputs): ResultWarning[] {
  return warningsWithFacts(x).map(({ facts: _facts, ...w }) => w);
}

/** The same warnings, each with its facts (the model card words them in the reader's language). */
export function warningsWithFacts(x: WarningInputs): ResultWarning[] {
  const out: ResultWarning[] = [];
  const classification = x.problem === "binary" || x.problem === "multiclass" || x.problem === "multilabel";
  const auc = x.test.auc;
  if (classification && auc && typeof auc.value === "number") {
    const low = auc.ci_low ?? auc.value;
    const high = auc.ci_high ?? auc.value;
    if (low <= 0.5) {
      out.push({
        code: "no_better_than_chance",
        severity: "severe",
        title: "not better than chance",
        facts: { auc: { value: auc.value, low, high } },
        message: `On the test patients the AUC is ${f(auc.value)}, and its 95% interval (${f(low)} to ${f(high)}) includes 0.5, the score of a coin toss: this model is not shown to tell the classes apart better than chance. Do not use it for decisions; more patients, better labels or other inputs are needed.`,
      });
    }
    const leak = x.clinical?.strongest_feature;
    if (auc.value >= RULES.perfectAuc || (leak && leak.auc >= RULES.leakingFeatureAuc)) {
      const why =
        auc.value >= RULES.perfectAuc ? `The test AUC is ${f(auc.value, 3)}: a perfect separation, which is rare in medicine.` : "";
      const col =
        leak && leak.auc >= RULES.leakingFeatureAuc
          ? ` The column '${leak.name}' alone separates the classes (AUC ${f(leak.auc, 3)} on the training rows).`
          : "";
      out.push({
        code: "perfect_score_check_leakage",
        severity: "severe",
        title: "check for leakage",
        facts: {
          ...(auc.value >= RULES.perfectAuc ? { perfect_auc: auc.value } : {}),
          ...(leak && leak.auc >= RULES.leakingFeatureAuc ? { leaking_column: { name: leak.name, auc: leak.auc } } : {}),
        },
        message:
          `${why}${col} Before trusting it, check that no column gives the answer away (a diagnosis or treatment code, a result known only after the diagnosis, an identifier that encodes the group) and that images of one patient are not in both training and test. If the task really is this easy, confirm it on patients from another site or period.`.trim(),
      });
    }
  }
  const small = smallTest(x, classification);
  if (small)
    out.push({ code: "test_set_too_small", severity: "caution", title: "small test set", message: small.message, facts: small.facts });
  const overfit = overfitting(x);
  if (overfit) out.push({ code: "overfitting", severity: "caution", title: "overfitting", message: overfit.message, facts: overfit.facts });
  const ece = x.test.ece?.value;
  if (classification && typeof ece === "number" && ece > RULES.maxEce) {
    out.push({
      code: "poor_calibration",
      severity: "caution",
      title: "poorly calibrated",
      facts: { ece },
      message: `The model's probabilities are off by about ${Math.round(ece * 100)} percentage points on average (expected calibration error ${f(ece)}): a score of 0.8 does not mean an 80% chance. Read the scores as a ranking, not as a patient's risk.`,
    });
  }
  const worse = subgroupWorse(x);
  if (worse)
    out.push({ code: "subgroup_worse", severity: "caution", title: "worse in a subgroup", message: worse.message, facts: worse.facts });
  const imbalance = classImbalance(x, classification);
  if (imbalance)
    out.push({ code: "class_imbalance", severity: "info", title: "rare class", message: imbalance.message, facts: imbalance.facts });
  if (x.internalSplit)
    out.push({
      code: "internal_test_only",
      severity: "info",
      title: "internal test only",
      message: internalTestOnly(x.internalSplit),
      facts: { retrospective_studies: x.internalSplit.retrospectiveStudies ?? 0 },
    });
  return out;
}

/** Every internal split overstates performance on new patients; a clinician must hear it where the figures are. */
function internalTestOnly({ retrospectiveStudies }: { retrospectiveStudies?: number }): string {
  const what =
    "These figures come from test patients of the same source, period and site as the training patients (an internal split). On the next patients, from another period, another scanner or setting, another site or another mix of cases, models usually do worse than this, sometimes much worse.";
  if (retrospectiveStudies)
    return `${what} ${retrospectiveStudies === 1 ? "One Retrospective study" : `${retrospectiveStudies} Retrospective studies`} of this model on other data ${retrospectiveStudies === 1 ? "is" : "are"} shown beside these figures: ${retrospectiveStudies === 1 ? "its figures are" : "their figures are"} the better guide to how it will do on new patients.`;
  return `${what} Before relying on the model for patients, test it on data from another period or site with a Retrospective study (Test on new data) and compare those figures with these.`;
}

type Worded = { message: string; facts: WarningFacts } | undefined;

function smallTest(x: WarningInputs, classification: boolean): Worded {
  const parts: string[] = [];
  const facts: WarningFacts = {};
  if (classification && x.clinical) {
    const few = Object.entries(x.clinical.test_patients_per_class).filter(([, n]) => n < RULES.minTestPatientsPerClass);
    if (few.length) facts.few_per_class = few.map(([c, n]) => ({ class: c, patients: n }));
    if (few.length)
      parts.push(
        `The test set holds only ${few.map(([c, n]) => `${n} patient${n === 1 ? "" : "s"} with '${c}'`).join(" and ")}; one patient more or less judged right moves the figures a long way.`,
      );
  } else if (!classification && typeof x.testPatients === "number" && x.testPatients < RULES.minTestPatientsRegression) {
    facts.regression_patients = x.testPatients;
    parts.push(`The test set holds only ${x.testPatients} patients; its figures could move a long way with a few patients more.`);
  }
  const flat = (["auc", "sensitivity", "specificity", "ppv", "npv", "rmse", "r2"] as const).filter((n) => {
    const m = x.test[n];
    return m && typeof m.ci_low === "number" && m.ci_low === m.ci_high;
  });
  if (flat.length) {
    facts.flat = flat.map((n) => ({ metric: n, value: x.test[n]!.ci_low! }));
    // Each flat figure with its own value: "sensitivity 1.000, specificity 0.000", not the first one's for all.
    const named = flat.map((n) => `${METRIC_WORDS[n] ?? n} (${f(x.test[n]!.ci_low, 3)})`);
    parts.push(
      `The 95% ${flat.length === 1 ? "interval" : "intervals"} of ${named.join(", ")} ${flat.length === 1 ? "has" : "have"} no width: every resample of the test patients gave the same figure. That does not mean certainty; it means the test set is too small or too easy to show the uncertainty, which is larger than shown.`,
    );
  }
  return parts.length ? { message: parts.join(" "), facts } : undefined;
}

function overfitting(x: WarningInputs): Worded {
  const name = x.metric;
  if (!name || !x.validation) return undefined;
  const val = x.validation[name]?.value;
  const test = x.test[name]?.value;
  if (typeof val !== "number" || typeof test !== "number") return undefined;
  const words = METRIC_WORDS[name] ?? name;
  if (name === "rmse" ? test > val * RULES.overfitRmseRatio : val - test > RULES.overfitGap) {
    return {
      message: `The validation ${words} (${f(val)}) is much ${name === "rmse" ? "better" : "higher"} than on the test patients (${f(test)}): the model was tuned to the patients it was chosen on and does worse on new ones. Expect figures near the test ones, or below, in practice.`,
      facts: { overfit: { metric: name, validation: val, test, lower_is_better: name === "rmse" } },
    };
  }
  return undefined;
}

/** The groups the pipeline flagged worse: their AUC interval lies wholly below the rest of the test set's AUC. */
export function worseSubgroups(clinical: ClinicalSection | undefined) {
  return (clinical?.subgroups ?? []).flatMap((c) => c.groups.filter((g) => g.flag === "worse").map((g) => ({ column: c.column, ...g })));
}

function subgroupWorse(x: WarningInputs): Worded {
  const worse = worseSubgroups(x.clinical);
  if (!worse.length) return undefined;
  const each = worse
    .map(
      (g) =>
        `${g.column} ${g.label} (AUC ${f(g.auc?.value)}, 95% interval ${f(g.auc?.ci_low)} to ${f(g.auc?.ci_high)}, against ${f(g.rest_auc)} for the other test patients)`,
    )
    .join("; ");
  const groups = worse.map((g) => ({
    column: g.column,
    label: g.label,
    auc: g.auc?.value ?? null,
    low: g.auc?.ci_low ?? null,
    high: g.auc?.ci_high ?? null,
    rest: g.rest_auc ?? null,
  }));
  return {
    message: `The model does clearly worse for ${worse.length === 1 ? "one group" : `${worse.length} groups`} of test patients: ${each}. The whole interval lies below the rest, so this is unlikely to be chance alone. Check these patients (their data, labels, scanner or site) before relying on the model for them, and say so in the model card.`,
    facts: { worse_groups: groups },
  };
}

function classImbalance(x: WarningInputs, classification: boolean): Worded {
  if (!classification || x.problem === "multilabel" || !x.classCounts) return undefined;
  const entries = Object.entries(x.classCounts);
  const total = entries.reduce((s, [, n]) => s + n, 0);
  if (entries.length < 2 || total === 0) return undefined;
  const [rare, n] = entries.reduce((a, b) => (b[1] < a[1] ? b : a));
  if (n / total >= RULES.minClassShare) return undefined;
  return {
    message: `Only ${Math.round((n / total) * 1000) / 10}% of the rows (${n} of ${total}) have '${rare}'. Accuracy can look high by rarely predicting it: judge the model on sensitivity and PPV for '${rare}', and on their intervals.`,
    facts: { rare: { class: rare, rows: n, total } },
  };
}

/** Whether an experiment's test patients are an internal split of its own data (a Builder study, not a Retrospective one). */
export function isInternalSplit(request: unknown): boolean {
  return (request as { study_type?: unknown } | null)?.study_type !== "Retrospective";
}

/**
 * The warnings of a stored experiment: its model's manifest (metrics, clinical facts) and its dataset report; `internalSplit`
 * for a Builder study (isInternalSplit), with the count of its model's ready Retrospective studies when the caller has it.
 */
export function warningsOf(
  manifest: unknown,
  datasetReport: unknown,
  internalSplit?: WarningInputs["internalSplit"],
  withFacts = false,
): ResultWarning[] {
  const m = manifest as Partial<Manifest> | undefined;
  if (!m?.metrics?.test || !m.problem) return [];
  const summary = (
    datasetReport as { summary?: { class_counts?: Record<string, Record<string, number>>; split?: { test?: number } } } | null
  )?.summary;
  const counts = summary?.class_counts ? Object.values(summary.class_counts)[0] : undefined;
  return (withFacts ? warningsWithFacts : resultWarnings)({
    problem: m.problem,
    metric: m.metric,
    test: m.metrics.test,
    validation: m.metrics.validation,
    clinical: m.clinical,
    classCounts: counts,
    testPatients: summary?.split?.test,
    internalSplit,
  });
}
