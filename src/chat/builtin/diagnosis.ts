import { uniqueReferences, type BackendReply } from "../backend.js";
import type { ExperimentFacts } from "../facts.js";
import type { ChatTools } from "../tools.js";
import { metricLine, modelHowto } from "./templates.js";

const NO_DIAGNOSIS =
  "I can't give a diagnosis or judge a patient or an image: that decision stays with a clinician. What I can do is tell you how to run your validated model on the case and how good that model was on held-out test patients.";

/**
 * The answer to "does this patient have…" / "is this scan malignant?": how to run the model's /predict and its
 * validated test metrics with their intervals (the named or focused experiment, else every ready model), never a verdict.
 */
export async function noDiagnosisReply(tools: ChatTools, experimentId: number | undefined): Promise<BackendReply> {
  const lines = [NO_DIAGNOSIS];
  const refs = [];
  const ids: number[] = [];
  if (experimentId) ids.push(experimentId);
  else {
    const { result } = await tools.listExperiments({ status: "ready" });
    ids.push(...(result as { experiments: Array<{ experiment_id: number }> }).experiments.slice(0, 3).map((e) => e.experiment_id));
  }
  if (!ids.length)
    lines.push(
      "You have no ready model yet; once an experiment is ready, its /predict gives a score per class together with the model's validated metrics.",
    );
  for (const id of ids) {
    const exp = await tools.getExperiment({ experiment_id: id });
    const facts = exp.result as ExperimentFacts | { found: false };
    if (!facts.found) continue;
    refs.push(...exp.references);
    const metrics = Object.entries(facts.metrics).map(([n, m]) => metricLine(n, m));
    lines.push(
      "",
      `Experiment ${id} (${facts.status})${metrics.length ? `, validated on ${facts.dataset.split?.test ?? "its"} held-out test patients: ${metrics.join("; ")}.` : ": no test metrics yet."}`,
    );
    const model = await tools.modelInputs({ experiment_id: id });
    if ((model.result as { found: boolean }).found) {
      refs.push(...model.references);
      lines.push(modelHowto(model.result as Parameters<typeof modelHowto>[0]));
    }
  }
  lines.push(
    "",
    "A model's score is one input for the clinician, within the limits of the data it was validated on; it is not a diagnosis.",
  );
  return { reply: lines.join("\n"), references: uniqueReferences(refs) };
}
