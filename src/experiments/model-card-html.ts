import type { CardFigure, ModelCard } from "./model-card.js";

// report.html: the model card as one printable page. Self-contained (inline CSS, no script, no image fetched), so
// a team can save it, print it to PDF or attach it to a submission. Every text that a user or a dataset wrote
// (name, description, intended use, file, column and class names) goes through esc(); numbers are formatted here.

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const esc = (v: string | number | null | undefined): string => String(v ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c]);

const num = (v: number | null | undefined, digits = 3) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(digits) : "–");
const count = (v: number | null | undefined) => (typeof v === "number" ? v.toLocaleString("en-US") : "–");
const date = (v: string | null | undefined) => (v ? v.slice(0, 10) : "–");
const para = (text: string) => esc(text).replace(/\r?\n/g, "<br>");

function backboneWords(b: ModelCard["model"]["backbone"]): string {
  if (!b) return "none: trained from scratch";
  return `${esc(b.name)} <span class="muted">(SHA-256 ${esc(b.sha256 ?? "–")}; licence: ${esc(b.licence ?? "not stated")}; source: ${esc(b.source ?? "not stated")})</span>`;
}

function figureRows(rows: CardFigure[]): string {
  if (!rows.length) return `<p class="muted">No figures were stored for this set.</p>`;
  const body = rows
    .map(
      (f) =>
        `<tr><th scope="row">${esc(f.label)}</th><td class="n">${num(f.value)}</td><td class="n">${f.ci_low === null && f.ci_high === null ? "–" : `${num(f.ci_low)} – ${num(f.ci_high)}`}</td></tr>`,
    )
    .join("");
  return `<table><thead><tr><th scope="col">Figure</th><th scope="col" class="n">Value</th><th scope="col" class="n">95% interval</th></tr></thead><tbody>${body}</tbody></table>`;
}

function confusion(cm: ModelCard["performance"]["confusion_matrix"]): string {
  if (!cm?.counts) return "";
  const head = cm.labels.map((l) => `<th scope="col" class="n">${esc(l)}</th>`).join("");
  const body = cm.counts
    .map((row, i) => {
      const total = row.reduce((a, b) => a + b, 0);
      const cells = row
        .map(
          (c, j) =>
            `<td class="n${i === j ? " diag" : ""}">${count(c)} <span class="pct">(${total ? Math.round((100 * c) / total) : 0}%)</span></td>`,
        )
        .join("");
      return `<tr><th scope="row">${esc(cm.labels[i])}</th>${cells}<td class="n">${count(total)}</td></tr>`;
    })
    .join("");
  return `<table class="cm"><caption>Confusion matrix on the test set: rows are the true class, columns the predicted class; percentages are of the row</caption><thead><tr><th scope="col">True \\ Predicted</th>${head}<th scope="col" class="n">Total</th></tr></thead><tbody>${body}</tbody></table>`;
}

const SUBGROUP_FLAG_WORDS = { worse: "clearly worse than the rest", too_small: "too few patients for figures" } as const;

/** One table per subgroup column: counts, figures with intervals and the flag in words (docs/metrics.md, Subgroups). */
function subgroupTables(columns: NonNullable<ModelCard["subgroups"]>): string {
  const cell = (m: { value: number | null; ci_low: number | null; ci_high: number | null } | null) =>
    m ? `${num(m.value, 2)} <span class="pct">(${num(m.ci_low, 2)} – ${num(m.ci_high, 2)})</span>` : "–";
  return `<p>Figures on the test patients of each group, at the operating point above, with 95% intervals. A group is clearly worse when its whole AUC interval lies below the AUC of the other test patients; groups with under 20 patients (or under 5 of a class) get no figures.</p>${columns
    .map((c) => {
      if (c.skipped) return `<p><b>${esc(c.column)}</b>: not grouped (${esc(c.skipped)}).</p>`;
      const how = c.kind === "quartiles" ? "quartiles of the test patients" : c.kind === "bins" ? "the requested cut points" : "categories";
      const rows = c.groups
        .map(
          (g) =>
            `<tr${g.flag === "worse" ? ' class="worse"' : ""}><th scope="row">${esc(g.label)}</th><td class="n">${count(g.patients)}</td><td class="n">${g.prevalence === null ? "–" : `${Math.round(g.prevalence * 100)}%`}</td><td class="n">${cell(g.auc)}</td><td class="n">${cell(g.sensitivity)}</td><td class="n">${cell(g.specificity)}</td><td>${g.flag ? esc(SUBGROUP_FLAG_WORDS[g.flag]) : ""}</td></tr>`,
        )
        .join("");
      return `<table class="sg"><caption>${esc(c.column)} (${how})</caption><thead><tr><th scope="col">Group</th><th scope="col" class="n">Patients</th><th scope="col" class="n">Prevalence</th><th scope="col" class="n">AUC</th><th scope="col" class="n">Sensitivity</th><th scope="col" class="n">Specificity</th><th scope="col">Flag</th></tr></thead><tbody>${rows}</tbody></table>`;
    })
    .join("")}`;
}

