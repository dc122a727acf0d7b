import type { ExperimentFacts, MetricValue } from "../facts.js";
import type { Glossary } from "../glossary.js";
import { quote } from "../safety.js";
import { LOWER_IS_BETTER } from "../tools.js";
import { say, type Lang } from "../language.js";
import type { PublishedModel } from "../tools.js";
import { codeMeaning } from "./spanish.js";

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
const LABELS_ES: Record<string, string> = {
  precision: "Precisión",
  recall: "Recall",
  accuracy: "Exactitud",
  sensitivity: "Sensibilidad",
  specificity: "Especificidad",
  ppv: "VPP",
  npv: "VPN",
  prevalence: "Prevalencia",
  calibration_slope: "Pendiente de calibración",
  calibration_intercept: "Intercepto de calibración",
};
export const metricLabel = (name: string, lang: Lang = "en") => (lang === "es" ? LABELS_ES[name] : undefined) ?? LABELS[name] ?? name;
export const num = (v: number | null | undefined) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(3) : "n/a");
export const interval = (m: MetricValue, lang: Lang = "en") =>
  m.ci_low !== null && m.ci_high !== null
    ? say(lang, ` (95% CI ${num(m.ci_low)}–${num(m.ci_high)})`, ` (IC 95% ${num(m.ci_low)}–${num(m.ci_high)})`)
    : say(lang, " (no interval)", " (sin intervalo)");
export const metricLine = (name: string, m: MetricValue, lang: Lang = "en") =>
  `${metricLabel(name, lang)} ${num(m.value)}${interval(m, lang)}`;

/** Failure reasons and dataset messages quote user data (column names, file names): shown only inside a code span. */
export const REASON_MAX = 300;
export const quotedReason = (reason: string | null, lang: Lang = "en") =>
  reason ? quote(reason, REASON_MAX) : say(lang, "no reason was recorded", "no se registró el motivo");
const reasonOf = (f: ExperimentFacts, lang: Lang) => quotedReason(f.failure_reason, lang);

const TASK_WORDS = { data: "tabular", vision: "image", detection: "object-detection" } as const;
const TASK_WORDS_ES = { data: "tabular", vision: "de imagen", detection: "de detección de objetos" } as const;

/** Where the experiment's page is in the dashboard: the one link a reply about it ends with. */
export const pageLink = (id: number, lang: Lang = "en") => say(lang, `Details: /experiments/${id}`, `Detalles: /experiments/${id}`);

function datasetLine(f: ExperimentFacts, lang: Lang): string | undefined {
  const d = f.dataset;
  const parts: string[] = [];
  if (d.rows !== null) parts.push(say(lang, `${d.rows} rows`, `${d.rows} filas`));
  if (d.patients !== null) parts.push(say(lang, `${d.patients} patients`, `${d.patients} pacientes`));
  if (d.images !== null) parts.push(say(lang, `${d.images} images`, `${d.images} imágenes`));
  if (d.boxes !== null) parts.push(say(lang, `${d.boxes} boxes`, `${d.boxes} cajas`));
  if (d.split)
    parts.push(
      say(
        lang,
        `split by patient: ${d.split.train} train / ${d.split.val} validation / ${d.split.test} test`,
        `división por paciente: ${d.split.train} entrenamiento / ${d.split.val} validación / ${d.split.test} test`,
      ) + (d.split.from_column ? ` (${say(lang, "from column", "de la columna")} ${quote(d.split.from_column, 40)})` : ""),
    );
  return parts.length ? `Dataset ${d.zip_gcloud ? quote(d.zip_gcloud, 120) : ""}: ${parts.join("; ")}.` : undefined;
}

/** The metric a model is judged by first: R² for regression, mAP for detection, else the one it optimised. */
export function mainMetric(f: ExperimentFacts): string | undefined {
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
  return main && f.metrics[main] ? main : f.metrics.auc ? "auc" : Object.keys(f.metrics)[0];
}

/** "read 0.871 as what it reliably reaches": the end of the interval a cautious reader should hold on to. */
export function reliableEnd(name: string, m: MetricValue, lang: Lang): string {
  return LOWER_IS_BETTER.has(name)
    ? say(
        lang,
        `read ${num(m.ci_high)} as the error it reliably stays under`,
        `tome ${num(m.ci_high)} como el error que no supera con seguridad`,
      )
    : say(lang, `read ${num(m.ci_low)} as what it reliably reaches`, `tome ${num(m.ci_low)} como lo que alcanza con seguridad`);
}

