import { describe, expect, it } from "vitest";
import { recognise } from "../../src/chat/builtin/intents.js";
import { readDocs } from "../../src/chat/docs.js";
import { parseGlossary } from "../../src/chat/glossary.js";

// The dashboard's chat panel sends the experiment on screen (experiment_id): "this model's AUC" there means that
// experiment's number, in English or Spanish; asking what a metric *means* still gets the definition.

const glossary = parseGlossary(readDocs());
const r = (m: string, experimentId?: number) => recognise(m, glossary, { experimentId });

describe("builtin chat: the experiment open in the dashboard", () => {
  it("'this model's AUC' on an experiment's page is that experiment's AUC", () => {
    expect(r("what is this model's AUC?", 42)).toMatchObject({ kind: "experiment_status", experimentId: 42, metric: "auc" });
    expect(r("¿qué AUC tiene este modelo?", 42)).toMatchObject({ kind: "experiment_status", experimentId: 42, metric: "auc" });
    expect(r("¿cuál es su AUC?", 42)).toMatchObject({ kind: "experiment_status", experimentId: 42, metric: "auc" });
  });

  it("a definition is still a definition, and without an open experiment nothing changes", () => {
    expect(r("what does this AUC mean?", 42)).toEqual({ kind: "explain_metric", metric: "auc" });
    expect(r("what is this model's AUC?")).toEqual({ kind: "explain_metric", metric: "auc" });
    // "esta" inside a word ("estadística") points at nothing.
    expect(r("what is AUC in estadística?", 42)).toEqual({ kind: "explain_metric", metric: "auc" });
  });
});