function classCounts(counts: Record<string, Record<string, number>> | null): string {
  if (!counts) return "";
  return Object.entries(counts)
    .map(
      ([col, values]) =>
        `<tr><th scope="row">Classes in '${esc(col)}'</th><td>${Object.entries(values)
          .map(([k, n]) => `${esc(k)}: ${count(n)}`)
          .join("; ")}</td></tr>`,
    )
    .join("");
}

const CALIBRATION_WORDS: Record<string, string> = {
  platt: "Platt scaling, a logistic fit of the scores",
  isotonic: "isotonic regression",
  temperature: "temperature scaling",
};

const CSS = `
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;max-width:52rem;margin:2rem auto;padding:0 1.25rem}
h1{font-size:1.6rem;margin:0 0 .25rem}h2{font-size:1.15rem;border-bottom:2px solid #d0d7de;padding-bottom:.2rem;margin:1.8rem 0 .6rem}
.meta,.muted{color:#57606a}.meta{margin:0 0 1rem}
table{border-collapse:collapse;width:100%;margin:.4rem 0 .8rem}th,td{border:1px solid #d0d7de;padding:.3rem .55rem;text-align:left;vertical-align:top}
thead th{background:#f3f4f6}tbody th{font-weight:600;width:38%}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;color:#57606a;font-size:.9rem;padding-bottom:.25rem}table.sg tbody th{width:auto}table.sg td.n{white-space:nowrap}table.sg tr.worse>*{background:#fff8e5}.cm td.diag{background:#eef6ee}.pct{color:#57606a;font-size:.85em}
.warn{border-left:5px solid #bf8700;background:#fff8e5;padding:.5rem .8rem;margin:.5rem 0}.warn.severe{border-color:#cf222e;background:#ffebe9}
.warn b{display:block}code{word-break:break-all}.glance{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .9rem;margin:1rem 0}.glance p{margin:.2rem 0}.intended{white-space:normal;background:#f6f8fa;border:1px solid #d0d7de;padding:.6rem .8rem}
ul{padding-left:1.3rem}footer{margin-top:2rem;color:#57606a;font-size:.85rem}
@media print{body{margin:0;max-width:none;font-size:11pt}h2{break-after:avoid}table,.warn{break-inside:avoid}a{color:inherit;text-decoration:none}}
`;

/** "AUC (area under the ROC curve)" -> "AUC": the part before its explanation. */
const shortLabel = (label: string) => (label.includes(" (") ? label.slice(0, label.indexOf(" (")) : label);

/** Three lines a reviewer reads first: the headline figures for the positive class and the serious warnings. */
function atAGlance(card: ModelCard): string {
  const pick = (name: string) => card.performance.test.find((f) => f.name === name);
  const pos = card.performance.positive_class?.name;
  const shown = ["auc", "sensitivity", "specificity", "rmse", "map50"]
    .map(pick)
    .filter((f): f is CardFigure => Boolean(f))
    .map(
      (f) =>
        `${esc(f.name === "sensitivity" || f.name === "specificity" ? `${f.name[0].toUpperCase()}${f.name.slice(1)} for ${pos ?? "the positive class"}` : shortLabel(f.label))} ${num(f.value)} (${num(f.ci_low)} – ${num(f.ci_high)})`,
    );
  // Every warning by its title (a count alone, "2 more", told the reader nothing); the serious ones first.
  const severe = card.warnings.filter((w) => w.severity === "severe").map((w) => esc(w.title));
  const others = card.warnings.filter((w) => w.severity !== "severe").map((w) => esc(w.title));
  return `<section class="glance" aria-label="At a glance"><p><b>At a glance (test patients, 95% intervals):</b> ${shown.join("; ") || "–"}.</p><p><b>Warnings:</b> ${
    card.warnings.length
      ? `${[
          severe.length ? `serious: ${severe.join(", ")}` : "",
          others.length ? `${severe.length ? "also " : ""}${others.join(", ")}` : "",
        ]
          .filter(Boolean)
          .join("; ")} (section 8)`
      : "none raised"
  }.${card.retrospective.length ? ` <b>Retrospective studies:</b> ${card.retrospective.length} (section 9).` : ""}</p></section>`;
}

