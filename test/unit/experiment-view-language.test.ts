import { describe, expect, it } from "vitest";
import { msg, pipelineProblemText, storedMessage } from "../../src/errors.js";
import { datasetProblem, problem, type DatasetReport } from "../../src/datasets/report.js";
import { failureCode, failureIn, progressIn, reportIn, warningsIn } from "../../src/experiments/view-language.js";
import type { ResultWarning } from "../../src/experiments/warnings.js";

// An experiment's stored words said in its reader's language: a failure and a dataset problem stored with their
// catalog key, the warnings from their facts; what was stored before keys keeps its English.

const report: Pick<DatasetReport, "errors" | "warnings"> = {
  errors: [
    {
      severity: "error",
      code: "pipeline_data_error",
      message: "data row 4, column 'edad': the value is not a number",
      column: "edad",
      key: "problems:pipeline.not_a_number",
      params: { row: 4, column: "edad" },
    },
    { severity: "error", code: "image_not_found", message: "images/p7.png is not in the zip", path: "images/p7.png" },
    // A dataset check's problem whose message has plural forms (class_too_small_one/_other): picked by its count.
    datasetProblem("error", "class_too_small", problem("dataset.class_too_small", { class: "maligno", column: "dx", count: 1, min: 3 }), {
      column: "dx",
    }),
  ],
  warnings: [],
};

describe("an experiment's words in the reader's language", () => {
  it("says a keyed dataset problem in Spanish and keeps an old one's English", () => {
    const es = reportIn(report, "es")!;
    expect(es.errors[0].message).toBe("fila de datos 4, columna «edad»: el valor no es un número");
    expect(es.errors[1].message).toBe("images/p7.png is not in the zip");
    expect(report.errors[2].message).toBe(
      "class 'maligno' of 'dx' has 1 patient; at least 3 are needed to place one in each of train, validation and test",
    );
    expect(es.errors[2].message).toBe(
      "la clase «maligno» de «dx» tiene 1 paciente; se necesitan al menos 3 para poner uno en cada parte: entrenamiento, validación y prueba",
    );
    expect(reportIn(report, "en")!.errors[0].message).toBe(report.errors[0].message);
    expect(reportIn(null, "es")).toBeNull();
  });

  it("says a stored failure in the reader's language, with its code; a failure stored as English stays so", () => {
    const stored = storedMessage(msg("build.timeout", { seconds: 120 }));
    expect(failureIn(stored, "the training ran past …", "es")).toBe(
      "el entrenamiento superó su límite de tiempo de 120 s y se detuvo; dele un time_budget_s mayor o use optimization_type 1 (el más rápido)",
    );
    expect(failureCode(stored)).toBe("build.timeout");
    const problem = storedMessage(pipelineProblemText("label_single_class", { column: "dx" }));
    expect(failureIn(problem, "x", "es")).toBe(
      "la columna de etiqueta «dx» tiene una sola clase: un modelo necesita al menos dos para distinguir",
    );
    expect(failureCode(problem)).toBe("pipeline.label_single_class");
    expect(failureIn(null, "RuntimeError: boom", "es")).toBe("RuntimeError: boom");
    expect(failureCode(null)).toBeNull();
  });

  it("words each warning's title and explanation in Spanish from its facts", () => {
    const warnings: ResultWarning[] = [
      {
        code: "no_better_than_chance",
        severity: "severe",
        title: "not better than chance",
        message: "On the test patients the AUC is 0.52, and its 95% interval (0.41 to 0.63) includes 0.5 …",
        facts: { auc: { value: 0.52, low: 0.41, high: 0.63 } },
      },
      {
        code: "internal_test_only",
        severity: "info",
        title: "internal test only",
        message: "These figures come from test patients of the same source, period and site as the training patients …",
        facts: { retrospective_studies: 0 },
      },
    ];
    const [chance, internal] = warningsIn(warnings, "es");
    expect(chance.title).toBe("no mejor que el azar");
    expect(chance.message).toMatch(/0,52/);
    expect(chance.message).not.toMatch(/the test patients/);
    expect(internal.title).toBe("solo validación interna");
    expect(internal.message).toMatch(/^Estas cifras proceden de pacientes de prueba/);
    expect(internal.message).not.toMatch(/These figures/);
    // English is the warnings as computed; a warning without facts keeps its English message.
    expect(warningsIn(warnings, "en").map((w) => w.message)).toEqual(warnings.map((w) => w.message));
    expect(warningsIn(warnings, "es").every((w) => !("facts" in w))).toBe(true);
    expect(warningsIn([{ ...warnings[0], facts: undefined }], "es")[0].message).toBe(warnings[0].message);
  });

  it("says a running experiment's keyed progress in Spanish; one stored without a key keeps its English", () => {
    const progress = {
      fraction: 0.4,
      stage: "preparing",
      message: "trying input sizes 160, 224 px",
      key: "trying_input_sizes",
      params: { sizes: "160, 224" },
      updated_at: "2026-11-29T18:00:00.000Z",
    };
    expect(progressIn(progress, "es")).toEqual({ ...progress, message: "probando tamaños de entrada de 160, 224 px" });
    expect(progressIn(progress, "en")).toBe(progress);
    const old = { fraction: 0.1, stage: "preparing", message: "reading the table", updated_at: progress.updated_at };
    expect(progressIn(old, "es")).toBe(old);
    expect(progressIn(null, "es")).toBeNull();
  });
});
