import type { ExperimentFacts, MetricValue } from "../facts.js";
import type { modelFacts } from "../facts.js";
import type { Glossary } from "../glossary.js";
import { quote } from "../safety.js";
import { LOWER_IS_BETTER } from "../tools.js";

// Reply templates of the builtin assistant. Every number, id and code comes from the facts passed in;
// text from user data (column, class and file names, dataset messages) goes through quote().

const LABELS: Record<string, string> = {
  auc: "AUC",
  f_macro: "F-macro",
  precision: "Precision",
  recall: "Recall",
  accuracy: "Accuracy",
  ece: "ECE",
  mae: "MAE",
  rmse: "RMSE",
  r2: "R²",
  map50: "mAP@0.5",
  map50_95: "mAP@0.5:0.95",
  sensitivity: "Sensitivity",
  specificity: "Specificity",
  ppv: "PPV",
  npv: "NPV",
  prevalence: "Prevalence",
  calibration_slope: "Calibration slope",
  calibration_intercept: "Calibration intercept",
};
export const metricLabel = (name: string) => LABELS[name] ?? name;
export const num = (v: number | null | undefined) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(3) : "n/a");
export const interval = (m: MetricValue) =>
  m.ci_low !== null && m.ci_high !== null ? ` (95% CI ${num(m.ci_low)}–${num(m.ci_high)})` : " (no interval)";
export const metricLine = (name: string, m: MetricValue) => `${metricLabel(name)} ${num(m.value)}${interval(m)}`;

/** Failure reasons and dataset messages quote user data (column names, file names): shown only inside a code span. */
export const REASON_MAX = 300;
export const quotedReason = (reason: string | null) => (reason ? quote(reason, REASON_MAX) : "no reason was recorded");
const reasonOf = (f: ExperimentFacts) => quotedReason(f.failure_reason);

const TASK_WORDS = { data: "tabular", vision: "image", detection: "object-detection" } as const;

function datasetLine(f: ExperimentFacts): string | undefined {
  const d = f.dataset;
  const parts: string[] = [];
  if (d.rows !== null) parts.push(`${d.rows} rows`);
  if (d.patients !== null) parts.push(`${d.patients} patients`);
  if (d.images !== null) parts.push(`${d.images} images`);
  if (d.boxes !== null) parts.push(`${d.boxes} boxes`);
  if (d.class_counts) {
    for (const [col, counts] of Object.entries(d.class_counts).slice(0, 3)) {
      parts.push(
        `classes in ${quote(col, 40)}: ${Object.entries(counts)
          .slice(0, 12)
          .map(([k, n]) => `${quote(k, 40)} ${n}`)
          .join(", ")}`,
      );
    }
  }
  if (d.split)
    parts.push(
      `split by patient: ${d.split.train} train / ${d.split.val} validation / ${d.split.test} test${d.split.from_column ? ` (from column ${quote(d.split.from_column, 40)})` : ""}`,
    );
  return parts.length ? `Dataset ${d.zip_gcloud ? quote(d.zip_gcloud, 120) : ""}: ${parts.join("; ")}.` : undefined;
}

function trustNote(f: ExperimentFacts): string | undefined {
  // The warnings (src/experiments/warnings.ts) come first: a severe one means no interval should be read as reassurance.
  const severe = f.warnings.filter((w) => w.severity === "severe");
  if (severe.length) {
    return `Can you trust it? Not as it is: ${severe.map((w) => `${w.title} (${w.code})`).join("; ")}. The result page's verdict box explains why and what to check. This is an internal validation on your own data, not a clinical validation.`;
  }
  const main =
    f.model_type === "regression"
      ? "r2"
      : f.task === "detection"
        ? "map50"
        : f.optimization_metric
          ? ({ AUC: "auc", "F-macro": "f_macro", Precision: "precision", Recall: "recall" } as Record<string, string>)[
              f.optimization_metric
            ]
          : undefined;
  const name = main && f.metrics[main] ? main : Object.keys(f.metrics)[0];
  const m = name ? f.metrics[name] : undefined;
  if (!m || m.ci_low === null || m.ci_high === null) return undefined;
  const width = m.ci_high - m.ci_low;
  const reliable = LOWER_IS_BETTER.has(name)
    ? `read ${num(m.ci_high)} as the error it reliably stays under`
    : `read ${num(m.ci_low)} as what it reliably reaches`;
  const tests = f.dataset.split?.test;
  const size = tests ? ` on ${tests} held-out test patients` : " on the held-out test patients";
  const verdict =
    width > 0.2
      ? "The interval is wide, so the estimate is uncertain: more patients would narrow it."
      : width > 0.1
        ? "The interval is moderately wide."
        : "The interval is narrow.";
  return `Can you trust it? ${metricLabel(name)} was measured${size}; with 95% confidence it lies between ${num(m.ci_low)} and ${num(m.ci_high)}, so ${reliable}. ${verdict} This is an internal validation on your own data, not a clinical validation.`;
}