export const testPatients = (f: ExperimentFacts, lang: Lang) =>
  f.dataset.split?.test
    ? say(lang, ` on ${f.dataset.split.test} held-out test patients`, ` en ${f.dataset.split.test} pacientes de test reservados`)
    : say(lang, " on the held-out test patients", " en los pacientes de test reservados");

function trustNote(f: ExperimentFacts, lang: Lang): string | undefined {
  // The warnings (src/experiments/warnings.ts) come first: a severe one means no interval should be read as reassurance.
  const severe = f.warnings.filter((w) => w.severity === "severe");
  if (severe.length) {
    const list = severe.map((w) => `${w.title} (${w.code})`).join("; ");
    return say(
      lang,
      `Can you trust it? Not as it is: ${list}. The result page's verdict box explains why and what to check. This is an internal validation, not a clinical validation.`,
      `¿Se puede confiar en él? Tal como está, no: ${list}. El recuadro de veredicto de la página de resultados explica por qué y qué revisar. Es una validación interna, no una validación clínica.`,
    );
  }
  const name = mainMetric(f);
  const m = name ? f.metrics[name] : undefined;
  if (!name || !m || m.ci_low === null || m.ci_high === null) return undefined;
  const width = m.ci_high - m.ci_low;
  const verdict =
    width > 0.2
      ? say(
          lang,
          "The interval is wide, so the estimate is uncertain: more patients would narrow it.",
          "El intervalo es ancho: la estimación es incierta y más pacientes lo estrecharían.",
        )
      : width > 0.1
        ? say(lang, "The interval is moderately wide.", "El intervalo es moderadamente ancho.")
        : say(lang, "The interval is narrow.", "El intervalo es estrecho.");
  return say(
    lang,
    `Can you trust it? ${metricLabel(name)} was measured${testPatients(f, lang)}: between ${num(m.ci_low)} and ${num(m.ci_high)} with 95% confidence, so ${reliableEnd(name, m, lang)}.${verdict ? ` ${verdict}` : ""} This is an internal validation, not a clinical validation.`,
    `¿Se puede confiar en él? ${metricLabel(name, lang)} se midió${testPatients(f, lang)}: entre ${num(m.ci_low)} y ${num(m.ci_high)} con un 95% de confianza, así que ${reliableEnd(name, m, lang)}.${verdict ? ` ${verdict}` : ""} Es una validación interna, no una validación clínica.`,
  );
}

/** The direct answer first when the question named a metric or the thresholds; the full report follows. */
export function leadLine(
  f: ExperimentFacts,
  ask: { metric?: string; thresholds?: boolean; perClass?: boolean; className?: string },
  lang: Lang = "en",
): string | undefined {
  const exp = say(lang, `Experiment ${f.experiment_id}`, `Experimento ${f.experiment_id}`);
  if (ask.perClass || ask.className) {
    const names = ask.metric ? [ask.metric] : Object.keys(f.per_class);
    const lines = names
      .filter((n) => f.per_class[n])
      .map((n) => {
        const entries = Object.entries(f.per_class[n]).filter(([c]) => !ask.className || c === ask.className);
        return `- ${metricLabel(n, lang)}: ${entries.map(([c, m]) => `${quote(c, 40)} ${num(m.value)}${interval(m, lang)}`).join("; ")}`;
      });
    if (lines.length)
      return [
        say(lang, `${exp} per class`, `${exp} por clase`) +
          (ask.className ? ` (${quote(ask.className, 40)})` : "") +
          say(lang, ", on the held-out test patients:", ", en los pacientes de test reservados:"),
        ...lines,
      ].join("\n");
    if (!ask.metric) return say(lang, `${exp} has no per-class metrics.`, `${exp} no tiene métricas por clase.`);
  }
  if (ask.metric) {
    const m = f.metrics[ask.metric];
    const tests = f.dataset.split?.test ? testPatients(f, lang) : "";
    if (m) return say(lang, `${exp}'s ${metricLine(ask.metric, m)}${tests}.`, `${exp}: ${metricLine(ask.metric, m, lang)}${tests}.`);
    const has = Object.keys(f.metrics).length
      ? ` (${say(lang, "it has", "tiene")} ${Object.keys(f.metrics)
          .map((n) => metricLabel(n, lang))
          .join(", ")})`
      : "";
    return say(
      lang,
      `${exp} has no ${metricLabel(ask.metric)} test metric${has}.`,
      `${exp} no tiene ${metricLabel(ask.metric, lang)} de test${has}.`,
    );
  }
  if (ask.thresholds)
    return f.thresholds
      ? say(
          lang,
          `${exp}'s decision thresholds (one per class, applied to the scores by /predict): ${f.thresholds.map(num).join(", ")}${f.threshold_rule ? `, chosen by ${f.threshold_rule}` : ""}.`,
          `Umbrales de decisión del ${exp.toLowerCase()} (uno por clase, aplicados a las puntuaciones por /predict): ${f.thresholds.map(num).join(", ")}${f.threshold_rule ? `, elegidos por ${f.threshold_rule}` : ""}.`,
        )
      : say(
          lang,
          `${exp} has no decision thresholds${f.model ? " (its problem type uses none)" : " (no published model yet)"}.`,
          `${exp} no tiene umbrales de decisión${f.model ? " (su tipo de problema no los usa)" : " (aún no hay modelo publicado)"}.`,
        );
  return undefined;
}

