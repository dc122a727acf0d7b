import { uniqueReferences, type BackendReply } from "./backend.js";
import { reply, type Lang } from "./language.js";
import type { Reference } from "./repository.js";
import type { ChatTools } from "./tools.js";
import { resolveExperiment } from "./resolve.js";
import { mainMetric, metricLine, modelHowto } from "./builtin/templates.js";

// Shared by every backend (service.ts decides it before any backend runs): a request for a diagnosis gets how to run
// the validated model and how good it was on held-out test patients, never a verdict.

/** "según el modelo de diabetes": the one model the words describe, if exactly one fits. */
async function modelDescribed(tools: ChatTools, message: string, known: ReadonlySet<string>): Promise<number | undefined> {
  const { result } = await tools.listExperiments({ status: "ready" });
  const r = resolveExperiment(message, result.experiments, { known });
  return r.kind === "one" ? r.experiment.experiment_id : undefined;
}

const NO_DIAGNOSIS = {
  en: "I can't give a diagnosis or judge a patient or an image: that decision stays with a clinician. What I can do is tell you how to run your validated model on the case and how good that model was on held-out test patients.",
  es: "No puedo dar un diagnóstico ni juzgar a un paciente o una imagen: esa decisión es de un clínico. Sí puedo decirle cómo ejecutar su modelo validado con el caso y qué tal funcionó con pacientes de test.",
};

/**
 * The answer to "does this patient have…" / "¿es maligna esta lesión?": how to run the model's /predict and its
 * validated test metrics with their intervals (the named or focused experiment, else every ready model), never a verdict.
 */
export async function noDiagnosisReply(
  tools: ChatTools,
  named: number | undefined,
  lang: Lang = "en",
  words?: { message: string; known: ReadonlySet<string> },
): Promise<BackendReply> {
  const experimentId = named ?? (words ? await modelDescribed(tools, words.message, words.known) : undefined);
  const lines = [NO_DIAGNOSIS[lang]];
  if (!experimentId) lines.push(reply(lang, "diagnosis.yourReadyModels"));
  const refs: Reference[] = [];
  const ids: number[] = [];
  if (experimentId) ids.push(experimentId);
  else {
    const { result } = await tools.listExperiments({ status: "ready" });
    ids.push(...result.experiments.slice(0, 3).map((e) => e.experiment_id));
  }
  if (!ids.length) lines.push(reply(lang, "diagnosis.youHaveNoReadyModel"));
  for (const id of ids) {
    const exp = await tools.getExperiment({ experiment_id: id });
    const facts = exp.result;
    if (!facts.found) continue;
    refs.push(...exp.references);
    const main = mainMetric(facts);
    const metric = main ? metricLine(main, facts.metrics[main], lang) : reply(lang, "diagnosis.noTestMetricsYet");
    const tests = facts.dataset.split?.test ?? reply(lang, "diagnosis.its");
    if (!experimentId) {
      // Several models: one line each, the way to run it and its main figure; the full how-to is one question away.
      lines.push(reply(lang, "diagnosis.experimentPOSTV1ExperimentsPredict", { id, metric, tests }));
      continue;
    }
    // Its main figure (and AUC beside it): what the score it gives is worth, without the whole report.
    const shown = [...new Set([main, facts.metrics.auc ? "auc" : undefined].filter((n): n is string => !!n))];
    const metrics = shown.map((n) => metricLine(n, facts.metrics[n], lang));
    lines.push(
      "",
      metrics.length
        ? reply(lang, "diagnosis.experimentValidatedOnHeldOut", { id, factsStatus: facts.status, tests, join: metrics.join("; ") })
        : reply(lang, "diagnosis.experimentNoTestMetricsYet", { id, factsStatus: facts.status }),
    );
    const model = await tools.modelInputs({ experiment_id: id });
    if (model.result.found) {
      refs.push(...model.references);
      lines.push(modelHowto(model.result, lang));
    }
  }
  if (!experimentId && ids.length) lines.push(reply(lang, "diagnosis.askHowDoICall"));
  lines.push("", reply(lang, "diagnosis.aModelSScoreIs"));
  return { reply: lines.join("\n"), references: uniqueReferences(refs) };
}
