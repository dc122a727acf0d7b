import type { BackendReply } from "../backend.js";
import type { ExperimentFacts } from "../facts.js";
import { say, type Lang } from "../language.js";
import { quote } from "../safety.js";
import type { BuildTimes } from "../tools.js";
import type { Action } from "./intents.js";
import type { ReplyContext } from "./context.js";
import { mainMetric, metricLine, pageLink, reliableEnd, subgroupLine, testPatients } from "./templates.js";

// What the assistant cannot do, said plainly with where it is done (issue 39), and the one question it must never
// answer with a yes: whether a model is good enough for clinic. The chat only reads; every change is the user's,
// in the dashboard or the API.

/** Where each action is done, for one experiment (`N` when none was named). */
function whereDone(action: Action, id: number | undefined, lang: Lang): string {
  const n = id === undefined ? "{id}" : String(id);
  const page = id === undefined ? "/experiments" : `/experiments/${id}`;
  switch (action) {
    case "delete":
      return say(
        lang,
        `You can delete it yourself: on its page (${page}) with Delete, or with \`DELETE /v1/experiments/${n}\` and your API key.`,
        `Puede borrarlo usted: en su página (${page}) con Borrar, o con \`DELETE /v1/experiments/${n}\` y su clave de API.`,
      );
    case "retrain":
      return say(
        lang,
        `A model is trained by an experiment: start a new experiment (New experiment, /experiments/new, or \`POST /v1/experiments\`) with the same or a larger dataset${id ? `; experiment ${id} stays as it is, to compare with` : ""}.`,
        `Un modelo lo entrena un experimento: empiece un nuevo experimento (Nuevo experimento, /experiments/new, o \`POST /v1/experiments\`) con el mismo dataset o uno mayor${id ? `; el experimento ${id} se queda como está, para comparar` : ""}.`,
      );
    case "threshold":
      return say(
        lang,
        `On the result page (${page}), the operating point lets you choose and save another threshold; saving publishes a new model version (\`POST /v1/models/${n}/operating-point\`).`,
        `En la página de resultados (${page}), el punto de operación le deja elegir y guardar otro umbral; al guardarlo se publica una nueva versión del modelo (\`POST /v1/models/${n}/operating-point\`).`,
      );
    case "cancel":
      return say(
        lang,
        `A queued or running experiment is cancelled on its page (${page}) or with \`POST /v1/experiments/${n}/cancel\`.`,
        `Un experimento en cola o en marcha se cancela en su página (${page}) o con \`POST /v1/experiments/${n}/cancel\`.`,
      );
    case "rename":
      return say(
        lang,
        `Its name and description are edited on its page (${page}) or with \`PATCH /v1/experiments/${n}\` (\`name\`, \`description\`).`,
        `Su nombre y descripción se editan en su página (${page}) o con \`PATCH /v1/experiments/${n}\` (\`name\`, \`description\`).`,
      );
    case "upload":
      return say(
        lang,
        "Upload a zip with `builder upload FILE.zip` (it prints the `zip_gcloud` to use) or from New experiment in the dashboard (/experiments/new).",
        "Suba un zip con `builder upload ARCHIVO.zip` (imprime el `zip_gcloud` que usar) o desde Nuevo experimento en el panel (/experiments/new).",
      );
    case "edit":
      return say(
        lang,
        `Changes are made on the experiment's page (${page}) or through the API (\`PATCH /v1/experiments/${n}\`).`,
        `Los cambios se hacen en la página del experimento (${page}) o por la API (\`PATCH /v1/experiments/${n}\`).`,
      );
  }
}

export function cannotDoReply(ctx: ReplyContext, action: Action, experimentId?: number): BackendReply {
  const { lang } = ctx;
  const what: Record<Action, [string, string]> = {
    delete: ["delete experiments or models", "borrar experimentos ni modelos"],
    retrain: ["train or retrain models", "entrenar ni reentrenar modelos"],
    threshold: ["change a model's threshold", "cambiar el umbral de un modelo"],
    cancel: ["cancel experiments", "cancelar experimentos"],
    rename: ["rename experiments", "cambiar el nombre de experimentos"],
    upload: ["upload files for you", "subir archivos por usted"],
    edit: ["change experiments", "cambiar experimentos"],
  };
  const [en, es] = what[action];
  const lead = say(lang, `I can't ${en}: the chat only reads your data.`, `No puedo ${es}: el chat solo lee sus datos.`);
  return { reply: `${lead} ${whereDone(action, experimentId, lang)}`, references: [] };
}

/**
 * "Is it good enough for clinic?": never a yes. The model's own evidence (its main metric's interval, warnings and
 * worse subgroups), then what would answer the question: an external validation, a Retrospective study.
 */