/** The direct answer first when the question named a metric or the thresholds; the full report follows. */
export function leadLine(
  f: ExperimentFacts,
  ask: { metric?: string; thresholds?: boolean; perClass?: boolean; className?: string },
): string | undefined {
  if (ask.perClass || ask.className) {
    const names = ask.metric ? [ask.metric] : Object.keys(f.per_class);
    const lines = names
      .filter((n) => f.per_class[n])
      .map((n) => {
        const entries = Object.entries(f.per_class[n]).filter(([c]) => !ask.className || c === ask.className);
        return `- ${metricLabel(n)}: ${entries.map(([c, m]) => `${quote(c, 40)} ${num(m.value)}${interval(m)}`).join("; ")}`;
      });
    if (lines.length)
      return [
        `Experiment ${f.experiment_id} per class${ask.className ? ` (${quote(ask.className, 40)})` : ""}, on the held-out test patients:`,
        ...lines,
      ].join("\n");
    if (!ask.metric) return `Experiment ${f.experiment_id} has no per-class metrics.`;
  }
  if (ask.metric) {
    const m = f.metrics[ask.metric];
    const tests = f.dataset.split?.test ? ` on ${f.dataset.split.test} held-out test patients` : "";
    return m
      ? `Experiment ${f.experiment_id}'s ${metricLine(ask.metric, m)}${tests}.`
      : `Experiment ${f.experiment_id} has no ${metricLabel(ask.metric)} test metric${Object.keys(f.metrics).length ? ` (it has ${Object.keys(f.metrics).map(metricLabel).join(", ")})` : ""}.`;
  }
  if (ask.thresholds)
    return f.thresholds
      ? `Experiment ${f.experiment_id}'s decision thresholds (one per class, applied to the scores by /predict): ${f.thresholds.map(num).join(", ")}${f.threshold_rule ? `, chosen by ${f.threshold_rule}` : ""}.`
      : `Experiment ${f.experiment_id} has no decision thresholds${f.model ? " (its problem type uses none)" : " (no published model yet)"}.`;
  return undefined;
}

export function experimentReport(f: ExperimentFacts): string {
  const kind = `${TASK_WORDS[f.task]} ${f.task === "detection" ? "model" : f.model_type}`;
  // Regression requests still carry optimization_metric (the seed's contract requires it) but nothing uses it.
  const optimising = f.optimization_metric && f.model_type !== "regression" ? `, optimising ${f.optimization_metric}` : "";
  const lines = [`Experiment ${f.experiment_id} (${kind}, ${f.study_type} study${optimising}) is **${f.status}**.`];
  if (f.status === "failed") lines.push(`It failed: ${reasonOf(f)}.`);
  if (f.status === "invalid_dataset") lines.push(refusedSummary(f));
  const p = f.progress;
  if (!["ready", "failed", "invalid_dataset", "cancelled"].includes(f.status) && p) {
    lines.push(
      `Progress: ${Math.round((p.fraction ?? 0) * 100)}% (stage ${p.stage ?? f.status}${p.eta_s ? `, about ${Math.round(p.eta_s)} s left` : ""}).`,
    );
  }
  const names = Object.keys(f.metrics);
  if (names.length) {
    lines.push(`Test metrics (95% confidence intervals from a bootstrap over test patients):`);
    for (const n of names) lines.push(`- ${metricLine(n, f.metrics[n])}`);
  }
  if (f.thresholds)
    lines.push(`Decision thresholds: ${f.thresholds.map(num).join(", ")}${f.threshold_rule ? ` (${f.threshold_rule})` : ""}.`);
  if (f.classes && f.model_type !== "regression")
    lines.push(
      `Classes: ${Object.entries(f.classes)
        .map(([i, n]) => `${i} = ${quote(n, 40)}`)
        .join(", ")}.`,
    );
  const ds = datasetLine(f);
  if (ds) lines.push(ds);
  if (f.status === "ready") {
    const t = trustNote(f);
    if (t) lines.push(t);
    const others = f.warnings.filter((w) => w.severity !== "severe");
    if (others.length) lines.push(`Warnings: ${others.map((w) => `${w.title} (${w.code})`).join("; ")}; the result page explains each.`);
    const worse = f.worse_subgroups ?? [];
    if (worse.length)
      lines.push(
        `Subgroups: the model does clearly worse for ${worse
          .slice(0, 3)
          .map(
            (g) =>
              `${quote(g.column, 40)} ${quote(g.label, 40)} (AUC ${num(g.auc?.value)}, 95% CI ${num(g.auc?.ci_low)}–${num(g.auc?.ci_high)}, against ${num(g.rest_auc)} for the other test patients)`,
          )
          .join("; ")}${worse.length > 3 ? ` and ${worse.length - 3} more` : ""}; see Subgroups on the result page.`,
      );
  }
  if (f.model)
    lines.push(`Model version ${f.model.version} is published: ask me "how do I call predict for experiment ${f.experiment_id}".`);
  if (f.history.length)
    lines.push(
      `History: ${f.history.map((h) => h.status).join(" → ")}${f.finished_at ? `, finished ${new Date(f.finished_at).toISOString()}` : ""}.`,
    );
  return lines.join("\n");
}

