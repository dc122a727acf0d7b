import { describe, expect, it } from "vitest";
import type { ColumnInfo } from "../../web/src/api/types";
import {
  checkRequest,
  checkValidateBody,
  EMPTY_FORM,
  toRequest,
  toValidateBody,
  withHidden,
  type ExperimentFormValues,
} from "../../web/src/lib/experiment-form";

// The New experiment form's request, checked with the server's own schema (src/experiments/request-rules.ts)
// before it is sent: a column in two roles never leaves the page.

const col = (name: string, type: ColumnInfo["type"] = "numeric"): ColumnInfo => ({ name, type, examples: [], missing: 0 });
const columns = [
  col("id_paciente", "categorical"),
  col("diagnóstico", "categorical"),
  col("edad"),
  col("glucosa"),
  col("parte", "categorical"),
];
const ctx = { zip_gcloud: "u1/tabla.zip", columns, user_id: "u1", source: null };
const form = (over: Partial<ExperimentFormValues>): ExperimentFormValues => ({
  ...EMPTY_FORM,
  experiment_id: "4",
  label_cols: ["diagnóstico"],
  data_cols: ["edad", "glucosa"],
  ...over,
});

describe("new-experiment form: the request and its check", () => {
  it("a proposed form is a request the server's schema accepts", () => {
    const r = toRequest(form({ time_budget_s: "60", name: "  Cohorte  " }), ctx);
    expect(r).toMatchObject({
      label_cols: ["diagnóstico"],
      data_cols: ["edad", "glucosa"],
      experiment_id: 4,
      time_budget_s: 60,
      name: "Cohorte",
    });
    expect(checkRequest(r)).toEqual([]);
    expect(checkValidateBody(toValidateBody(r))).toEqual([]);
  });

  it("a data column ticked as a label leaves the data columns; the split column leaves labels and data", () => {
    const r = toRequest(form({ label_cols: ["diagnóstico", "edad"], split_col: "glucosa", data_cols: ["edad", "glucosa", "parte"] }), ctx);
    expect(r).toMatchObject({ label_cols: ["diagnóstico", "edad"], data_cols: ["parte"], split_col: "glucosa" });
    expect(checkRequest(r)).toEqual([]);
  });

  it("a conflicting request is refused by the shared rules, each with its catalog key and column", () => {
    const conflicting = { ...toRequest(form({}), ctx), label_cols: ["edad"], split_col: "glucosa" };
    expect(checkRequest(conflicting)).toEqual([
      { field: "data_cols", key: "new.rules.label_is_data", values: { column: "edad" } },
      { field: "split_col", key: "new.rules.split_is_data", values: { column: "glucosa" } },
    ]);
    const vision = toRequest(form({ task: "vision", images_col: "diagnóstico" }), ctx);
    // The label column chosen as the image path is dropped from the labels, so the request has none: refused.
    expect(vision.label_cols).toEqual([]);
    expect(checkRequest(vision)).toEqual([{ field: "label_cols", key: "new.invalid.label_cols", values: {} }]);
  });

  it("no label, no data column or no experiment number: refused with a sentence per field", () => {
    const problems = checkRequest(toRequest(form({ label_cols: [], experiment_id: "" }), ctx));
    expect(problems.map((p) => p.key).sort()).toEqual(["new.invalid.experiment_id", "new.invalid.label_cols"]);
    // The cross-field rules run once every field is well formed (zod's order), as on the server.
    expect(checkRequest(toRequest(form({ data_cols: [] }), ctx))).toEqual([
      { field: "data_cols", key: "new.rules.data_required", values: {} },
    ]);
  });

  it("a checklist keeps what it hides for now, in the CSV's order", () => {
    const offered = [col("glucosa"), col("parte")];
    expect(withHidden(["parte"], ["edad", "glucosa"], offered, columns)).toEqual(["edad", "parte"]);
    expect(withHidden(["glucosa"], ["perimetro"], offered, columns)).toEqual(["glucosa", "perimetro"]);
  });
});