export function modelCardHtml(card: ModelCard): string {
  const p = card.performance;
  const pos = p.positive_class;
  const op = p.operating_point;
  const d = card.data;
  const s = card.split;
  const m = card.model;
  const pre = card.preprocessing as { description: string; columns?: Array<{ name: string; type: string }> };
  const sections: string[] = [];

  sections.push(
    `<h2>1. Intended use</h2>${
      card.intended_use.text
        ? `<div class="intended">${para(card.intended_use.text)}</div>`
        : `<p class="muted">Not written yet. The team states here the setting, the patients and the clinical decision this model is meant to support (the experiment's page: Intended use).</p>`
    }${card.description ? `<p><b>Notes:</b> ${para(card.description)}</p>` : ""}`,
  );

  sections.push(`<h2>2. Data source and participants</h2><table><tbody>
<tr><th scope="row">Data file</th><td>${esc(d.file_name)}</td></tr>
<tr><th scope="row">Submitted for training</th><td>${date(d.submitted_at)}</td></tr>
<tr><th scope="row">Inputs</th><td>${d.inputs === "images" ? "images" : "a table of measurements"}</td></tr>
<tr><th scope="row">Outcome (label column)</th><td>${d.label_columns.map(esc).join(", ")}</td></tr>
<tr><th scope="row">Rows</th><td>${count(d.rows)}</td></tr>
<tr><th scope="row">Patients</th><td>${count(d.patients)}</td></tr>
${d.images !== null ? `<tr><th scope="row">Images</th><td>${count(d.images)}</td></tr>` : ""}
${classCounts(d.class_counts)}
<tr><th scope="row">Dataset fingerprint (SHA-256)</th><td><code>${esc(d.dataset_sha256 ?? "–")}</code></td></tr>
</tbody></table>`);

  sections.push(`<h2>3. The split</h2><p>${s.internal ? `Split ${esc(s.method)}. Thresholds and the model were chosen without looking at the test patients.` : `Not split: ${esc(s.method)}.`}</p>
<table><thead><tr><th scope="col">Part</th><th scope="col" class="n">Patients</th><th scope="col" class="n">Rows</th></tr></thead><tbody>
<tr><th scope="row">Training</th><td class="n">${count(s.patients?.train)}</td><td class="n">${count(s.rows.train)}</td></tr>
<tr><th scope="row">Validation</th><td class="n">${count(s.patients?.validation)}</td><td class="n">${count(s.rows.validation)}</td></tr>
<tr><th scope="row">Test</th><td class="n">${count(s.patients?.test)}</td><td class="n">${count(s.rows.test)}</td></tr></tbody></table>`);

  sections.push(
    `<h2>4. Preprocessing</h2><p>${esc(pre.description)}</p>${
      pre.columns?.length
        ? `<p><b>Input columns:</b> ${pre.columns.map((c) => `${esc(c.name)} <span class="muted">(${esc(c.type)})</span>`).join(", ")}</p>`
        : ""
    }`,
  );

  sections.push(`<h2>5. Model</h2><table><tbody>
<tr><th scope="row">Model</th><td>${esc(m.family ?? m.kind)}</td></tr>
<tr><th scope="row">Task</th><td>${esc(m.problem)} (${m.classes.map(esc).join(", ")})</td></tr>
${m.kind === "vision_classification" ? `<tr><th scope="row">Pretrained backbone</th><td>${backboneWords(m.backbone)}</td></tr>` : ""}
<tr><th scope="row">Why this model</th><td>${esc(m.selection_reason ?? "–")}</td></tr>
${m.selection_rule ? `<tr><th scope="row">Selection rule</th><td>${esc(m.selection_rule)}</td></tr>` : ""}
${m.validation ? `<tr><th scope="row">Validation during selection</th><td>${esc(m.validation)}</td></tr>` : ""}
<tr><th scope="row">Selected on</th><td>${esc(m.selection_metric)}</td></tr>
<tr><th scope="row">Built</th><td>${date(m.built_at)} (model version ${card.model_version}; training took ${num(m.training_time_s, 0)} s)</td></tr>
</tbody></table>`);

  const opWords = !op
    ? ""
    : op.decision
      ? `Operating point: a patient is called <b>${esc(op.decision.class)}</b> when the model's score for ${esc(op.decision.class)} is at least ${num(op.decision.score_at_least)}, a threshold chosen on ${esc(op.chosen_on)}.${op.rule ? ` Rule: ${esc(op.rule)}.` : ""}${
          op.saved
            ? ` Saved as model version ${op.saved.version} on ${esc(op.saved.saved_at.slice(0, 10))} (from version ${op.saved.from_version}).`
            : ""
        }`
      : `Operating point: thresholds ${op.thresholds.map((t) => num(t)).join(", ")} (one per class), chosen on ${esc(op.chosen_on)}.${op.rule ? ` Rule: ${esc(op.rule)}.` : ""}`;
  sections.push(`<h2>6. Performance on the test patients</h2>
<p>${pos ? `Positive class: <b>${esc(pos.name)}</b>. ` : ""}${opWords}</p><p>${esc(p.intervals)}.</p>
${figureRows(p.test)}${confusion(p.confusion_matrix)}
${p.validation.length ? `<details open><summary>Validation figures (for comparison: a large gap to the test figures means overfitting)</summary>${figureRows(p.validation)}</details>` : ""}`);

  if (card.subgroups) sections.push(`<h2>6b. Performance by subgroup</h2>${subgroupTables(card.subgroups)}`);

  const c = card.calibration;
  sections.push(
    `<h2>7. Calibration</h2><p>${
      c.ece
        ? `Expected calibration error (ECE) on the test patients: ${num(c.ece.value)} (95% interval ${num(c.ece.ci_low)} – ${num(c.ece.ci_high)}); 0 means the scores can be read as probabilities.`
        : "No calibration figure for this kind of model."
    }${c.method ? ` Scores were calibrated on the validation patients (${esc(CALIBRATION_WORDS[c.method] ?? c.method)}).` : ""}${
      c.slope && c.intercept
        ? ` Calibration slope ${num(c.slope.value)} (95% interval ${num(c.slope.ci_low)} – ${num(c.slope.ci_high)}; 1 is ideal, below 1 the risks are too extreme) and intercept ${num(c.intercept.value)} (${num(c.intercept.ci_low)} – ${num(c.intercept.ci_high)}; 0 is ideal, below 0 the risks are too high).`
        : ""
    }${c.figure ? " The calibration plot is on the experiment's page." : ""}${
      c.decision_curve
        ? " A decision curve (net benefit of acting on the model against acting on everyone or no one) is on the experiment's page."
        : ""
    }</p><p class="muted">Not computed by Builder for this model: ${c.not_yet.map(esc).join("; ")}.</p>`,
  );

  sections.push(
    `<h2>8. Warnings and limitations</h2>${
      card.warnings.length
        ? card.warnings
            .map(
              (w) =>
                `<div class="warn ${w.severity === "severe" ? "severe" : ""}"><b>${w.severity === "severe" ? "Serious" : w.severity === "caution" ? "Caution" : "Note"}: ${esc(w.title)}</b>${esc(w.message)}</div>`,
            )
            .join("")
        : `<p>No warning was raised by Builder's checks (docs: metrics, Warnings).</p>`
    }<ul>${card.limitations.map((l) => `<li>${esc(l)}</li>`).join("")}</ul>`,
  );

  if (card.retrospective.length) {
    sections.push(
      `<h2>9. Retrospective results on other data</h2>${card.retrospective
        .map(
          (r) =>
            `<h3>Experiment #${r.experiment_id}${r.name ? `: ${esc(r.name)}` : ""}</h3><p class="muted">${esc(r.file_name)}, finished ${date(r.finished_at)}, ${count(r.patients)} patients</p>${figureRows(r.test)}${confusion(r.confusion_matrix)}`,
        )
        .join("")}`,
    );
  }

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Model card: ${esc(card.title)}</title><style>${CSS}</style></head>
<body><header><h1>Model card: ${esc(card.title)}</h1>
<p class="meta">Experiment #${card.experiment_id}, model version ${card.model_version}. Generated ${date(card.generated_at)} by Builder, organised after ${esc(card.guideline)}.</p></header>
${atAGlance(card)}<main>${sections.join("\n")}</main>
<footer>Figures are from the data described above. No patient identifier or individual value appears in this report.</footer>
</body></html>`;
}