export function clinicReadyReply(ctx: ReplyContext, f: ExperimentFacts): BackendReply {
  const { lang } = ctx;
  const id = f.experiment_id;
  const name = f.name ? ` ${quote(f.name, 60)}` : "";
  const lines = [
    say(
      lang,
      `I can't tell you it is ready for clinical use, and no internal test can. The evidence for experiment ${id}${name}:`,
      `No puedo decirle que esté listo para uso clínico, y ninguna prueba interna puede. Lo que hay sobre el experimento ${id}${name}:`,
    ),
  ];
  if (f.status !== "ready")
    lines.push(
      say(
        lang,
        `- It is **${f.status}**, not ready: there is no model to judge yet.`,
        `- Está **${f.status}**, no listo: aún no hay modelo que juzgar.`,
      ),
    );
  const main = mainMetric(f);
  const m = main ? f.metrics[main] : undefined;
  if (main && m)
    lines.push(`- ${metricLine(main, m, lang)}${testPatients(f, lang)}${m.ci_low !== null ? `: ${reliableEnd(main, m, lang)}` : ""}.`);
  if (main !== "auc" && f.metrics.auc) lines.push(`- ${metricLine("auc", f.metrics.auc, lang)}.`);
  if (f.warnings.length)
    lines.push(
      `- ${say(lang, "Warnings", "Avisos")}: ${f.warnings.map((w) => (lang === "es" ? `\`${w.code}\` (${SEVERITY_ES[w.severity]})` : `${w.title} (\`${w.code}\`, ${w.severity})`)).join("; ")}.`,
    );
  const sub = subgroupLine(f, lang);
  if (sub) lines.push(`- ${sub}`);
  if (!f.warnings.length && !sub)
    lines.push(say(lang, "- No warnings and no subgroup flagged worse.", "- Sin avisos ni subgrupos marcados como peores."));
  lines.push(
    say(
      lang,
      `Before using it on patients, validate it externally: run a Retrospective study (\`study_type\` "Retrospective", \`source_experiment_id\` ${id}) on patients from another period or site, and take the model card to your clinical governance. ${pageLink(id, lang)}`,
      `Antes de usarlo con pacientes, valídelo externamente: haga un estudio Retrospective (\`study_type\` "Retrospective", \`source_experiment_id\` ${id}) con pacientes de otro periodo o centro, y lleve la ficha del modelo a su comité clínico. ${pageLink(id, lang)}`,
    ),
  );
  return { reply: lines.join("\n"), references: [] };
}

const SEVERITY_ES = { severe: "grave", caution: "precaución", info: "información" } as const;

const duration = (s: number, lang: Lang) =>
  s < 90 ? `${s} s` : say(lang, `about ${Math.round(s / 60)} min`, `unos ${Math.round(s / 60)} min`);

/** How long a build takes here: the budgets, then the user's own past builds of that kind as the best guide. */
export function buildTimeReply(ctx: ReplyContext, times: BuildTimes): BackendReply {
  const { lang } = ctx;
  const { fast, best } = times.budgets_s;
  const lines = [
    say(
      lang,
      `Training runs within a budget: ${fast} s in fast mode (\`optimization_type\` 1) and ${best} s in best mode (0), plus a few minutes for start-up, the bootstrap intervals and export; a busy host stretches it.`,
      `El entrenamiento tiene un presupuesto: ${fast} s en modo rápido (\`optimization_type\` 1) y ${best} s en modo mejor (0), más unos minutos de arranque, intervalos bootstrap y exportación; un servidor ocupado lo alarga.`,
    ),
  ];
  if (times.past.length) {
    const each = times.past.slice(0, 4).map((b) => {
      const size =
        b.images !== null
          ? say(lang, `${b.images} images`, `${b.images} imágenes`)
          : b.rows !== null
            ? say(lang, `${b.rows} rows`, `${b.rows} filas`)
            : "";
      return `${say(lang, "experiment", "experimento")} ${b.experiment_id}${size ? ` (${size})` : ""}: ${duration(b.took_s ?? 0, lang)}`;
    });
    lines.push(
      say(
        lang,
        `Your own past builds here: ${each.join("; ")}. One of a similar size should take about as long.`,
        `Sus builds anteriores aquí: ${each.join("; ")}. Uno de tamaño parecido debería tardar más o menos lo mismo.`,
      ),
    );
  } else
    lines.push(
      say(
        lang,
        "You have no finished build of that kind yet to compare with.",
        "Aún no tiene ningún build terminado de ese tipo con el que comparar.",
      ),
    );
  lines.push(say(lang, "More: docs/experiments.md, Budgets.", "Más: docs/experiments.md, Budgets."));
  return { reply: lines.join("\n"), references: [] };
}