/** The experiment in a few lines: state, test metrics with intervals, dataset, what limits trust, one link. */
export function experimentReport(f: ExperimentFacts, lang: Lang = "en"): string {
  const kind =
    lang === "es"
      ? `${f.task === "detection" ? "modelo" : f.model_type === "regression" ? "regresión" : "clasificación"} ${TASK_WORDS_ES[f.task]}`
      : `${TASK_WORDS[f.task]} ${f.task === "detection" ? "model" : f.model_type}`;
  // Regression requests still carry optimization_metric (the seed's contract requires it) but nothing uses it.
  const optimising =
    f.optimization_metric && f.model_type !== "regression"
      ? say(lang, `, optimising ${f.optimization_metric}`, `, optimizando ${f.optimization_metric}`)
      : "";
  const name = f.name ? ` ${quote(f.name, 60)}` : "";
  const lines = [
    say(
      lang,
      `Experiment ${f.experiment_id}${name} (${kind}, ${f.study_type} study${optimising}) is **${f.status}**.`,
      `Experimento ${f.experiment_id}${name} (${kind}${f.study_type === "Builder" ? "" : `, estudio ${f.study_type}`}${optimising}): **${f.status}**.`,
    ),
  ];
  if (f.status === "failed") lines.push(say(lang, `It failed: ${reasonOf(f, lang)}.`, `Falló: ${reasonOf(f, lang)}.`));
  if (f.status === "invalid_dataset") lines.push(refusedSummary(f, undefined, lang));
  const p = f.progress;
  if (!["ready", "failed", "invalid_dataset", "cancelled"].includes(f.status) && p) {
    const left = p.eta_s ? say(lang, `, about ${Math.round(p.eta_s)} s left`, `, faltan unos ${Math.round(p.eta_s)} s`) : "";
    lines.push(
      say(
        lang,
        `Progress: ${Math.round((p.fraction ?? 0) * 100)}% (stage ${p.stage ?? f.status}${left}).`,
        `Progreso: ${Math.round((p.fraction ?? 0) * 100)}% (etapa ${p.stage ?? f.status}${left}).`,
      ),
    );
  }
  const names = Object.keys(f.metrics);
  if (names.length)
    lines.push(`${say(lang, "Test metrics", "Métricas de test")}: ${names.map((n) => metricLine(n, f.metrics[n], lang)).join("; ")}.`);
  if (f.classes && f.model_type !== "regression")
    lines.push(
      `${say(lang, "Classes", "Clases")}: ${Object.entries(f.classes)
        .map(([i, n]) => `${i} = ${quote(n, 40)}`)
        .join(", ")}.`,
    );
  const ds = datasetLine(f, lang);
  if (ds) lines.push(ds);
  if (f.status === "ready") {
    const t = trustNote(f, lang);
    if (t) lines.push(t);
    const others = f.warnings.filter((w) => w.severity !== "severe");
    if (others.length)
      lines.push(
        say(
          lang,
          `Warnings: ${others.map((w) => `${w.title} (${w.code})`).join("; ")}; the result page explains each.`,
          `Avisos: ${others.map((w) => `\`${w.code}\``).join(", ")}; la página de resultados explica cada uno.`,
        ),
      );
    const sub = subgroupLine(f, lang);
    if (sub) lines.push(sub);
  }
  if (f.model && f.status !== "ready")
    lines.push(say(lang, `Model version ${f.model.version} is published.`, `La versión ${f.model.version} del modelo está publicada.`));
  lines.push(pageLink(f.experiment_id, lang));
  return lines.join("\n");
}

/** The subgroups the model does clearly worse for, or undefined when none was flagged. */
export function subgroupLine(f: ExperimentFacts, lang: Lang = "en"): string | undefined {
  const worse = f.worse_subgroups ?? [];
  if (!worse.length) return undefined;
  const each = worse
    .slice(0, 3)
    .map(
      (g) =>
        `${quote(g.column, 40)} ${quote(g.label, 40)} (AUC ${num(g.auc?.value)}, ${say(lang, "95% CI", "IC 95%")} ${num(g.auc?.ci_low)}–${num(g.auc?.ci_high)}, ${say(lang, "against", "frente a")} ${num(g.rest_auc)} ${say(lang, "for the other test patients", "en el resto de pacientes de test")})`,
    )
    .join("; ");
  const more = worse.length > 3 ? say(lang, ` and ${worse.length - 3} more`, ` y ${worse.length - 3} más`) : "";
  return say(
    lang,
    `Subgroups: the model does clearly worse for ${each}${more}; see Subgroups on the result page.`,
    `Subgrupos: el modelo funciona claramente peor en ${each}${more}.`,
  );
}

export function refusedSummary(f: ExperimentFacts, glossary?: Glossary, lang: Lang = "en"): string {
  const errs = f.problems.errors;
  const count = new Set(errs.map((e) => e.code)).size;
  const total = errs.length + f.problems.errors_omitted;
  const reason = f.failure_reason ? ` (${quote(f.failure_reason, REASON_MAX)})` : "";
  const lines = [
    say(
      lang,
      `Its dataset was refused: ${total} error${total === 1 ? "" : "s"} of ${count} kind${count === 1 ? "" : "s"}${reason}.`,
      `Su dataset fue rechazado: ${total} error${total === 1 ? "" : "es"} de ${count} tipo${count === 1 ? "" : "s"}${reason}.`,
    ),
  ];
  for (const e of errs.slice(0, 8)) {
    const where = [
      e.row ? say(lang, `row ${e.row}`, `fila ${e.row}`) : "",
      e.column ? `${say(lang, "column", "columna")} ${quote(e.column, 60)}` : "",
      e.path ? `${say(lang, "path", "ruta")} ${quote(e.path, 80)}` : "",
    ]
      .filter(Boolean)
      .join(", ");
    const meaning = codeMeaning(e.code, glossary, lang);
    lines.push(`- ${quote(e.code, 60)}${where ? ` (${where})` : ""}: ${quote(e.message, 240)}${meaning ? ` — ${meaning}` : ""}`);
  }
  if (f.problems.errors_omitted) lines.push(say(lang, `…and ${f.problems.errors_omitted} more.`, `…y ${f.problems.errors_omitted} más.`));
  lines.push(
    say(
      lang,
      "Fix these in the CSV or the zip, upload it again and start a new experiment; `POST /v1/datasets/validate` checks a zip without training.",
      "Corríjalos en el CSV o el zip, súbalo de nuevo y empiece un experimento nuevo; `POST /v1/datasets/validate` revisa un zip sin entrenar.",
    ),
  );
  return lines.join("\n");
}

export function refusedReport(f: ExperimentFacts, glossary: Glossary, lang: Lang = "en"): string {
  const exp = say(lang, `Experiment ${f.experiment_id}`, `Experimento ${f.experiment_id}`);
  if (f.status === "invalid_dataset")
    return `${exp} ${say(lang, "is", "está en")} **invalid_dataset**. ${refusedSummary(f, glossary, lang)}`;
  if (f.status === "failed") {
    const rows = f.dataset.rows !== null ? ` (${f.dataset.rows} ${say(lang, "rows", "filas")})` : "";
    const where = f.history.at(-2)?.status ?? say(lang, "the job", "el trabajo");
    return say(
      lang,
      `${exp} **failed**: ${reasonOf(f, lang)}. Its dataset passed the checks${rows}; the failure came later, in ${where}.`,
      `${exp} **falló**: ${reasonOf(f, lang)}. Su dataset pasó las comprobaciones${rows}; el fallo llegó después, en ${where}.`,
    );
  }
  return `${say(lang, `${exp} was not refused: it is`, `${exp} no fue rechazado: está`)} **${f.status}**.\n${experimentReport(f, lang)}`;
}

export function modelHowto(m: PublishedModel, lang: Lang = "en"): string {
  const lines = [
    say(
      lang,
      `Experiment ${m.experiment_id}'s model (version ${m.version}, ${m.kind}, ${m.problem}) answers at \`POST /v1/experiments/${m.experiment_id}/predict\`.`,
      `El modelo del experimento ${m.experiment_id} (versión ${m.version}, ${m.kind}, ${m.problem}) responde en \`POST /v1/experiments/${m.experiment_id}/predict\`.`,
    ),
  ];
  const inputs = m.inputs;
  const cols = inputs.columns;
  if (cols) {
    lines.push(
      say(
        lang,
        `Send \`message\`: an array of ${cols.length} numbers in this order (data_cols): ${cols.map((c) => quote(c.name, 200)).join(", ")}.`,
        `Envíe \`message\`: una lista de ${cols.length} números en este orden (data_cols): ${cols.map((c) => quote(c.name, 200)).join(", ")}.`,
      ),
    );
    for (const c of cols) {
      if (c.categories === undefined) continue;
      lines.push(
        say(
          lang,
          `- ${quote(c.name, 60)} is categorical (${c.categories} values): send the value as written in your CSV, or its code 0..${c.categories - 1} (codes follow the sorted values)`,
          `- ${quote(c.name, 60)} es categórica (${c.categories} valores): envíe el valor tal como está en su CSV, o su código 0..${c.categories - 1} (los códigos siguen los valores ordenados)`,
        ),
      );
    }
  } else if (inputs.image) {
    const image = inputs.image;
    const ch = `${image.channels} ${say(lang, image.channels === 1 ? "channel" : "channels", image.channels === 1 ? "canal" : "canales")}`;
    lines.push(
      say(
        lang,
        `Send \`message\`: ${inputs.message}. The model sees it resized to ${image.width}×${image.height} (${ch}).`,
        `Envíe \`message\`: la URI de una imagen (\`https://\`, \`data:image/...;base64\` o \`gs://\` en su carpeta). El modelo la ve a ${image.width}×${image.height} (${ch}).`,
      ),
    );
  }
  lines.push(
    `${say(lang, "Classes", "Clases")}: ${Object.entries(m.classes)
      .map(([i, n]) => `${i} = ${quote(n, 40)}`)
      .join(", ")}.${m.thresholds ? ` ${say(lang, "Thresholds", "Umbrales")}: ${m.thresholds.map(num).join(", ")}.` : ""}`,
  );
  lines.push(
    say(lang, "Ready to run (replace $KEY with your API key):", "Listo para ejecutar ($KEY es su clave de API):"),
    "```sh",
    m.predict_example,
    "```",
  );
  lines.push(
    say(
      lang,
      `The answer (201) carries ${m.answer_fields.map((f) => `\`${f}\``).join(", ")}.`,
      `La respuesta (201) trae ${m.answer_fields.map((f) => `\`${f}\``).join(", ")}.`,
    ),
  );
  return lines.join("\n");
}

export function capabilities(lang: Lang = "en"): string {
  return lang === "es"
    ? [
        "Respondo con sus propios experimentos, datasets y modelos y con la documentación de Builder. Pregúnteme, por ejemplo:",
        '- "lista mis experimentos" (o "mis experimentos fallidos", "mis modelos de imagen")',
        '- "¿cómo va mi modelo de diabetes?": estado, métricas de test con intervalos del 95%, umbrales, dataset',
        '- "¿por qué rechazaron el experimento 7?": los problemas del dataset y qué corregir',
        '- "¿qué modelo tiene mejor sensibilidad?": un ranking por cualquier métrica',
        '- "¿cómo llamo a predict con el experimento 42?": las entradas y un curl listo',
        '- "¿qué significa el umbral del experimento 6?", "¿puedo usarlo en la consulta?"',
        '- "¿cómo va el modelo de diabetes este mes?": predicciones, deriva y resultados reales desde que se publicó',
      ].join("\n")
    : CAPABILITIES;
}

/** What the chat says when its matcher is not sure what a question asks (intents.ts MIN_CONFIDENCE). */
export const notUnderstood = (lang: Lang) =>
  say(
    lang,
    "I did not understand that question. Here is what I can answer:",
    "No he entendido la pregunta. Esto es lo que puedo responder:",
  );

export const CAPABILITIES = [
  "I answer from your own experiments, datasets and models and from Builder's documentation. Ask me, for example:",
  '- "list my experiments" (or "my failed experiments", "my image experiments")',
  '- "how is experiment 42 doing?" — status, test metrics with 95% intervals, thresholds, dataset summary',
  '- "why was experiment 7 refused?" — the dataset problems with rows, columns and what each code means',
  '- "which of my models is best for recall?" — a ranking on any metric',
  '- "how do I call predict for experiment 42?" — the inputs and a ready-to-run curl',
  '- "what does F-macro mean?", "what is class_too_small?" — metrics and error codes',
  '- "what does experiment 42\'s threshold trade?", "is it good enough for clinic?" — your own figures in plain words',
  '- "how is the diabetes model doing this month?" — predictions, drift and true outcomes since it was published',
].join("\n");