export function refusedSummary(f: ExperimentFacts, glossary?: Glossary): string {
  const errs = f.problems.errors;
  const count = new Set(errs.map((e) => e.code)).size;
  const lines = [
    `Its dataset was refused: ${errs.length + f.problems.errors_omitted} error${errs.length === 1 ? "" : "s"} of ${count} kind${count === 1 ? "" : "s"}${f.failure_reason ? ` (${quote(f.failure_reason, REASON_MAX)})` : ""}.`,
  ];
  for (const e of errs.slice(0, 8)) {
    const where = [e.row ? `row ${e.row}` : "", e.column ? `column ${quote(e.column, 60)}` : "", e.path ? `path ${quote(e.path, 80)}` : ""]
      .filter(Boolean)
      .join(", ");
    const meaning = glossary?.codes.get(e.code)?.meaning;
    lines.push(`- ${quote(e.code, 60)}${where ? ` (${where})` : ""}: ${quote(e.message, 240)}${meaning ? ` — ${meaning}` : ""}`);
  }
  if (f.problems.errors_omitted) lines.push(`…and ${f.problems.errors_omitted} more.`);
  lines.push(
    "Fix these in the CSV or the zip, upload it again and start a new experiment; `POST /v1/datasets/validate` checks a zip without training.",
  );
  return lines.join("\n");
}

export function refusedReport(f: ExperimentFacts, glossary: Glossary): string {
  if (f.status === "invalid_dataset") return `Experiment ${f.experiment_id} is **invalid_dataset**. ${refusedSummary(f, glossary)}`;
  if (f.status === "failed")
    return `Experiment ${f.experiment_id} **failed**: ${reasonOf(f)}. Its dataset passed the checks${f.dataset.rows !== null ? ` (${f.dataset.rows} rows)` : ""}; the failure came later, in ${f.history.at(-2)?.status ?? "the job"}.`;
  return `Experiment ${f.experiment_id} was not refused: it is **${f.status}**.\n${experimentReport(f)}`;
}

export function modelHowto(m: ReturnType<typeof modelFacts>): string {
  const lines = [
    `Experiment ${m.experiment_id}'s model (version ${m.version}, ${m.kind}, ${m.problem}) answers at \`POST /v1/experiments/${m.experiment_id}/predict\`.`,
  ];
  const cols = m.inputs.columns;
  const image = m.inputs.image;
  if (cols) {
    lines.push(
      `Send \`message\`: an array of ${cols.length} numbers in this order (data_cols): ${cols.map((c) => quote(c.name, 200)).join(", ")}.`,
    );
    for (const c of cols.filter((c) => c.categories !== undefined)) {
      lines.push(
        `- ${quote(c.name, 60)} is categorical (${c.categories} values): send the value as written in your CSV, or its code 0..${c.categories! - 1} (codes follow the sorted values)`,
      );
    }
  } else if (image) {
    lines.push(
      `Send \`message\`: ${m.inputs.message}. The model sees it resized to ${image.width}×${image.height} (${image.channels} channel${image.channels === 1 ? "" : "s"}).`,
    );
  }
  lines.push(
    `Classes: ${Object.entries(m.classes)
      .map(([i, n]) => `${i} = ${quote(n, 40)}`)
      .join(", ")}.${m.thresholds ? ` Thresholds: ${m.thresholds.map(num).join(", ")}.` : ""}`,
  );
  lines.push("Ready to run (replace $KEY with your API key):", "```sh", m.predict_example, "```");
  lines.push(`The answer (201) carries ${m.answer_fields.map((f) => `\`${f}\``).join(", ")}.`);
  return lines.join("\n");
}

export const CAPABILITIES = [
  "I answer from your own experiments, datasets and models and from Builder's documentation. Ask me, for example:",
  '- "list my experiments" (or "my failed experiments", "my image experiments")',
  '- "how is experiment 42 doing?" — status, test metrics with 95% intervals, thresholds, dataset summary',
  '- "why was experiment 7 refused?" — the dataset problems with rows, columns and what each code means',
  '- "which of my models is best for recall?" — a ranking on any metric',
  '- "how do I call predict for experiment 42?" — the inputs and a ready-to-run curl',
  '- "what does F-macro mean?", "what is class_too_small?" — metrics and error codes',
].join("\n");
